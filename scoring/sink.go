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
// queue holds, several batches at a time when they wait.
type sink[T any] struct {
	append  func(context.Context, []T) error
	what    string // what the records are, for the log: "predictions"
	log     *slog.Logger
	queue   chan sinkBatch[T]
	dropped *atomic.Uint64 // records not kept: the queue was full, or the store refused them
	done    chan struct{}
	once    sync.Once
	warned  time.Time // when the last failure was logged: at most one a warnEvery
}

// warnEvery bounds how often a sink logs a failed append: a store that
// falls behind fails every batch, and each is counted.
const warnEvery = 10 * time.Second

// sinkBatch is records handed to the store, or, with flushed set, a mark
// that closes flushed once every batch before it is appended.
type sinkBatch[T any] struct {
	records []T
	flushed chan struct{}
}

// The bounds of a sink: how many batches wait for the store at most, and
// how many records one append takes at most.
const (
	sinkQueue    = 1024
	sinkAppendAt = 10_000
)

func newSink[T any](what string, append func(context.Context, []T) error, dropped *atomic.Uint64, log *slog.Logger) *sink[T] {
	if log == nil {
		log = slog.Default()
	}
	s := &sink[T]{append: append, what: what, log: log, queue: make(chan sinkBatch[T], sinkQueue), dropped: dropped, done: make(chan struct{})}
	go s.run()
	return s
}

// put hands rs to the store, or drops them.
func (s *sink[T]) put(rs []T) {
	if len(rs) == 0 {
		return
	}
	defer func() {
		if recover() != nil { // the sink stopped as the batch came
			s.dropped.Add(uint64(len(rs)))
		}
	}()
	select {
	case s.queue <- sinkBatch[T]{records: rs}:
	default:
		s.dropped.Add(uint64(len(rs)))
	}
}

// flush waits, within ctx, until the records put before the call are
// appended (or dropped).
func (s *sink[T]) flush(ctx context.Context) error {
	mark := sinkBatch[T]{flushed: make(chan struct{})}
	if err := func() (err error) {
		defer func() {
			if recover() != nil { // the sink stopped: nothing waits
				err = nil
			}
		}()
		select {
		case s.queue <- mark:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}(); err != nil {
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

// stop appends what waits, within ctx, and stops taking records.
func (s *sink[T]) stop(ctx context.Context) error {
	s.once.Do(func() { close(s.queue) })
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
		rs := b.records
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
				rs = append(rs, next.records...)
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
		}
		for _, m := range marks {
			close(m)
		}
	}
}
