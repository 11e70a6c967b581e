package scoring_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/scoring"
)

// queueFixture returns fresh queues over a registry that defines the queue
// q next to DEFAULT.
func queueFixture(t *testing.T, q registry.Queue) (*fixture, *scoring.Queues) {
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

func TestQueuesRun(t *testing.T) {
	_, qs := queueFixture(t, registry.Queue{Name: "q", MaxConcurrent: 3, MaxWaiting: 100})
	var running, peak atomic.Int32
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := qs.Run(context.Background(), "q", func(context.Context) error {
				n := running.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(100 * time.Microsecond)
				running.Add(-1)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > 3 {
		t.Errorf("%d ran at once on a queue of 3", p)
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

func TestNewQueuesNeedsARegistry(t *testing.T) {
	if _, err := scoring.NewQueues(nil); err == nil {
		t.Error("NewQueues(nil) succeeded")
	}
}
