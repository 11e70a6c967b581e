package testutil

import (
	"sync"
	"time"
)

// Clock is a clock a test moves by hand, for the Now fields of configs:
// Now tells the time it was started at plus every Advance since. It is
// safe for concurrent use, as the code under test reads it from its own
// goroutines.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock that tells t until it is advanced.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now tells the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock d on and returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}
