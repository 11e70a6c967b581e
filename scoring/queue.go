package scoring

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/scorehub/scorehub/registry"
)

// Queues runs executions on the execution queues a [registry.Registry]
// defines: at most MaxConcurrent at once per queue, at most MaxWaiting
// waiting for a slot, first come first served. A queue's limits are read
// from the registry's current snapshot whenever an execution arrives or
// ends, so a changed definition applies from then on; running executions
// are never interrupted by it. Scoring requests and any other work that
// should share the limits (a jobs runner) acquire slots from the same
// Queues.
//
// Queues is safe for concurrent use.
type Queues struct {
	reg *registry.Registry

	mu   sync.Mutex // guards live and everything in it
	live map[string]*queue
}

// QueueStats are the live figures of one queue. Every execution that
// arrives ends up in exactly one of Completed, Failed, Rejected, TimedOut
// and Cancelled; until then it is Running or Waiting.
type QueueStats struct {
	Name string `json:"name"`
	// MaxConcurrent and MaxWaiting are the queue's current definition.
	MaxConcurrent int `json:"maxConcurrent"`
	MaxWaiting    int `json:"maxWaiting"`
	// Running executions hold a slot; Waiting ones wait for one.
	Running int `json:"running"`
	Waiting int `json:"waiting"`
	// Completed executions ran and succeeded.
	Completed uint64 `json:"completed"`
	// Failed executions ran and failed (an error, a panic, a bad result).
	Failed uint64 `json:"failed"`
	// Rejected executions found the waiting list full.
	Rejected uint64 `json:"rejected"`
	// TimedOut executions passed their deadline, waiting or running.
	TimedOut uint64 `json:"timedOut"`
	// Cancelled executions were abandoned by their caller (for a scoring
	// request, the client disconnected), waiting or running.
	Cancelled uint64 `json:"cancelled"`
}

// queue is the live state of one queue.
type queue struct {
	def     registry.Queue // the definition last read
	running int
	waiters []*waiter // first come first served; waiters[head:] are waiting
	head    int
	stats   QueueStats // the counters; Name, limits, Running and Waiting are filled in on read
}

type waiter struct {
	ready   chan struct{} // closed when granted
	granted bool
}

// NewQueues returns the queues of reg.
func NewQueues(reg *registry.Registry) (*Queues, error) {
	if reg == nil {
		return nil, errors.New("scoring: NewQueues needs a registry")
	}
	return &Queues{reg: reg, live: make(map[string]*queue)}, nil
}

// Registry returns the registry the queues were built over.
func (q *Queues) Registry() *registry.Registry { return q.reg }

// Slot is a place on a queue held by one execution. Release it exactly once
// when the execution ends; further calls do nothing. It is safe for
// concurrent use.
type Slot struct {
	qs       *Queues
	name     string
	q        *queue
	released atomic.Bool
}

// Acquire waits for a slot on the queue name, first come first served. It
// fails at once with [ErrQueueFull] when the waiting list is full, with
// [ErrNoQueue] when the registry does not define the queue, and with ctx's
// error when ctx ends first.
func (qs *Queues) Acquire(ctx context.Context, name string) (*Slot, error) {
	return qs.acquire(ctx, nil, name)
}

// acquire is Acquire for an execution whose context ctx is detached from
// the context of the request it serves, req (nil when there is none): it
// also stops waiting when req ends, with req's error.
func (qs *Queues) acquire(ctx, req context.Context, name string) (*Slot, error) {
	s := new(Slot)
	if err := qs.acquireInto(ctx, req, name, s); err != nil {
		return nil, err
	}
	return s, nil
}

