package scoring

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/scorehub/scorehub/registry"
)

// Queues runs executions on the execution queues a [registry.Registry]
// defines: at most MaxConcurrent at once per queue, at most MaxWaiting
// waiting for a slot, first come first served. A queue's limits are read
// from the registry's current snapshot whenever an execution arrives, and
// when one ends while others wait, so a changed definition applies from
// then on; running executions are never interrupted by it. Scoring
// requests and any other work that should share the limits (a jobs
// runner) acquire slots from the same Queues. The executions record what
// endpoints' challengers did in the Queues' [Challenges].
//
// Queues is safe for concurrent use.
type Queues struct {
	reg        *registry.Registry
	challenges *Challenges

	mu   sync.Mutex                        // serializes changes to live
	live atomic.Pointer[map[string]*queue] // read without mu; replaced whole
}

// QueueStats are the live figures of one queue. Every execution that
// arrives ends up in exactly one of Completed, Failed, Rejected, TimedOut
// and Cancelled; until then it is Running or Waiting. The figures are read
// one at a time while executions go on, so one that ends as they are read
// may show in two of them, or in none, for that read.
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

// queue is the live state of one queue. Every execution of a busy server
// passes through its queue, on every core: an arrival that finds a free
// slot and nobody waiting takes it with one compare-and-swap on state,
// and a release with nobody waiting is one atomic add, so that the common
// case shares one cache line between cores and takes no lock. The
// waiting list, and slots handed to waiters, go through mu.
type queue struct {
	// state is the number running in its low 32 bits and the number
	// waiting above them; gone is set, only while both are 0, once the
	// queue is dropped from Queues.live, and then never cleared.
	state atomic.Uint64
	// The counters of QueueStats.
	completed, failed, rejected, timedOut, cancelled atomic.Uint64
	def                                              atomic.Pointer[registry.Queue] // the definition last read

	mu      sync.Mutex // guards waiters and head, and grants
	waiters []*waiter  // first come first served; waiters[head:] are waiting, as many as state says
	head    int
}

const (
	oneWaiting = 1 << 32 // one waiter in queue.state
	gone       = 1 << 63 // queue.state of a queue dropped from Queues.live
)

func runningOf(state uint64) int { return int(uint32(state)) }
func waitingOf(state uint64) int { return int(state >> 32 & (1<<31 - 1)) }

type waiter struct {
	ready   chan struct{} // closed when granted
	granted bool          // guarded by queue.mu
}

// NewQueues returns the queues of reg.
func NewQueues(reg *registry.Registry) (*Queues, error) {
	if reg == nil {
		return nil, errors.New("scoring: NewQueues needs a registry")
	}
	qs := &Queues{reg: reg, challenges: newChallenges(defaultShadowBudget())}
	qs.live.Store(new(map[string]*queue))
	return qs, nil
}

// Challenges returns the figures of the endpoints' champions and
// challengers that executions on q record.
func (q *Queues) Challenges() *Challenges { return q.challenges }

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
	limit := slots(def)
	for {
		q := qs.queue(name, def)
		q.note(def)
		if err := ended(ctx, req); err != nil {
			q.count(err)
			return fmt.Errorf("scoring: queue %q: %w", name, err)
		}
		st, ok := q.take(limit)
		if ok {
			s.qs, s.name, s.q = qs, name, q
			return nil
		}
		if st&gone != 0 {
			continue // dropped as this arrived: the next lookup finds it anew
		}
		w, err := q.enqueue(def, limit)
		switch {
		case errors.Is(err, errGone):
			continue
		case err != nil:
			return fmt.Errorf("scoring: queue %q (%d waiting): %w", name, def.MaxWaiting, err)
		case w == nil: // a slot was free after all
			s.qs, s.name, s.q = qs, name, q
			return nil
		}
		return qs.wait(ctx, req, name, q, w, s)
	}
}

// errGone is enqueue's answer for a queue dropped from Queues.live.
var errGone = errors.New("scoring: queue dropped")

// enqueue puts an arrival on q's waiting list, or takes a slot for it
// when one is free and nobody waits (w is nil then), or refuses it when
// the list is full.
func (q *queue) enqueue(def registry.Queue, limit int) (w *waiter, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.state.Load()&gone != 0 {
		return nil, errGone
	}
	q.grantLocked(limit) // the limits may have grown
	st, ok := q.take(limit)
	switch {
	case ok:
		return nil, nil
	case waitingOf(st) >= def.MaxWaiting:
		q.rejected.Add(1)
		return nil, ErrQueueFull
	}
	w = &waiter{ready: make(chan struct{})}
	q.waiters = append(q.waiters, w)
	q.state.Add(oneWaiting)
	// A slot freed since the look above, by a release that saw nobody
	// waiting, goes to the first waiter now.
	q.grantLocked(limit)
	return w, nil
}

// take takes a slot of q when one is free by limit, nobody waits and q is
// not gone, and reports whether it did, with the state it found.
func (q *queue) take(limit int) (uint64, bool) {
	for {
		st := q.state.Load()
		if st&gone != 0 || waitingOf(st) > 0 || runningOf(st) >= limit {
			return st, false
		}
		if q.state.CompareAndSwap(st, st+1) {
			return st, true
		}
	}
}

// wait waits for w's slot on q until ctx or req ends.
func (qs *Queues) wait(ctx, req context.Context, name string, q *queue, w *waiter, s *Slot) error {
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
	q.mu.Lock()
	if w.granted {
		// The slot came as ctx ended: hand it on.
		q.state.Add(^uint64(0))
		q.grantLocked(qs.limit(name, q))
	} else {
		q.remove(w)
		q.state.Add(^uint64(oneWaiting - 1)) // one waiting less
	}
	q.mu.Unlock()
	err := ended(ctx, req)
	q.count(err)
	return fmt.Errorf("scoring: queue %q: waiting: %w", name, err)
}

