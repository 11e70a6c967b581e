package scoring

import (
	"context"
	"sync"
	"sync/atomic"
)

// answering counts the processors that answers being worked out take, so
// that shadows run on those they leave idle: an answer in progress takes
// one, and one of a request large enough to be decoded, scored and
// encoded in parts takes them all. A shadow waits ([answering.wait])
// before each slice of rows it scores until fewer are taken than the
// processors there are, so that a champion's answer waits for no more
// than the slice a shadow has under way, and a shadow on a server whose
// processors answers keep busy skips its rows rather than slow them.
type answering struct {
	procs int64
	taken atomic.Int64

	waiting atomic.Bool // a shadow waits for idle
	mu      sync.Mutex  // guards idle
	idle    chan struct{}
}

func newAnswering(procs int) *answering { return &answering{procs: int64(procs)} }

// take records that an answer in progress takes n processors; give(n)
// returns them once it is written.
func (a *answering) take(n int64) { a.taken.Add(n) }

func (a *answering) give(n int64) {
	// Either this sees the waiting a shadow set before it looked at taken
	// again, or that look sees the processors given back here.
	if a.taken.Add(-n) < a.procs && a.waiting.Load() {
		a.mu.Lock()
		if a.idle != nil {
			close(a.idle)
			a.idle = nil
			a.waiting.Store(false)
		}
		a.mu.Unlock()
	}
}

// wait returns once answers take fewer processors than there are, or
// with ctx's error once it is done.
func (a *answering) wait(ctx context.Context) error {
	for a.taken.Load() >= a.procs {
		a.mu.Lock()
		if a.idle == nil {
			a.idle = make(chan struct{})
		}
		idle := a.idle
		a.waiting.Store(true)
		a.mu.Unlock()
		if a.taken.Load() < a.procs {
			break
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return ctx.Err()
}
