package payloads

import (
	"context"
	"slices"
	"sync"

	"github.com/scorehub/scorehub/registry/process"
)

// MemStore is a [Store] in memory, for tests and for a service that keeps
// nothing across restarts. It holds a copy of every record it keeps, and
// applies its bounds on every Append, record by record: it holds at most
// MaxBytes of records, counted as their JSON lines (see
// [Options.MaxBytes]), and drops a record once it is older than the
// retention and every record appended before it has left.
//
// A MemStore is safe for concurrent use; its calls are serialised.
type MemStore struct {
	opts Options

	mu     sync.Mutex
	idx    *index[memRecord]
	order  deque[*series[memRecord]] // the endpoint of each held record, in seq order
	bytes  int64                     // the sizes of the held records
	next   int64                     // the seq of the next record
	closed bool
}

var _ Store = (*MemStore)(nil)

// memRecord is what a MemStore holds of a record besides its seq and
// time.
type memRecord struct {
	rec  Record
	size int64
}

// NewMemStore returns an empty store bounded by opts.
func NewMemStore(opts Options) *MemStore {
	return &MemStore{opts: opts.WithDefaults(), idx: newIndex[memRecord](), next: 1}
}

// Append implements [Store].
func (s *MemStore) Append(ctx context.Context, rs []Record) error {
	lines, err := Prepare(rs, s.opts)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	for _, l := range lines {
		r := l.Record
		r.Seq = s.next
		size := l.Size(r.Seq)
		s.order.push(s.idx.add(r.Endpoint, r.Seq, r.At, memRecord{rec: r, size: size}))
		s.bytes += size
		s.next++
		// Within the bound after each one, so that a large batch does
		// not hold more than the bound at any time.
		s.prune()
	}
	return nil
}

// prune drops the oldest records while they are past a bound.
func (s *MemStore) prune() {
	cutoff := nanos(s.opts.Now().Add(-s.opts.Retention))
	for !s.order.empty() {
		oldest := *s.order.front()
		if s.bytes <= s.opts.MaxBytes && oldest.entries.front().at >= cutoff {
			return
		}
		s.order.drop(1)
		s.bytes -= s.idx.dropHead(oldest).body.size
	}
}

// Page implements [Store].
func (s *MemStore) Page(ctx context.Context, endpoint process.EndpointRef, after int64, limit int) ([]Record, bool, error) {
	if err := CheckLimit(limit); err != nil {
		return nil, false, err
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, ErrClosed
	}
	cutoff := nanos(s.opts.Now().Add(-s.opts.Retention))
	es, more := s.idx.page(endpoint, after, limit, cutoff)
	out := make([]Record, len(es))
	for i, e := range es {
		out[i] = e.body.rec
		out[i].Row = slices.Clone(out[i].Row) // the caller's to change
	}
	return out, more, nil
}

// Close implements [Store]: it drops what the store holds; later calls
// fail with [ErrClosed]. Closing a closed store does nothing.
func (s *MemStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.idx, s.order = nil, deque[*series[memRecord]]{}
	return nil
}
