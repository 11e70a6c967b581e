package middleware

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// maxPending is how many bytes of lines a [LogWriter] holds while its
// writer is busy before Write waits, as a plain blocking write would.
const maxPending = 1 << 20

// keepBuffer is the largest buffer a LogWriter keeps for its next batch;
// one a burst grew past it is left to the garbage collector.
const keepBuffer = 64 << 10

// LogWriter is an io.Writer for log output, such as the text an
// [slog.Handler] writes to a process's standard error, that writes lines
// in batches rather than one system call each. Writes that arrive while
// the underlying writer is busy with an earlier one are joined and
// written together as soon as it is done (group commit): a lone line goes
// out at once, with no timer holding it back, and under load, as with an
// [AccessLog] record per request, one write carries many lines.
//
// Each Write is kept whole and in order: its bytes reach the underlying
// writer in the order the LogWriter accepted them, never split between two
// writes of its own or interleaved with another Write's. A log handler
// writes one record per Write, under a lock of its own, so its records are
// never cut and keep their order.
//
// A Write that finds the underlying writer idle writes on its own
// goroutine, and returns that write's error; one that finds it busy
// returns at once, and its line is written by whoever then writes. While
// more than a mebibyte waits, Write blocks until the backlog shrinks: a
// slow or stuck destination slows logging down, as it would without the
// LogWriter, rather than let memory grow. A failed write loses the lines
// it carried; [LogWriter.Flush] reports it.
//
// Lines accepted but not yet written are lost if the process exits
// without Flush: call it before exiting, on every path. LogWriter is safe
// for concurrent use.
type LogWriter struct {
	w io.Writer

	mu       sync.Mutex
	pending  []byte // accepted, waiting for the next write
	spare    []byte // the last batch's buffer, for reuse
	writing  bool   // a goroutine is writing a batch
	accepted int64  // bytes accepted so far
	finished int64  // bytes written or lost so far
	progress chan struct{}
	err      error // the first write error since the last Flush
	lost     int64 // bytes lost to write errors since the last Flush
}

// NewLogWriter returns a LogWriter that writes to w. Nothing else should
// write to w while the LogWriter is in use, as its lines would be
// reordered against the LogWriter's.
func NewLogWriter(w io.Writer) *LogWriter {
	return &LogWriter{w: w}
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
		l.mu.Unlock()
		return len(p), nil
	}
	l.writing = true
	err := l.writeBatchLocked()
	if len(l.pending) > 0 {
		// Lines arrived during the write. Someone must write them even
		// if no other Write comes, and this goroutine has a request to
		// finish: a goroutine of the LogWriter takes over until the
		// backlog is gone.
		go l.drain()
	} else {
		l.writing = false
	}
	l.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// drain writes batches until none is pending.
func (l *LogWriter) drain() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.pending) > 0 {
		_ = l.writeBatchLocked() // kept in l.err for Flush
	}
	l.writing = false
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