// queue returns the live state of the queue name, defined as def, making
// it if there is none. One being dropped is waited for: drop holds qs.mu
// from marking it gone until the map is without it.
func (qs *Queues) queue(name string, def registry.Queue) *queue {
	if q := (*qs.live.Load())[name]; q != nil && q.state.Load()&gone == 0 {
		return q
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	old := *qs.live.Load()
	if q := old[name]; q != nil {
		return q
	}
	q, d := new(queue), def // a copy, so that def stays off the heap
	q.def.Store(&d)
	next := make(map[string]*queue, len(old)+1)
	maps.Copy(next, old)
	next[name] = q
	qs.live.Store(&next)
	return q
}

// note keeps def as the definition last read, for the figures of a queue
// deleted while it has work. It writes only when the definition changed.
func (q *queue) note(def registry.Queue) {
	if p := q.def.Load(); p.Revision != def.Revision || p.MaxConcurrent != def.MaxConcurrent || p.MaxWaiting != def.MaxWaiting {
		d := def
		q.def.Store(&d)
	}
}

// limit is the most executions the queue name, whose state is q, may run
// at once: by its current definition, or the last one read when it is no
// longer defined.
func (qs *Queues) limit(name string, q *queue) int {
	def, ok := qs.reg.Snapshot().State().Queue(name)
	if ok {
		q.note(def)
	} else {
		def = *q.def.Load()
	}
	return slots(def)
}

// slots is how many executions a queue defined as def runs at once. Both
// counts in queue.state have room for 2^31, far more than goroutines a
// process can hold.
func slots(def registry.Queue) int { return min(max(def.MaxConcurrent, 1), 1<<31-1) }

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
	q := s.q
	if err == nil {
		q.completed.Add(1)
	} else if !q.count(err) {
		q.failed.Add(1)
	}
	if st := q.state.Add(^uint64(0)); waitingOf(st) > 0 {
		limit := s.qs.limit(s.name, q)
		q.mu.Lock()
		q.grantLocked(limit)
		q.mu.Unlock()
	}
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
	live := *qs.live.Load()
	out := make([]QueueStats, 0, len(defs))
	defined := make(map[string]bool, len(defs))
	for _, d := range defs {
		defined[d.Name] = true
		out = append(out, live[d.Name].stats(d))
	}
	var idle []string
	for name, q := range live {
		if defined[name] {
			continue
		}
		if q.state.Load()&^gone == 0 {
			idle = append(idle, name) // deleted and idle (or being dropped): forget it
			continue
		}
		out = append(out, q.stats(*q.def.Load()))
	}
	qs.drop(idle)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// drop forgets the queues named that are idle and no longer defined, so
// that creating and deleting queues does not grow Queues without bound.
func (qs *Queues) drop(names []string) {
	if len(names) == 0 {
		return
	}
	state := qs.reg.Snapshot().State()
	qs.mu.Lock()
	defer qs.mu.Unlock()
	old := *qs.live.Load()
	next := maps.Clone(old)
	for _, name := range names {
		q := old[name]
		if _, defined := state.Queue(name); defined || q == nil {
			continue
		}
		// Under q.mu no arrival is about to wait on it; one taking a slot
		// without the lock finds the state changed, and the next lookup
		// makes the queue anew.
		q.mu.Lock()
		if q.state.CompareAndSwap(0, gone) {
			delete(next, name)
		}
		q.mu.Unlock()
	}
	qs.live.Store(&next)
}

// Stat returns the figures of the queue name, and false when the registry
// does not define it and it has no executions.
func (qs *Queues) Stat(name string) (QueueStats, bool) {
	def, ok := qs.reg.Snapshot().State().Queue(name)
	q := (*qs.live.Load())[name]
	if !ok {
		if q == nil || q.state.Load()&^gone == 0 {
			return QueueStats{}, false
		}
		def = *q.def.Load()
	}
	return q.stats(def), true
}

// stats returns the figures of a queue defined as def whose state is q,
// nil for one that has not run anything.
func (q *queue) stats(def registry.Queue) QueueStats {
	s := QueueStats{Name: def.Name, MaxConcurrent: def.MaxConcurrent, MaxWaiting: def.MaxWaiting}
	if q == nil {
		return s
	}
	st := q.state.Load()
	if st&gone != 0 {
		return s // dropped since the map was read: a new state counts from zero
	}
	s.Running, s.Waiting = runningOf(st), waitingOf(st)
	s.Completed, s.Failed, s.Rejected = q.completed.Load(), q.failed.Load(), q.rejected.Load()
	s.TimedOut, s.Cancelled = q.timedOut.Load(), q.cancelled.Load()
	return s
}

// grantLocked hands free slots, by limit, to the first waiters. The
// caller holds q.mu.
func (q *queue) grantLocked(limit int) {
	for q.head < len(q.waiters) {
		st := q.state.Load()
		if runningOf(st) >= limit {
			break
		}
		if !q.state.CompareAndSwap(st, st+1-oneWaiting) {
			continue // an arrival or a release without the lock came first
		}
		w := q.waiters[q.head]
		q.waiters[q.head] = nil
		q.head++
		w.granted = true
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
		q.timedOut.Add(1)
	case errors.Is(err, context.Canceled):
		q.cancelled.Add(1)
	default:
		return false
	}
	return true
}
