package imagetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/image"
)

// Kit is what the suite needs of a state type and of the stores under
// test.
type Kit[T any] struct {
	// Open returns a new store, holding what a new store of the kind
	// holds. Closing it at the end of the test (t.Cleanup) is Open's to
	// arrange.
	Open func(t *testing.T) image.Store[T]
	// Reopen, for a durable store, closes s and returns a store over what
	// s kept, as the next start of a process would open it. Nil for a
	// store that keeps nothing past its end.
	Reopen func(t *testing.T, s image.Store[T]) image.Store[T]
	// New returns what a new store holds.
	New func() *T
	// Seq returns a state's sequence number.
	Seq func(*T) uint64
	// Next returns the state one write makes of base, at Seq(base)+1: the
	// i-th of the suite's writes, each different from the others, as the
	// owner of the state would commit it (a store that keeps rows reads
	// what it changes from it).
	Next func(t *testing.T, base *T, i int) *T
	// Dump shows what a state holds, Seq aside, so that two states
	// compare by their sequence numbers and their dumps.
	Dump func(*T) string
	// Closed is what a closed store's calls fail with. Nil skips the test
	// of closed stores: the stores of the kind are not closed apart from
	// what holds them.
	Closed error
}

// Run runs the suite on the stores k opens.
func Run[T any](t *testing.T, k Kit[T]) {
	ctx := context.Background()

	t.Run("a new store holds the new state at seq 0", func(t *testing.T) {
		st := k.load(t, k.Open(t))
		if k.Seq(st) != 0 || !k.same(st, k.New()) {
			t.Errorf("a new store holds\n%s\nwant\n%s", k.show(st), k.show(k.New()))
		}
	})

	t.Run("what is committed loads back", func(t *testing.T) {
		s := k.Open(t)
		st := k.load(t, s)
		for i := range 4 {
			st = k.commit(t, s, st, i)
			if got := k.load(t, s); !k.same(got, st) {
				t.Fatalf("after commit %d the store holds\n%s\nwant\n%s", i, k.show(got), k.show(st))
			}
		}
		if k.Reopen == nil {
			return
		}
		re := k.Reopen(t, s)
		got := k.load(t, re)
		if !k.same(got, st) {
			t.Errorf("the reopened store holds\n%s\nwant\n%s", k.show(got), k.show(st))
		}
		// The store carries on from where it was.
		next := k.commit(t, re, got, 4)
		if again := k.load(t, re); !k.same(again, next) {
			t.Errorf("after a commit on the reopened store it holds\n%s\nwant\n%s", k.show(again), k.show(next))
		}
	})

	t.Run("a commit on a stale base fails and changes nothing", func(t *testing.T) {
		s := k.Open(t)
		first := k.load(t, s)
		cur := k.commit(t, s, first, 0)
		ahead := cur
		for i := range 4 {
			ahead = k.Next(t, ahead, 10+i) // at Seq(cur)+4
		}
		skip := k.Next(t, k.Next(t, cur, 20), 21)
		for _, c := range []struct {
			what string
			base uint64
			next *T
		}{
			{"another writer's view", k.Seq(first), k.Next(t, first, 1)},
			{"a base the store never had", k.Seq(ahead), k.Next(t, ahead, 2)},
			{"a state that skips a seq", k.Seq(cur), skip},
		} {
			if err := s.Commit(ctx, c.base, c.next); !errors.Is(err, image.ErrStale) {
				t.Errorf("%s: commit on base %d of a store at %d: %v, want ErrStale", c.what, c.base, k.Seq(cur), err)
			}
		}
		if got := k.load(t, s); !k.same(got, cur) {
			t.Errorf("after refused commits the store holds\n%s\nwant\n%s", k.show(got), k.show(cur))
		}
	})

	t.Run("of commits racing on one base exactly one wins", func(t *testing.T) {
		s := k.Open(t)
		base := k.load(t, s)
		const writers = 8
		nexts := make([]*T, writers)
		for i := range nexts {
			nexts[i] = k.Next(t, base, i)
		}
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i, next := range nexts {
			wg.Go(func() { errs[i] = s.Commit(ctx, k.Seq(base), next) })
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Errorf("commits %d and %d on one base both succeeded", won, i)
			case err == nil:
				won = i
			case !errors.Is(err, image.ErrStale):
				t.Errorf("a losing commit failed with %v, want ErrStale", err)
			}
		}
		if won < 0 {
			t.Fatal("no commit on the base succeeded")
		}
		if got := k.load(t, s); !k.same(got, nexts[won]) {
			t.Errorf("the store holds\n%s\nwant the winner's\n%s", k.show(got), k.show(nexts[won]))
		}
	})

	t.Run("a cancelled context commits nothing", func(t *testing.T) {
		s := k.Open(t)
		before := k.load(t, s)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Load(cctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Load with a cancelled context: %v, want context.Canceled", err)
		}
		if err := s.Commit(cctx, k.Seq(before), k.Next(t, before, 0)); !errors.Is(err, context.Canceled) {
			t.Errorf("Commit with a cancelled context: %v, want context.Canceled", err)
		}
		if got := k.load(t, s); !k.same(got, before) {
			t.Errorf("a cancelled commit changed the store to\n%s", k.show(got))
		}
	})

	t.Run("a closed store refuses every call", func(t *testing.T) {
		s := k.Open(t)
		c, ok := s.(io.Closer)
		if !ok || k.Closed == nil {
			t.Skipf("%T is not closed on its own", s)
		}
		before := k.load(t, s)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load(ctx); !errors.Is(err, k.Closed) {
			t.Errorf("Load after Close: %v, want %v", err, k.Closed)
		}
		if err := s.Commit(ctx, k.Seq(before), k.Next(t, before, 0)); !errors.Is(err, k.Closed) {
			t.Errorf("Commit after Close: %v, want %v", err, k.Closed)
		}
		if err := c.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// Propagation is how soon a commit through one handle of a shared store
// must reach the subscribers of another: the promise a store of several
// replicas makes.
const Propagation = time.Second

// RunShared runs the suite of a store that several writers share on the
// two handles open returns: two handles on one new store (two connection
// pools, as two replicas have), whose closing open arranges.
func RunShared[T any](t *testing.T, k Kit[T], open func(t *testing.T) (a, b image.Notifier[T])) {
	ctx := context.Background()

	t.Run("commits through one handle reach the other's subscriber in order", func(t *testing.T) {
		a, b := open(t)
		got := make(chan *T, 64)
		cancel := b.Subscribe(func(st *T) { got <- st })
		st := k.load(t, a)
		for i := range 3 {
			st = k.commit(t, a, st, i)
		}
		last := uint64(0)
		for {
			r := receive(t, got)
			if k.Seq(r) < last {
				t.Fatalf("the subscriber was given seq %d after %d", k.Seq(r), last)
			}
			last = k.Seq(r)
			if last == k.Seq(st) {
				if !k.same(r, st) {
					t.Errorf("the subscriber was given\n%s\nwant\n%s", k.show(r), k.show(st))
				}
				break
			}
		}
		if l := k.load(t, b); !k.same(l, st) {
			t.Errorf("the other handle loads\n%s\nwant\n%s", k.show(l), k.show(st))
		}
		cancel()
		k.commit(t, a, st, 3)
		select {
		case r := <-got:
			if k.Seq(r) > k.Seq(st) {
				t.Errorf("a cancelled subscriber was given seq %d", k.Seq(r))
			}
		case <-time.After(3 * Propagation / 10):
		}
	})

	t.Run("a commit through one handle makes the other's on the same base stale", func(t *testing.T) {
		a, b := open(t)
		base := k.load(t, b)
		first := k.commit(t, a, k.load(t, a), 0)
		if err := b.Commit(ctx, k.Seq(base), k.Next(t, base, 1)); !errors.Is(err, image.ErrStale) {
			t.Fatalf("a commit on a base the other handle moved on from: %v, want ErrStale", err)
		}
		for _, s := range []image.Store[T]{a, b} {
			if got := k.load(t, s); !k.same(got, first) {
				t.Errorf("after the stale commit the store holds\n%s\nwant\n%s", k.show(got), k.show(first))
			}
		}
	})
}

// receive returns the next state fn was given, failing after Propagation.
func receive[T any](t *testing.T, got <-chan *T) *T {
	t.Helper()
	select {
	case st := <-got:
		return st
	case <-time.After(Propagation):
		t.Fatal("no state reached the other handle's subscriber within", Propagation)
		return nil
	}
}

// same reports whether a and b are at one sequence number and hold the
// same.
func (k Kit[T]) same(a, b *T) bool { return k.Seq(a) == k.Seq(b) && k.Dump(a) == k.Dump(b) }

// show is st for a message.
func (k Kit[T]) show(st *T) string { return fmt.Sprintf("seq %d: %s", k.Seq(st), k.Dump(st)) }

func (k Kit[T]) load(t *testing.T, s image.Store[T]) *T {
	t.Helper()
	st, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// commit commits the i-th write on cur and returns the state it made.
func (k Kit[T]) commit(t *testing.T, s image.Store[T], cur *T, i int) *T {
	t.Helper()
	next := k.Next(t, cur, i)
	if err := s.Commit(context.Background(), k.Seq(cur), next); err != nil {
		t.Fatal(fmt.Errorf("commit %d on base %d: %w", i, k.Seq(cur), err))
	}
	return next
}
