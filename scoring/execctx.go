package scoring

import (
	"context"
	"sync"
	"time"
)

// execContext is the context a process runs under: the request's values,
// a deadline, and cancellation when the client leaves.
//
// context.WithDeadline over the request's context would do, at a price a
// one-row request notices: a timer armed and stopped, a channel, and a
// registration with net/http's context (a map and a lock), five
// allocations in all, even for a process that only polls Err. This
// context spends them only on what is used: Err compares the clock with
// the deadline and asks the request's context; the first call of Done
// makes the channel, arms the timer and, unless the handler watches the
// request itself, registers with the request's context.
type execContext struct {
	req      context.Context // values, and whether the client left
	deadline time.Time
	watched  bool // the caller cancels the context when req ends

	mu    sync.Mutex
	err   error
	done  chan struct{} // made by Done
	timer *time.Timer   // closes done at the deadline
	stop  func() bool   // undoes the registration with req

	// slot is the queue slot the execution holds: it lives as long as
	// the context, and sharing its allocation saves one per request.
	slot Slot
}

var _ context.Context = (*execContext)(nil)

// newExecContext returns a context that ends at deadline or when req ends.
// With watched set, the caller promises to call cancel when req ends, and
// Done does not register with req.
func newExecContext(req context.Context, deadline time.Time, watched bool) *execContext {
	return &execContext{req: req, deadline: deadline, watched: watched}
}

func (c *execContext) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *execContext) Value(key any) any { return c.req.Value(key) }

func (c *execContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	c.done = make(chan struct{})
	if c.err != nil { // ended before anyone asked for Done
		close(c.done)
		return c.done
	}
	if c.checkLocked() != nil { // ends it now, closing done
		return c.done
	}
	c.timer = time.AfterFunc(time.Until(c.deadline), func() { c.cancel(context.DeadlineExceeded) })
	if !c.watched {
		c.stop = context.AfterFunc(c.req, func() { c.cancel(c.req.Err()) })
	}
	return c.done
}

func (c *execContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checkLocked()
}

// checkLocked ends the context if its deadline has passed or the request
// has ended, and returns its error.
func (c *execContext) checkLocked() error {
	if c.err != nil {
		return c.err
	}
	// time.Until reads the monotonic clock alone, where time.Now would
	// read the wall clock too: a deadline set by the handler carries a
	// monotonic reading.
	if time.Until(c.deadline) <= 0 {
		c.endLocked(context.DeadlineExceeded)
	} else if err := c.req.Err(); err != nil {
		c.endLocked(err)
	}
	return c.err
}

// cancel ends the context with err, unless it has ended already.
func (c *execContext) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(err)
}

func (c *execContext) endLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.stop != nil {
		c.stop()
	}
}

// release ends the context once the execution is over, so that its timer
// and its registration with the request's context go.
func (c *execContext) release() { c.cancel(context.Canceled) }

func (c *execContext) String() string {
	return "scoring.execContext(deadline " + c.deadline.Format(time.RFC3339Nano) + ")"
}
