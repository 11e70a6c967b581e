package scoring_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/scoring"
)

// queueFixture returns fresh queues over a registry that defines the queue
// q next to DEFAULT.
func queueFixture(t testing.TB, q registry.Queue) (*fixture, *scoring.Queues) {
	t.Helper()
	f := newFixture(t, scoring.Config{})
	f.putQueue(t, q)
	qs, err := scoring.NewQueues(f.reg)
	if err != nil {
		t.Fatal(err)
	}
	return f, qs
}

func stat(t *testing.T, qs *scoring.Queues, name string) scoring.QueueStats {
	t.Helper()
	s, ok := qs.Stat(name)
	if !ok {
		t.Fatalf("no figures for queue %q", name)
	}
	return s
}

// acquireAsync starts Acquire in a goroutine; the channel receives its
// slot, or nil and the error.
func acquireAsync(ctx context.Context, qs *scoring.Queues, name string) <-chan *scoring.Slot {
	ch := make(chan *scoring.Slot, 1)
	go func() {
		s, _ := qs.Acquire(ctx, name)
		ch <- s
	}()
	return ch
}

// holders counts the executions holding a slot, and the most at once.
type holders struct{ now, peak atomic.Int32 }

func (h *holders) enter() {
	n := h.now.Add(1)
	for p := h.peak.Load(); n > p && !h.peak.CompareAndSwap(p, n); p = h.peak.Load() {
	}
}

func (h *holders) leave() { h.now.Add(-1) }

