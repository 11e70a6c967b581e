package payloads

import (
	"math"
	"sort"
	"time"

	"github.com/scorehub/scorehub/registry/process"
)

// index is what the memory and file stores keep in memory to answer a
// Page without reading the log: per endpoint, its held records in seq
// order. B is what a store keeps of a record besides its seq and time:
// the record itself in memory, its place in the log on file.
//
// Both stores drop records oldest first, so what an endpoint holds is
// always a suffix of what was appended to it, and dropping is cutting a
// prefix. An index is not safe for concurrent use; its store locks it.
type index[B any] struct {
	eps map[process.EndpointRef]*series[B]
}

// series is the held records of one endpoint, in seq order.
type series[B any] struct {
	ref     process.EndpointRef
	entries deque[entry[B]]
}

type entry[B any] struct {
	seq  int64
	at   int64 // the record's At, in Unix nanoseconds (see nanos)
	body B
}

func newIndex[B any]() *index[B] {
	return &index[B]{eps: map[process.EndpointRef]*series[B]{}}
}

// add adds the record seq of ref, which follows every record the index
// holds, and returns its endpoint's series.
func (x *index[B]) add(ref process.EndpointRef, seq int64, at time.Time, body B) *series[B] {
	s := x.eps[ref]
	if s == nil {
		s = &series[B]{ref: ref}
		x.eps[ref] = s
	}
	s.entries.push(entry[B]{seq: seq, at: nanos(at), body: body})
	return s
}

// dropHead drops the oldest record of s and returns it; s leaves the
// index with its last record.
func (x *index[B]) dropHead(s *series[B]) entry[B] {
	e := *s.entries.front()
	s.entries.drop(1)
	if s.entries.len() == 0 {
		delete(x.eps, s.ref)
	}
	return e
}

// dropBefore drops every record whose seq is less than seq.
func (x *index[B]) dropBefore(seq int64) {
	for ref, s := range x.eps {
		n := sort.Search(s.entries.len(), func(i int) bool { return s.entries.at(i).seq >= seq })
		s.entries.drop(n)
		if s.entries.len() == 0 {
			delete(x.eps, ref)
		}
	}
}

// page returns up to limit of ref's records with a seq greater than after
// and a time at or after cutoff (Unix nanoseconds), oldest first, and
// whether more such records follow.
func (x *index[B]) page(ref process.EndpointRef, after int64, limit int, cutoff int64) ([]entry[B], bool) {
	s := x.eps[ref]
	if s == nil {
		return nil, false
	}
	n := s.entries.len()
	i := sort.Search(n, func(i int) bool { return s.entries.at(i).seq > after })
	var out []entry[B]
	for ; i < n; i++ {
		e := s.entries.at(i)
		if e.at < cutoff {
			continue
		}
		if len(out) == limit {
			return out, true
		}
		out = append(out, *e)
	}
	return out, false
}

// nanos is t in Unix nanoseconds, clamped to the range of an int64.
func nanos(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// deque is a first-in-first-out queue in a slice, dropped from the front.
// The space of what it dropped is reused once it is half of the slice.
type deque[T any] struct {
	items []T
	head  int
}

func (d *deque[T]) len() int    { return len(d.items) - d.head }
func (d *deque[T]) at(i int) *T { return &d.items[d.head+i] }
func (d *deque[T]) push(v T)    { d.items = append(d.items, v) }
func (d *deque[T]) front() *T   { return d.at(0) }
func (d *deque[T]) empty() bool { return d.len() == 0 }

// drop drops the first n items.
func (d *deque[T]) drop(n int) {
	clear(d.items[d.head : d.head+n]) // what they point to may go
	d.head += n
	switch {
	case d.head == len(d.items):
		d.items, d.head = d.items[:0], 0
	case d.head >= 1024 && 2*d.head >= len(d.items):
		k := copy(d.items, d.items[d.head:])
		clear(d.items[k:])
		d.items, d.head = d.items[:k], 0
	}
}
