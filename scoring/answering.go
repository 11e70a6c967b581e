package scoring

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// answering counts the processors that answers being worked out and
// shadows' slices take, so that shadows run on those answers leave idle.
// An answer takes its processors without waiting: one, or
// [wire.Parallelism] of them for a request large enough to be decoded,
// scored and encoded in parts. A shadow takes one for each slice of rows
// it scores, once fewer than the processors Go runs on are taken
// ([answering.acquire]), so a champion's answer waits for no more than
// the slices shadows have under way, and a shadow on a server whose
// processors answers keep busy skips its rows rather than slow them.
type answering struct {
	procs int64 // the processors; 0: GOMAXPROCS, as it is at the time
	taken atomic.Int64

	waiting atomic.Bool // a shadow waits for a processor
	mu      sync.Mutex  // guards idle
	idle    chan struct{}
}

// newAnswering returns an answering over procs processors, or over those
// Go runs on when procs is 0.
func newAnswering(procs int) *answering { return &answering{procs: int64(procs)} }

func (a *answering) limit() int64 {
	if a.procs > 0 {
		return a.procs
	}
	return int64(runtime.GOMAXPROCS(0))
}

// take records that an answer takes n processors, without waiting;
// give(n) returns them.
func (a *answering) take(n int64) { a.taken.Add(n) }

func (a *answering) give(n int64) {
	// Either this sees the waiting a shadow set before it looked at taken
	// again, or that look sees the processors given back here.
	if a.taken.Add(-n) < a.limit() && a.waiting.Load() {
		a.mu.Lock()
		if a.idle != nil {
			close(a.idle)
			a.idle = nil
			a.waiting.Store(false)
		}
		a.mu.Unlock()
	}
}

// acquire takes a processor for a shadow's slice once fewer are taken
// than there are, and returns nil; or returns ctx's error, taking none,
// once ctx is done first. The caller gives it back with give(1).
func (a *answering) acquire(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if a.tryTake() {
			return nil
		}
		a.mu.Lock()
		if a.idle == nil {
			a.idle = make(chan struct{})
		}
		idle := a.idle
		a.waiting.Store(true)
		a.mu.Unlock()
		if a.tryTake() {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// tryTake takes a processor if one is idle.
func (a *answering) tryTake() bool {
	limit := a.limit()
	for {
		n := a.taken.Load()
		if n >= limit {
			return false
		}
		if a.taken.CompareAndSwap(n, n+1) {
			return true
		}
	}
}