func TestQueuesFirstComeFirstServed(t *testing.T) {
	_, qs := queueFixture(t, registry.Queue{Name: "q", MaxConcurrent: 1, MaxWaiting: 10})
	ctx := context.Background()
	holder, err := qs.Acquire(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	a := acquireAsync(ctx, qs, "q")
	waitFor(t, "a to wait", func() bool { return stat(t, qs, "q").Waiting == 1 })
	b := acquireAsync(ctx, qs, "q")
	waitFor(t, "b to wait", func() bool { return stat(t, qs, "q").Waiting == 2 })

	holder.Release(nil)
	sa := <-a
	if sa == nil {
		t.Fatal("a got no slot")
	}
	if s := stat(t, qs, "q"); s.Running != 1 || s.Waiting != 1 {
		t.Errorf("after the first release: %+v, want b still waiting", s)
	}
	sa.Release(nil)
	sb := <-b
	if sb == nil {
		t.Fatal("b got no slot")
	}
	sb.Release(errors.New("boom"))
	sb.Release(nil) // a second release changes nothing

	want := scoring.QueueStats{Name: "q", MaxConcurrent: 1, MaxWaiting: 10, Completed: 2, Failed: 1}
	if diff := cmp.Diff(want, stat(t, qs, "q")); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
}

func TestQueuesFullAndContextEnds(t *testing.T) {
	_, qs := queueFixture(t, registry.Queue{Name: "q", MaxConcurrent: 1, MaxWaiting: 1})
	holder, err := qs.Acquire(context.Background(), "q")
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	waiting := acquireAsync(ctx, qs, "q")
	waitFor(t, "a waiter", func() bool { return stat(t, qs, "q").Waiting == 1 })
	if _, err := qs.Acquire(context.Background(), "q"); !errors.Is(err, scoring.ErrQueueFull) {
		t.Errorf("with the waiting list full: %v, want ErrQueueFull", err)
	}
	cancel()
	if s := <-waiting; s != nil {
		t.Error("a cancelled waiter got a slot")
	}

	tctx, tcancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer tcancel()
	if _, err := qs.Acquire(tctx, "q"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting past the deadline: %v", err)
	}
	holder.Release(context.DeadlineExceeded)

	want := scoring.QueueStats{Name: "q", MaxConcurrent: 1, MaxWaiting: 1, Rejected: 1, Cancelled: 1, TimedOut: 2}
	if diff := cmp.Diff(want, stat(t, qs, "q")); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
	// Nothing leaked: the slot is free again.
	s, err := qs.Acquire(context.Background(), "q")
	if err != nil {
		t.Fatal(err)
	}
	s.Release(nil)
}

func TestQueuesResizeLive(t *testing.T) {
	f, qs := queueFixture(t, registry.Queue{Name: "q", MaxConcurrent: 1, MaxWaiting: 5})
	ctx := context.Background()
	first, err := qs.Acquire(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	waiter := acquireAsync(ctx, qs, "q")
	waitFor(t, "a waiter", func() bool { return stat(t, qs, "q").Waiting == 1 })

	f.putQueue(t, registry.Queue{Name: "q", MaxConcurrent: 3, MaxWaiting: 0})
	if s := stat(t, qs, "q"); s.MaxConcurrent != 3 || s.MaxWaiting != 0 {
		t.Errorf("figures show %d/%d, want the new definition 3/0", s.MaxConcurrent, s.MaxWaiting)
	}
	// The next arrival applies the new limits: the waiter and it both run.
	third, err := qs.Acquire(ctx, "q")
	if err != nil {
		t.Fatalf("after growing the queue: %v", err)
	}
	second := <-waiter
	if second == nil {
		t.Fatal("the waiter got no slot after the queue grew")
	}

	f.putQueue(t, registry.Queue{Name: "q", MaxConcurrent: 1, MaxWaiting: 0})
	if _, err := qs.Acquire(ctx, "q"); !errors.Is(err, scoring.ErrQueueFull) {
		t.Errorf("after shrinking the queue: %v, want ErrQueueFull", err)
	}
	if s := stat(t, qs, "q"); s.Running != 3 {
		t.Errorf("running = %d after shrinking; running work must go on", s.Running)
	}
	for _, s := range []*scoring.Slot{first, second, third} {
		s.Release(nil)
	}
	if s := stat(t, qs, "q"); s.Running != 0 || s.Completed != 3 {
		t.Errorf("figures %+v", s)
	}
}

// TestQueuesRun runs 40 calls that each hold a slot a while on a queue of
// 3, in a synctest bubble, so that they pile up the same way every run.
func TestQueuesRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, qs := queueFixture(t, registry.Queue{Name: "q", MaxConcurrent: 3, MaxWaiting: 100})
		var held holders
		var wg sync.WaitGroup
		for range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := qs.Run(context.Background(), "q", func(context.Context) error {
					held.enter()
					time.Sleep(100 * time.Microsecond)
					held.leave()
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if p := held.peak.Load(); p != 3 {
			t.Errorf("%d ran at once on a queue of 3, want 3", p)
		}
		if s := stat(t, qs, "q"); s.Completed != 40 || s.Running != 0 || s.Waiting != 0 {
			t.Errorf("figures %+v", s)
		}

		func() {
			defer func() {
				if recover() == nil {
					t.Error("the panic did not go on")
				}
			}()
			qs.Run(context.Background(), "q", func(context.Context) error { panic("boom") })
		}()
		if s := stat(t, qs, "q"); s.Failed != 1 || s.Running != 0 {
			t.Errorf("after a panic: %+v, want one failed and the slot freed", s)
		}
		if err := qs.Run(context.Background(), "nope", func(context.Context) error { return nil }); !errors.Is(err, scoring.ErrNoQueue) {
			t.Errorf("unknown queue: %v", err)
		}
	})
}

func TestQueuesStats(t *testing.T) {
	f, qs := queueFixture(t, registry.Queue{Name: "used", MaxConcurrent: 2, MaxWaiting: 4})
	f.putQueue(t, registry.Queue{Name: "idle", MaxConcurrent: 5, MaxWaiting: 6})
	ctx := context.Background()
	for _, err := range []error{nil, nil, errors.New("x"), context.DeadlineExceeded, context.Canceled} {
		qs.Run(ctx, "used", func(context.Context) error { return err })
	}
	want := []scoring.QueueStats{
		{Name: "DEFAULT", MaxConcurrent: registry.DefaultMaxConcurrent, MaxWaiting: registry.DefaultMaxWaiting},
		{Name: "idle", MaxConcurrent: 5, MaxWaiting: 6},
		{Name: "used", MaxConcurrent: 2, MaxWaiting: 4, Completed: 2, Failed: 1, TimedOut: 1, Cancelled: 1},
	}
	if diff := cmp.Diff(want, qs.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
	if _, ok := qs.Stat("nope"); ok {
		t.Error("Stat of an undefined queue reports figures")
	}

	// A deleted queue that still runs work stays listed until it is done.
	slot, err := qs.Acquire(ctx, "idle")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.reg.DeleteQueue(ctx, "idle", registry.AnyRevision); err != nil {
		t.Fatal(err)
	}
	if s, ok := qs.Stat("idle"); !ok || s.Running != 1 {
		t.Errorf("deleted queue with work: %+v, %v", s, ok)
	}
	if n := len(qs.Stats()); n != 3 {
		t.Errorf("Stats lists %d queues, want 3 while the deleted one runs", n)
	}
	slot.Release(nil)
	if n := len(qs.Stats()); n != 2 {
		t.Errorf("Stats lists %d queues, want 2 once the deleted one is idle", n)
	}
}

// TestQueuesUnderContention has many executions arrive, run, give up
// waiting and leave at once, most of them taking a free slot without the
// queue's lock: at no time do more run than the queue allows, and every
// arrival is counted once.
func TestQueuesUnderContention(t *testing.T) {
	const limit, workers, rounds = 3, 8, 400
	_, qs := queueFixture(t, registry.Queue{Name: "q", MaxConcurrent: limit, MaxWaiting: 4})
	var held holders
	var ran, failed, refused, gaveUp atomic.Uint64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if (w+i)%5 == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(i%3)*time.Microsecond)
				}
				slot, err := qs.Acquire(ctx, "q")
				cancel()
				switch {
				case errors.Is(err, scoring.ErrQueueFull):
					refused.Add(1)
					continue
				case errors.Is(err, context.DeadlineExceeded):
					gaveUp.Add(1)
					continue
				case err != nil:
					t.Error(err)
					return
				}
				held.enter()
				if i%2 == 0 {
					runtime.Gosched()
				}
				held.leave()
				if i%7 == 0 {
					failed.Add(1)
					slot.Release(errors.New("boom"))
				} else {
					ran.Add(1)
					slot.Release(nil)
				}
			}
		})
	}
	wg.Wait()
	if p := held.peak.Load(); p > limit {
		t.Errorf("%d ran at once on a queue of %d", p, limit)
	}
	want := scoring.QueueStats{Name: "q", MaxConcurrent: limit, MaxWaiting: 4,
		Completed: ran.Load(), Failed: failed.Load(), Rejected: refused.Load(), TimedOut: gaveUp.Load()}
	if diff := cmp.Diff(want, stat(t, qs, "q")); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
	if total := want.Completed + want.Failed + want.Rejected + want.TimedOut; total != workers*rounds {
		t.Errorf("%d arrivals counted, want %d", total, workers*rounds)
	}
}

