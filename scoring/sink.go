package scoring

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// sink hands records of type T to a store off the answer's path: the
// scoring goroutine puts a batch in a bounded queue, or drops it and
// counts it when the queue is full, and one goroutine appends what the
// queue holds, several batches at a time when they wait. The queue is
// bounded twice: by batches, and by the weight of the records waiting
// (bytes, say), so that large batches of a store that falls behind do
// not pile up in memory.
type sink[T any] struct {
	append  func(context.Context, []T) error
	weigh   func(T) int64
	budget  int64        // the most weight that waits
	waiting atomic.Int64 // the weight waiting
	what    string       // what the records are, for the log: "predictions"
	log     *slog.Logger
	dropped *atomic.Uint64 // records not kept: the queue was full, or the store refused them

	mu     sync.RWMutex // held to send on queue (read) and to close it (write)
	closed bool
	queue  chan sinkBatch[T]
	done   chan struct{}
	warned time.Time // when the last failure was logged: at most one a warnEvery
}

// warnEvery bounds how often a sink logs a failed append: a store that
// falls behind fails every batch, and each is counted.
const warnEvery = 10 * time.Second

// sinkBatch is records handed to the store, with their weight, or, with
// flushed set, a mark that closes flushed once every batch before it is
// appended.
type sinkBatch[T any] struct {
	records []T
	weight  int64
	flushed chan struct{}
}

// The bounds of a sink: how many batches wait for the store at most, and
// how many records one append takes at most.
const (
	sinkQueue    = 1024
	sinkAppendAt = 10_000
)

// newSink returns a sink appending to append, whose waiting records weigh
// at most budget by weigh.
func newSink[T any](what string, append func(context.Context, []T) error, weigh func(T) int64, budget int64, dropped *atomic.Uint64, log *slog.Logger) *sink[T] {
	if log == nil {
		log = slog.Default()
	}
	s := &sink[T]{append: append, weigh: weigh, budget: budget, what: what, log: log,
		queue: make(chan sinkBatch[T], sinkQueue), dropped: dropped, done: make(chan struct{})}
	go s.run()
	return s
}

// put hands rs to the store, or drops them: when the queue is full, its
// weight would pass the budget, or the sink stopped.
func (s *sink[T]) put(rs []T) {
	if len(rs) == 0 {
		return
	}
	var w int64
	for _, r := range rs {
		w += s.weigh(r)
	}
	if s.waiting.Add(w) > s.budget {
		s.waiting.Add(-w)
		s.dropped.Add(uint64(len(rs)))
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.closed {
		select {
		case s.queue <- sinkBatch[T]{records: rs, weight: w}:
			return
		default:
		}
	}
	s.waiting.Add(-w)
	s.dropped.Add(uint64(len(rs)))
}

// flush waits, within ctx, until the records put before the call are
// appended (or dropped).
func (s *sink[T]) flush(ctx context.Context) error {
	mark := sinkBatch[T]{flushed: make(chan struct{})}
	if err := s.send(ctx, mark); err != nil {
		return err
	}
	select {
	case <-mark.flushed:
		return nil
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send puts b in the queue, waiting for room within ctx; nothing when the
// sink stopped, as nothing then waits.
func (s *sink[T]) send(ctx context.Context, b sinkBatch[T]) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		close(b.flushed)
		return nil
	}
	select {
	case s.queue <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop appends what waits, within ctx, and stops taking records.
func (s *sink[T]) stop(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.queue)
	}
	s.mu.Unlock()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run appends batches until the queue closes.
func (s *sink[T]) run() {
	defer close(s.done)
	for b := range s.queue {
		rs, w := b.records, b.weight
		var marks []chan struct{}
		if b.flushed != nil {
			marks = append(marks, b.flushed)
		}
		for more := true; more && len(rs) < sinkAppendAt; {
			select {
			case next, ok := <-s.queue:
				if !ok {
					more = false
					break
				}
				rs, w = append(rs, next.records...), w+next.weight
				if next.flushed != nil {
					marks = append(marks, next.flushed)
				}
			default:
				more = false
			}
		}
		if len(rs) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := s.append(ctx, rs); err != nil {
				s.dropped.Add(uint64(len(rs)))
				if now := time.Now(); now.Sub(s.warned) >= warnEvery {
					s.warned = now
					s.log.Warn("scoring: "+s.what+" not kept", s.what, len(rs), "dropped in all", s.dropped.Load(), "error", err)
				}
			}
			cancel()
			s.waiting.Add(-w)
		}
		for _, m := range marks {
			close(m)
		}
	}
}
