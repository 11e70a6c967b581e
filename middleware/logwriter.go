package middleware

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// maxPending is how many bytes of lines a [LogWriter] holds while its
// writer is busy before Write waits, as a plain blocking write would.
const maxPending = 1 << 20

// earlyBatch is the backlog a busy LogWriter writes without waiting out
// the linger.
const earlyBatch = 64 << 10

// keepBuffer is the largest buffer a LogWriter keeps for its next batch:
// room for the most it holds, which a burst of lines reaches while a
// write is under way, so that bursts do not grow a new one each time.
// One a single huge line grew past it is left to the garbage collector.
const keepBuffer = 2 * maxPending

// linger is how long a LogWriter gathers lines after a write before it
// writes them together, and how long it waits without a line before it
// is idle again. Each write to a pipe wakes its reader, which under load
// cost the writing process more than the lines themselves at one write
// a millisecond.
const linger = 5 * time.Millisecond

// LogWriter is an io.Writer for log output, such as the text an
// [slog.Handler] writes to a process's standard error, that writes lines
// in batches rather than one system call each (group commit). An idle
// LogWriter writes a line at once, on the goroutine that hands it over,
// with no timer holding it back. For five milliseconds after each write it
// is busy: the lines that arrive then are gathered and written together at
// its end by a goroutine of the LogWriter's own, until five milliseconds
// pass without a line and it is idle again. A line is thus delayed by
// about five milliseconds at most (more only while the destination is slow),
// and under load, as with an [AccessLog] record per request, one write
// carries many lines. Gathering cannot wait for lines
// to arrive during a write alone: a log handler writes under a lock of
// its own, which holds the next line back until the write is done.
//
// Each Write is kept whole and in order: its bytes reach the underlying
// writer in the order the LogWriter accepted them, never split between two
// writes of its own or interleaved with another Write's. A log handler
// writes one record per Write, under a lock of its own, so its records are
// never cut and keep their order.
//
// A Write that finds the LogWriter idle returns the error of its write;
// one that finds it busy returns at once. While more than a mebibyte
// waits, Write blocks until the backlog shrinks: a slow or stuck
// destination slows logging down, as it would without the LogWriter,
// rather than let memory grow; the two buffers it writes from in turn are
// kept for reuse, so a LogWriter that has seen a burst holds a few
// mebibytes. A failed write loses the lines it carried;
// [LogWriter.Flush] reports it.
//
// Lines accepted but not yet written are lost if the process exits
// without Flush: call it before exiting, on every path. LogWriter is safe
// for concurrent use.
type LogWriter struct {
	w io.Writer

	mu       sync.Mutex
	pending  []byte // accepted, waiting for the next write
	spare    []byte // the last batch's buffer, for reuse
	writing  bool   // busy: a batch is being written, or drain gathers the next
	accepted int64  // bytes accepted so far
	finished int64  // bytes written or lost so far
	progress chan struct{}
	hurry    chan struct{} // wakes a lingering drain early; buffered
	err      error         // the first write error since the last Flush
	lost     int64         // bytes lost to write errors since the last Flush
}

// NewLogWriter returns a LogWriter that writes to w. Nothing else should
// write to w while the LogWriter is in use, as its lines would be
// reordered against the LogWriter's.
func NewLogWriter(w io.Writer) *LogWriter {
	return &LogWriter{w: w, hurry: make(chan struct{}, 1)}
}

// Write accepts p to be written whole and in order.
func (l *LogWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	l.mu.Lock()
	// A line longer than the bound is accepted alone, or it would never
	// be.
	for l.writing && len(l.pending) > 0 && len(l.pending)+len(p) > maxPending {
		l.waitLocked(nil)
	}
	l.pending = append(l.pending, p...)
	l.accepted += int64(len(p))
	if l.writing {
		big := len(l.pending) > earlyBatch
		l.mu.Unlock()
		if big {
			l.wake()
		}
		return len(p), nil
	}
	l.writing = true
	err := l.writeBatchLocked()
	// This goroutine has a request to finish; one of the LogWriter's own
	// gathers what comes next.
	go l.drain()
	l.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// drain writes, once per linger, the lines gathered over it, until a
// linger passes without one. A backlog of earlyBatch or a Flush cuts the
// wait short.
func (l *LogWriter) drain() {
	t := time.NewTimer(linger)
	defer t.Stop()
	for wait := true; ; {
		if wait {
			select {
			case <-t.C:
			case <-l.hurry:
			}
		}
		l.mu.Lock()
		if len(l.pending) == 0 {
			l.writing = false
			l.mu.Unlock()
			return
		}
		_ = l.writeBatchLocked() // kept in l.err for Flush
		wait = len(l.pending) < earlyBatch
		l.mu.Unlock()
		t.Reset(linger)
	}
}

// wake ends a lingering drain's wait, for a large backlog or a Flush.
func (l *LogWriter) wake() {
	select {
	case l.hurry <- struct{}{}:
	default:
	}
}

// writeBatchLocked writes the pending bytes, with l.mu released during
// the write, and returns the write's error. The caller holds l.mu and has
// set l.writing.
func (l *LogWriter) writeBatchLocked() error {
	batch := l.pending
	l.pending, l.spare = l.spare[:0], nil
	l.mu.Unlock()
	n, err := l.w.Write(batch)
	if err == nil && n < len(batch) {
		err = io.ErrShortWrite
	}
	l.mu.Lock()
	if err != nil {
		if l.err == nil {
			l.err = err
		}
		l.lost += int64(len(batch) - n)
	}
	l.finished += int64(len(batch))
	if cap(batch) <= keepBuffer {
		l.spare = batch[:0]
	}
	if l.progress != nil {
		close(l.progress)
		l.progress = nil
	}
	return err
}

// waitLocked waits, with l.mu released, until a batch finishes or done
// is closed.
func (l *LogWriter) waitLocked(done <-chan struct{}) {
	if l.progress == nil {
		l.progress = make(chan struct{})
	}
	ch := l.progress
	l.mu.Unlock()
	select {
	case <-ch:
	case <-done:
	}
	l.mu.Lock()
}

// Flush waits until every line accepted before the call has been written,
// or ctx ends, and returns ctx's error in that case. Otherwise it returns
// the first write error since the last Flush, with how many bytes were
// lost, or nil when every write succeeded, and forgets them.
func (l *LogWriter) Flush(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	target := l.accepted
	if l.finished < target {
		l.wake()
	}
	for l.finished < target {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("middleware: log writer: %d bytes not yet written: %w", target-l.finished, err)
		}
		l.waitLocked(ctx.Done())
	}
	err, lost := l.err, l.lost
	l.err, l.lost = nil, 0
	if err != nil {
		return fmt.Errorf("middleware: log writer: %d bytes lost: %w", lost, err)
	}
	return nil
}