// TestQueuesDeletedWhileInUse deletes and defines a queue again and again
// while executions use it and figures are read, which forgets it each time
// it is idle: no execution is lost on a forgotten queue, and the limit
// holds throughout.
func TestQueuesDeletedWhileInUse(t *testing.T) {
	const limit = 2
	f, qs := queueFixture(t, registry.Queue{Name: "q", MaxConcurrent: limit, MaxWaiting: 100})
	ctx, stop := context.WithCancel(context.Background())
	var held holders
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				slot, err := qs.Acquire(context.Background(), "q")
				if errors.Is(err, scoring.ErrNoQueue) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				held.enter()
				runtime.Gosched()
				held.leave()
				slot.Release(nil)
			}
		})
	}
	wg.Go(func() {
		for ctx.Err() == nil {
			qs.Stats()
		}
	})
	for range 200 {
		if err := f.reg.DeleteQueue(context.Background(), "q", registry.AnyRevision); err != nil {
			t.Fatal(err)
		}
		runtime.Gosched()
		f.putQueue(t, registry.Queue{Name: "q", MaxConcurrent: limit, MaxWaiting: 100})
	}
	stop()
	wg.Wait()
	if p := held.peak.Load(); p > limit {
		t.Errorf("%d ran at once on a queue of %d", p, limit)
	}
	if s := stat(t, qs, "q"); s.Running != 0 || s.Waiting != 0 {
		t.Errorf("figures after every execution ended: %+v", s)
	}
	// Whatever object the queue's state lives in now, it has every slot.
	var slots []*scoring.Slot
	for range limit {
		s, err := qs.Acquire(context.Background(), "q")
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, s)
	}
	tctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := qs.Acquire(tctx, "q"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a slot past the limit: %v", err)
	}
	for _, s := range slots {
		s.Release(nil)
	}
}

func TestNewQueuesNeedsARegistry(t *testing.T) {
	if _, err := scoring.NewQueues(nil); err == nil {
		t.Error("NewQueues(nil) succeeded")
	}
}

// TestQueuesStatsWhileDropping reads the figures twice at once, again and
// again, right after a queue that ran is deleted: the read that does not
// drop it meets it being dropped, and must not list it either.
func TestQueuesStatsWhileDropping(t *testing.T) {
	f, qs := queueFixture(t, registry.Queue{Name: "x", MaxConcurrent: 1, MaxWaiting: 1})
	ctx := context.Background()
	for i := range 2000 {
		f.putQueue(t, registry.Queue{Name: "x", MaxConcurrent: 1, MaxWaiting: 1})
		s, err := qs.Acquire(ctx, "x")
		if err != nil {
			t.Fatal(err)
		}
		s.Release(nil)
		if err := f.reg.DeleteQueue(ctx, "x", registry.AnyRevision); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for _, st := range qs.Stats() {
					if st.Name == "x" {
						t.Errorf("round %d: the deleted, idle queue is listed: %+v", i, st)
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
	}
}

// BenchmarkQueuesRun is the queue's share of an execution, a slot taken
// and given back, from every core at once on a queue with room for all.
func BenchmarkQueuesRun(b *testing.B) {
	_, qs := queueFixture(b, registry.Queue{Name: "q", MaxConcurrent: 64, MaxWaiting: 64})
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s, err := qs.Acquire(ctx, "q")
			if err != nil {
				b.Error(err)
				return
			}
			s.Release(nil)
		}
	})
}
