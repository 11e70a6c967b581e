package scoring

import (
	"context"
	"errors"
	"time"

	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// call is one execution on a goroutine other than the caller's (a worker),
// so that the caller can be answered when the deadline passes even if the
// process does not heed its context. Calls are reused, channel included,
// once their outcome has been received; a call whose worker may still hold
// it (the deadline passed first) is left to the garbage collector.
type call struct {
	e      *engine
	ctx    context.Context
	slot   *Slot
	x      execution
	result wire.Result
	err    error
	done   chan struct{} // buffered: run never blocks on it
	// timer wakes await at the deadline. It is the call's own and reused
	// with it, so that waiting for the deadline costs no allocation:
	// ctx.Done would make a channel, a timer and its function for each
	// execution.
	timer *time.Timer
}

// await runs x on a worker and waits for its outcome, the end of ctx or
// the end of req, whichever comes first. When req ends before the deadline
// (the client left) it cancels ctx, so that the process hears of it.
func (e *engine) await(req context.Context, ctx *execContext, slot *Slot, x *execution) (wire.Result, error) {
	c, _ := e.calls.Get().(*call)
	if c == nil {
		c = &call{done: make(chan struct{}, 1), timer: time.NewTimer(time.Hour)}
	}
	c.e, c.ctx, c.slot, c.x = e, ctx, slot, *x
	// ctx ends only at its deadline or when this loop cancels it: the
	// deadline is all the timer has to watch.
	c.timer.Reset(time.Until(ctx.deadline))
	e.dispatch(c)
	reqDone := req.Done()
	for {
		select {
		case <-c.done:
			return e.finish(c)
		case <-reqDone:
			reqDone = nil
			if errors.Is(req.Err(), context.DeadlineExceeded) {
				continue // ctx has that deadline too and ends with it
			}
			ctx.cancel(context.Canceled) // the client left: the process hears of it
		case <-c.timer.C:
			ctx.cancel(context.DeadlineExceeded)
		}
		select {
		case <-c.done: // finished as the context ended
			return e.finish(c)
		default:
			stopTimer(c.timer) // the worker may still hold c, which is not reused
			return wire.Result{}, ctx.Err()
		}
	}
}

// stopTimer stops t and leaves its channel empty, whichever timer
// semantics the program was built with, so that it can be Reset.
func stopTimer(t *time.Timer) {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
}

// workerIdle is how long a worker waits for its next call before it exits:
// between one and two periods, as the timer is checked, not re-armed, per
// call.
const workerIdle = time.Second

// dispatch runs c on an idle worker, or on a new one when none is idle.
// Workers outlive their calls so that an execution does not pay for
// starting a goroutine and growing its small stack, which together were a
// twentieth of a one-row request's CPU time in profiles of the server under
// load. A worker whose process never returns is simply never idle again.
func (e *engine) dispatch(c *call) {
	select {
	case e.work <- c:
	default:
		go e.worker(c)
	}
}

// worker runs c, then the calls handed to it, until a period of workerIdle
// passes without one.
func (e *engine) worker(c *call) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	busy := false // a call ran since the timer last fired
	for {
		if c != nil {
			c.run()
			c, busy = nil, true // c is recycled by finish once run has signalled
		}
		select {
		case c = <-e.work:
		case <-idle.C:
			if !busy {
				return
			}
			busy = false
			idle.Reset(workerIdle)
		}
	}
}

// finish returns the outcome of a call whose run has ended, and recycles
// the call.
func (e *engine) finish(c *call) (wire.Result, error) {
	result, err := c.result, c.err
	stopTimer(c.timer)
	*c = call{done: c.done, timer: c.timer}
	e.calls.Put(c)
	return result, err
}

// run runs the call's process on the worker and signals its outcome.
func (c *call) run() {
	c.result, c.err = c.e.run(c.ctx, c.slot, &c.x)
	c.done <- struct{}{}
}
