package scoring

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

type ctxKey struct{}

// TestExecContext: the execution context keeps the request's values, ends
// at its deadline and when the request ends, reports the same error by Err
// and Done whichever is asked first, and lets a context derived from it
// end with it.
func TestExecContext(t *testing.T) {
	t.Run("values and deadline", func(t *testing.T) {
		req := context.WithValue(context.Background(), ctxKey{}, "v")
		dl := time.Now().Add(time.Hour)
		c := newExecContext(req, dl, false)
		defer c.release()
		if got := c.Value(ctxKey{}); got != "v" {
			t.Errorf("Value = %v, want the request's", got)
		}
		if d, ok := c.Deadline(); !ok || !d.Equal(dl) {
			t.Errorf("Deadline = %v, %v", d, ok)
		}
		if err := c.Err(); err != nil {
			t.Errorf("Err = %v before anything ended", err)
		}
	})
	t.Run("deadline by Err", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := newExecContext(context.Background(), time.Now().Add(5*time.Millisecond), false)
			time.Sleep(4 * time.Millisecond)
			if err := c.Err(); err != nil {
				t.Fatalf("Err = %v before the deadline", err)
			}
			time.Sleep(time.Millisecond)
			if !errors.Is(c.Err(), context.DeadlineExceeded) {
				t.Errorf("Err = %v at the deadline", c.Err())
			}
			select {
			case <-c.Done(): // closed, though asked for only after Err ended it
			default:
				t.Error("Done is open after Err reported the deadline")
			}
		})
	})
	t.Run("deadline by Done", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			c := newExecContext(context.Background(), start.Add(5*time.Millisecond), false)
			<-c.Done()
			if !errors.Is(c.Err(), context.DeadlineExceeded) {
				t.Errorf("Err = %v after Done closed", c.Err())
			}
			if took := time.Since(start); took != 5*time.Millisecond {
				t.Errorf("Done closed after %v, want at the 5 ms deadline", took)
			}
		})
	})
	t.Run("request ends", func(t *testing.T) {
		for _, asks := range []string{"Err", "Done"} {
			req, cancel := context.WithCancel(context.Background())
			c := newExecContext(req, time.Now().Add(time.Hour), false)
			if asks == "Done" {
				done := c.Done()
				cancel()
				<-done
			} else {
				cancel()
			}
			if !errors.Is(c.Err(), context.Canceled) {
				t.Errorf("%s: Err = %v after the request ended", asks, c.Err())
			}
		}
	})
	t.Run("Done asked first once it has ended", func(t *testing.T) {
		// Nothing asked Err when the request ended or the deadline
		// passed, as when a client leaves before the handler first
		// waits on Done.
		req, cancel := context.WithCancel(context.Background())
		cancel()
		for name, c := range map[string]*execContext{
			"request ended":   newExecContext(req, time.Now().Add(time.Hour), false),
			"deadline passed": newExecContext(context.Background(), time.Now().Add(-time.Millisecond), true),
		} {
			select {
			case <-c.Done():
			default:
				t.Errorf("%s: Done is open", name)
			}
			if c.Err() == nil {
				t.Errorf("%s: Err = nil after Done closed", name)
			}
			c.release()
		}
	})
	t.Run("watched", func(t *testing.T) {
		req, cancel := context.WithCancel(context.Background())
		c := newExecContext(req, time.Now().Add(time.Hour), true)
		done := c.Done()
		c.cancel(context.Canceled) // what the watcher does when req ends
		cancel()
		<-done
		if !errors.Is(c.Err(), context.Canceled) {
			t.Errorf("Err = %v", c.Err())
		}
	})
	t.Run("derived", func(t *testing.T) {
		req, cancel := context.WithCancel(context.Background())
		c := newExecContext(req, time.Now().Add(time.Hour), false)
		child, stop := context.WithCancel(c)
		defer stop()
		cancel()
		<-child.Done()
		if !errors.Is(child.Err(), context.Canceled) {
			t.Errorf("child Err = %v", child.Err())
		}
	})
	t.Run("release", func(t *testing.T) {
		c := newExecContext(context.Background(), time.Now().Add(time.Hour), false)
		done := c.Done()
		c.release()
		<-done
		if c.timer.Stop() {
			t.Error("the timer was still armed after release")
		}
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err = %v after release", err)
		}
	})
}
