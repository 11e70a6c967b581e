package testutil

import (
	"testing"
	"time"
)

// pollInterval is how long Poll waits between looks: short enough that a
// test does not idle long after the condition holds, long enough that the
// looking does not crowd out the code it waits for.
const pollInterval = 10 * time.Millisecond

// Poll calls cond until it returns true or within has passed, and tells
// whether it did. It looks once more after the deadline, so a condition
// that came true while it slept still counts. It is for callers that
// report a timeout themselves; most want Eventually.
func Poll(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(min(pollInterval, time.Until(deadline)))
	}
}

// Eventually waits, as Poll does, for cond to hold, and fails the test
// naming what it waited for when it does not within the given time.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(within, cond) {
		t.Fatalf("%s: not within %v", what, within)
	}
}
