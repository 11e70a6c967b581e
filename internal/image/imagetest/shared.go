package imagetest

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/scorehub/scorehub/internal/image"
)

// Shared is one state in memory that several [Handle]s share, as replicas
// share a database: each handle commits only on the stored state, and
// every commit is told to the subscribers of every handle, in the order of
// the commits. It is safe for concurrent use.
type Shared[T any] struct {
	mem    *image.Mem[T]
	closed error // what a closed handle's calls fail with

	mu   sync.Mutex // serialises commits with their notifications; guards subs and next
	subs map[int]func(*T)
	next int
}

// NewShared returns a shared store holding initial. cfg.Closed is what a
// closed handle's calls fail with.
func NewShared[T any](initial *T, cfg image.MemConfig[T]) *Shared[T] {
	return &Shared[T]{mem: image.NewMem(initial, cfg), closed: cfg.Closed, subs: map[int]func(*T){}}
}

// Handle returns a new handle on s: one replica's store.
func (s *Shared[T]) Handle() *Handle[T] { return &Handle[T]{s: s} }

// Handle is one replica's store over a [Shared] state. It is safe for
// concurrent use.
type Handle[T any] struct {
	s      *Shared[T]
	quiet  atomic.Bool
	closed atomic.Bool
}

var _ image.Notifier[struct{}] = (*Handle[struct{}])(nil)

// Quiet has h's commits told to no one while quiet is set, as those of a
// replica whose notifications were lost.
func (h *Handle[T]) Quiet(quiet bool) { h.quiet.Store(quiet) }

// Load implements [image.Store].
func (h *Handle[T]) Load(ctx context.Context) (*T, error) {
	if h.closed.Load() {
		return nil, h.s.closed
	}
	return h.s.mem.Load(ctx)
}

// Commit implements [image.Store].
func (h *Handle[T]) Commit(ctx context.Context, base uint64, next *T) error {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if h.closed.Load() {
		return h.s.closed
	}
	if err := h.s.mem.Commit(ctx, base, next); err != nil {
		return err
	}
	if !h.quiet.Load() {
		for _, fn := range h.s.subs {
			fn(next)
		}
	}
	return nil
}

// Subscribe implements [image.Notifier].
func (h *Handle[T]) Subscribe(fn func(*T)) (cancel func()) {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	id := h.s.next
	h.s.next++
	h.s.subs[id] = fn
	return func() {
		h.s.mu.Lock()
		defer h.s.mu.Unlock()
		delete(h.s.subs, id)
	}
}

// Close makes h's later calls fail; the shared state and the other handles
// go on.
func (h *Handle[T]) Close() error {
	h.closed.Store(true)
	return nil
}
