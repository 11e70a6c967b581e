package image

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// MaxAttempts bounds how often a [Writer] decides a write afresh after its
// commit met another writer's, before it fails with [ErrStale].
const MaxAttempts = 16

// WriterConfig configures [NewWriter]. T is the stored state, V what
// readers read of it: a view built once per state (an index, a decoded
// form, or the state itself).
type WriterConfig[T, V any] struct {
	// Store keeps the state. Required. A [Notifier] is followed.
	Store Store[T]
	// Seq returns a state's sequence number. Required.
	Seq func(*T) uint64
	// View builds what readers read of st; prev is the view published
	// before (the zero V for the first). An error leaves st unpublished:
	// a write that committed it fails with the error, and a state a
	// Notifier reported goes to Unusable.
	View func(st *T, prev V) (V, error)
	// Published, when set, is called after a view became the published
	// one.
	Published func(V)
	// Unusable, when set, is told of a state a Notifier reported whose
	// view failed; the published view stays, and the next good state
	// replaces it.
	Unusable func(st *T, err error)
	// Closed, when set, is what writes fail with after Close; when nil,
	// writes go on after Close, which then only stops following the
	// store.
	Closed error
	// RecheckUnchanged has a decision to change nothing decided again on
	// a newer stored state, as a refusal is (see [Writer.Write]): for an
	// owner whose answer to "nothing to do" is a client's answer too.
	RecheckUnchanged bool
	// ReadFailed prefixes the error of a load during a write or a refresh:
	// "registry: read store".
	ReadFailed string
}

// Writer is the one writer of a state image: it holds the state published
// to readers, with its view, and runs every write as decide, commit on the
// decided state's sequence number, decide again on what the store holds
// when another writer committed first, and publish. Over a [Notifier] it
// also publishes what other writers commit. Publication keeps order: a
// state no newer than the published one, however late it arrives, is
// ignored.
//
// A Writer is safe for concurrent use: writes are serialised, and View
// takes no lock.
type Writer[T, V any] struct {
	cfg    WriterConfig[T, V]
	shared bool // the store is a Notifier: other writers commit to it

	cur    atomic.Pointer[published[T, V]]
	mu     sync.Mutex // serialises writes; guards closed and cancel
	closed bool
	cancel func()
}

// published is a state and its view, published together.
type published[T, V any] struct {
	state *T
	view  V
}

// NewWriter returns a writer publishing what cfg.Store holds. Over a
// [Notifier] it subscribes first, so that no commit between the load and
// the subscription is missed; Close ends the subscription. It fails, and
// leaves no subscription, when the store cannot be loaded or the view of
// what it holds cannot be built.
func NewWriter[T, V any](ctx context.Context, cfg WriterConfig[T, V]) (*Writer[T, V], error) {
	w := &Writer[T, V]{cfg: cfg, cancel: func() {}}
	if n, ok := cfg.Store.(Notifier[T]); ok {
		w.shared = true
		w.cancel = n.Subscribe(w.follow)
	}
	if err := w.Refresh(ctx); err != nil {
		w.cancel()
		return nil, err
	}
	return w, nil
}

// View returns the published view.
func (w *Writer[T, V]) View() V { return w.cur.Load().view }

// State returns the published state.
func (w *Writer[T, V]) State() *T { return w.cur.Load().state }

// Shared reports whether the store is a [Notifier], which other writers
// commit to.
func (w *Writer[T, V]) Shared() bool { return w.shared }

// follow publishes a state the Notifier reports.
func (w *Writer[T, V]) follow(st *T) {
	if err := w.publish(st); err != nil && w.cfg.Unusable != nil {
		w.cfg.Unusable(st, err)
	}
}

// publish makes st the published state unless the published one is as
// new.
func (w *Writer[T, V]) publish(st *T) error {
	for {
		prev := w.cur.Load()
		var prevView V
		if prev != nil {
			if w.cfg.Seq(st) <= w.cfg.Seq(prev.state) {
				return nil
			}
			prevView = prev.view
		}
		v, err := w.cfg.View(st, prevView)
		if err != nil {
			return err
		}
		if w.cur.CompareAndSwap(prev, &published[T, V]{state: st, view: v}) {
			if w.cfg.Published != nil {
				w.cfg.Published(v)
			}
			return nil
		}
	}
}

// Write decides one write with decide, on the published view, and
// commits it; decide's state must be at the view's sequence number plus
// one, and nil means nothing to do. When another writer committed first
// (the store refused the commit with [ErrStale]), it loads the store,
// publishes what it holds and decides again, up to [MaxAttempts] times.
// Over a [Notifier], a refusal (decide's error) is also decided again,
// once, when the store holds a newer state than the one it came from, so
// that no replica refuses a write for a commit it has not been told of
// yet. The committed state is published before Write returns.
//
// decide runs holding the write lock: it sees every earlier write of
// this Writer, and no other write of it runs meanwhile.
func (w *Writer[T, V]) Write(ctx context.Context, decide func(cur V) (*T, error)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed && w.cfg.Closed != nil {
		return w.cfg.Closed
	}
	rechecked := false
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		cur := w.cur.Load()
		base := w.cfg.Seq(cur.state)
		next, err := decide(cur.view)
		if (err != nil || next == nil && w.cfg.RecheckUnchanged) && w.shared && !rechecked && ctx.Err() == nil {
			// The refusal may come from a state that misses another
			// writer's commit, not yet notified: a revision the client
			// read from another replica. Decide once more on what the
			// store holds.
			rechecked = true
			if w.refresh(ctx, base) {
				continue
			}
		}
		if err != nil || next == nil {
			return err
		}
		err = w.cfg.Store.Commit(ctx, base, next)
		if err == nil {
			return w.publish(next)
		}
		if !errors.Is(err, ErrStale) || attempt == MaxAttempts {
			return err
		}
		if err := backOff(ctx, attempt); err != nil {
			return err
		}
		if err := w.Refresh(ctx); err != nil {
			return err
		}
	}
}

// refresh loads the store, publishes what it holds if it is newer, and
// reports whether what is published now is newer than seq.
func (w *Writer[T, V]) refresh(ctx context.Context, seq uint64) bool {
	return w.Refresh(ctx) == nil && w.cfg.Seq(w.cur.Load().state) > seq
}

// Refresh loads the store, as a readiness check would, and publishes what
// it holds when that is newer.
func (w *Writer[T, V]) Refresh(ctx context.Context) error {
	st, err := w.cfg.Store.Load(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", w.cfg.ReadFailed, err)
	}
	return w.publish(st)
}

// Close stops following a [Notifier] store and, when WriterConfig.Closed
// is set, refuses later writes with it. It waits for a write in progress.
// The published view stays. Closing a closed Writer does nothing.
func (w *Writer[T, V]) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		w.cancel()
	}
}

// backOff waits a random time of up to a millisecond per attempt made, at
// most 8 ms, before a writer that lost a commit reads the store again:
// writers that met all retry at once otherwise, and the slowest of them
// (a replica whose loads take longest) can lose every round.
func backOff(ctx context.Context, attempt int) error {
	if attempt < 2 {
		return nil
	}
	t := time.NewTimer(rand.N(time.Duration(min(attempt, 8)) * time.Millisecond))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
