package scoring

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// shadows runs shadow executions on a few long-lived workers, at most one
// a processor: a shadow costs the champion a channel send, not a
// goroutine and a runtime timer of its own. Its deadline is kept by one
// watchdog that looks at the running shadows every watchEvery, so a
// shadow may overrun its deadline by that much before its context ends.
// Workers and the watchdog stop after idle without work, and start again
// with the next shadow.
type shadows struct {
	tasks chan shadowTask // buffered: as many as there are workers

	mu      sync.Mutex
	workers []*shadowWorker // running
	max     int
}

// shadowTask is one shadow execution: run it under ctx.
type shadowTask struct {
	run     func(ctx context.Context)
	timeout time.Duration
}

// shadowWorker runs tasks one at a time; cur is the context of the one it
// runs, for the watchdog.
type shadowWorker struct {
	cur atomic.Pointer[shadowContext]
}

// watchEvery is how often the watchdog ends shadows past their deadline;
// idle is how long workers wait for a task before they stop.
const (
	watchEvery = 50 * time.Millisecond
	idle       = 30 * time.Second
)

func newShadows(max int) *shadows {
	return &shadows{tasks: make(chan shadowTask, max), max: max}
}

// offer hands t to a worker, starting one if fewer than max run; false
// when every worker is busy and as many tasks wait.
func (s *shadows) offer(t shadowTask) bool {
	select {
	case s.tasks <- t:
	default:
		return false
	}
	s.mu.Lock()
	if len(s.workers) < s.max {
		w := &shadowWorker{}
		s.workers = append(s.workers, w)
		if len(s.workers) == 1 {
			go s.watch()
		}
		go s.work(w)
	}
	s.mu.Unlock()
	return true
}

// work runs tasks until none comes for idle.
func (s *shadows) work(w *shadowWorker) {
	timer := time.NewTimer(idle)
	defer timer.Stop()
	for {
		select {
		case t := <-s.tasks:
			ctx := &shadowContext{deadline: time.Now().Add(t.timeout), done: make(chan struct{})}
			w.cur.Store(ctx)
			t.run(ctx)
			w.cur.Store(nil)
			ctx.end(context.Canceled)
			timer.Reset(idle) // Go 1.23 timers: no stale tick to drain
		case <-timer.C:
			s.mu.Lock()
			if len(s.tasks) > 0 { // a task came as the timer fired
				s.mu.Unlock()
				timer.Reset(idle)
				continue
			}
			for i, o := range s.workers {
				if o == w {
					s.workers = append(s.workers[:i], s.workers[i+1:]...)
					break
				}
			}
			s.mu.Unlock()
			return
		}
	}
}

// watch ends the shadows past their deadline, until no worker runs.
func (s *shadows) watch() {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for now := range t.C {
		s.mu.Lock()
		if len(s.workers) == 0 {
			s.mu.Unlock()
			return
		}
		for _, w := range s.workers {
			if c := w.cur.Load(); c != nil && now.After(c.deadline) {
				c.end(context.DeadlineExceeded)
			}
		}
		s.mu.Unlock()
	}
}

// shadowContext is a shadow's context: a deadline the watchdog keeps,
// and no values.
type shadowContext struct {
	deadline time.Time
	done     chan struct{}
	once     sync.Once
	err      atomic.Pointer[error]
}

func (c *shadowContext) end(err error) {
	c.once.Do(func() {
		c.err.Store(&err)
		close(c.done)
	})
}

func (c *shadowContext) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *shadowContext) Done() <-chan struct{}       { return c.done }
func (c *shadowContext) Value(any) any               { return nil }
func (c *shadowContext) Err() error {
	if e := c.err.Load(); e != nil {
		return *e
	}
	return nil
}

var _ context.Context = (*shadowContext)(nil)