// acquireInto is acquire into a Slot the caller provides, such as one that
// shares an allocation with the execution's context. s must be the zero
// Slot.
func (qs *Queues) acquireInto(ctx, req context.Context, name string, s *Slot) error {
	def, ok := qs.reg.Snapshot().State().Queue(name)
	if !ok {
		return fmt.Errorf("scoring: queue %q: %w", name, ErrNoQueue)
	}
	qs.mu.Lock()
	q := qs.live[name]
	if q == nil {
		q = &queue{}
		qs.live[name] = q
	}
	q.def = def
	q.grant() // the limits may have grown
	if err := ended(ctx, req); err != nil {
		q.count(err)
		qs.mu.Unlock()
		return fmt.Errorf("scoring: queue %q: %w", name, err)
	}
	if q.waiting() == 0 && q.running < q.maxConcurrent() {
		q.running++
		qs.mu.Unlock()
		s.qs, s.name, s.q = qs, name, q
		return nil
	}
	if q.waiting() >= def.MaxWaiting {
		q.stats.Rejected++
		qs.mu.Unlock()
		return fmt.Errorf("scoring: queue %q (%d waiting): %w", name, def.MaxWaiting, ErrQueueFull)
	}
	w := &waiter{ready: make(chan struct{})}
	q.waiters = append(q.waiters, w)
	qs.mu.Unlock()

	var reqDone <-chan struct{}
	if req != nil {
		reqDone = req.Done()
	}
	select {
	case <-w.ready:
		s.qs, s.name, s.q = qs, name, q
		return nil
	case <-ctx.Done():
	case <-reqDone:
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if w.granted {
		// The slot came as ctx ended: hand it on.
		q.running--
		q.grant()
	} else {
		q.remove(w)
	}
	err := ended(ctx, req)
	q.count(err)
	return fmt.Errorf("scoring: queue %q: waiting: %w", name, err)
}

// ended returns ctx's error, or else req's when req is not nil.
func ended(ctx, req context.Context) error {
	if err := ctx.Err(); err != nil || req == nil {
		return err
	}
	return req.Err()
}

// Release frees the slot and counts the execution by err: nil is completed,
// an error matching context.DeadlineExceeded timed out, one matching
// context.Canceled cancelled, any other failed.
func (s *Slot) Release(err error) {
	if !s.released.CompareAndSwap(false, true) {
		return
	}
	def, ok := s.qs.reg.Snapshot().State().Queue(s.name)
	s.qs.mu.Lock()
	defer s.qs.mu.Unlock()
	q := s.q
	if ok {
		q.def = def
	}
	q.running--
	if err == nil {
		q.stats.Completed++
	} else if !q.count(err) {
		q.stats.Failed++
	}
	q.grant()
}

// Run runs fn on a slot of the queue name and returns its error: Acquire,
// fn, Release(fn's error). A panic in fn releases the slot, counted as
// failed, and goes on.
func (qs *Queues) Run(ctx context.Context, name string, fn func(ctx context.Context) error) (err error) {
	slot, err := qs.Acquire(ctx, name)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			slot.Release(errors.New("scoring: panic"))
		}
	}()
	err = fn(ctx)
	done = true
	slot.Release(err)
	return err
}

// Stats returns the figures of every queue the registry defines, sorted by
// name, and of any queue no longer defined that still has executions.
func (qs *Queues) Stats() []QueueStats {
	defs := qs.reg.Snapshot().State().Queues()
	qs.mu.Lock()
	defer qs.mu.Unlock()
	out := make([]QueueStats, 0, len(defs))
	defined := make(map[string]bool, len(defs))
	for _, d := range defs {
		defined[d.Name] = true
		out = append(out, qs.statLocked(d))
	}
	for name, q := range qs.live {
		if defined[name] {
			continue
		}
		if q.running == 0 && q.waiting() == 0 {
			delete(qs.live, name) // deleted and idle: forget it
			continue
		}
		out = append(out, qs.statLocked(q.def))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Stat returns the figures of the queue name, and false when the registry
// does not define it and it has no executions.
func (qs *Queues) Stat(name string) (QueueStats, bool) {
	def, ok := qs.reg.Snapshot().State().Queue(name)
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if !ok {
		q := qs.live[name]
		if q == nil || (q.running == 0 && q.waiting() == 0) {
			return QueueStats{}, false
		}
		def = q.def
	}
	return qs.statLocked(def), true
}

func (qs *Queues) statLocked(def registry.Queue) QueueStats {
	s := QueueStats{Name: def.Name}
	if q := qs.live[def.Name]; q != nil {
		s = q.stats
		s.Running, s.Waiting = q.running, q.waiting()
	}
	s.Name, s.MaxConcurrent, s.MaxWaiting = def.Name, def.MaxConcurrent, def.MaxWaiting
	return s
}

func (q *queue) waiting() int { return len(q.waiters) - q.head }

func (q *queue) maxConcurrent() int { return max(q.def.MaxConcurrent, 1) }

// grant hands free slots to the first waiters.
func (q *queue) grant() {
	for q.waiting() > 0 && q.running < q.maxConcurrent() {
		w := q.waiters[q.head]
		q.waiters[q.head] = nil
		q.head++
		w.granted = true
		q.running++
		close(w.ready)
	}
	if q.head > 0 && q.head*2 >= len(q.waiters) {
		n := copy(q.waiters, q.waiters[q.head:])
		clear(q.waiters[n:])
		q.waiters, q.head = q.waiters[:n], 0
	}
}

func (q *queue) remove(w *waiter) {
	for i := q.head; i < len(q.waiters); i++ {
		if q.waiters[i] == w {
			copy(q.waiters[i:], q.waiters[i+1:])
			q.waiters[len(q.waiters)-1] = nil
			q.waiters = q.waiters[:len(q.waiters)-1]
			return
		}
	}
}

// count counts an execution that ended with a context error and reports
// whether err was one.
func (q *queue) count(err error) bool {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		q.stats.TimedOut++
	case errors.Is(err, context.Canceled):
		q.stats.Cancelled++
	default:
		return false
	}
	return true
}
