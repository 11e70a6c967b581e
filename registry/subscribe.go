package registry

import (
	"sort"
	"sync"
)

// subscribers is a set of callbacks, called in registration order.
type subscribers[T any] struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(T)
}

func (s *subscribers[T]) add(fn func(T)) (cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fns == nil {
		s.fns = make(map[int]func(T))
	}
	id := s.next
	s.next++
	s.fns[id] = fn
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.fns, id)
	}
}

func (s *subscribers[T]) notify(v T) {
	s.mu.Lock()
	ids := make([]int, 0, len(s.fns))
	for id := range s.fns {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	fns := make([]func(T), len(ids))
	for i, id := range ids {
		fns[i] = s.fns[id]
	}
	s.mu.Unlock()
	for _, fn := range fns {
		fn(v)
	}
}
