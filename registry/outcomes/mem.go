package outcomes

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/scorehub/scorehub/registry/process"
)

// MemStore is a [Store] in memory, for tests and for a service that keeps
// nothing across restarts. It holds a copy of every prediction it keeps
// (what it was given, its slices included) and of every outcome, so its
// memory is bounded by Options.MaxRecords times the size of a prediction.
// It applies its bounds on every call.
//
// A MemStore is safe for concurrent use; its calls are serialised.
type MemStore struct {
	mu     sync.Mutex
	now    func() time.Time
	idx    *index[Prediction]
	closed bool
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty store bounded by opts.
func NewMemStore(opts Options) *MemStore {
	opts = opts.WithDefaults()
	return &MemStore{now: opts.Now, idx: newIndex[Prediction](opts)}
}

// lock locks s for a call and applies the bounds, or fails when ctx is
// done or s is closed.
func (s *MemStore) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.idx.prune(s.now())
	return nil
}

// Append implements [Store].
func (s *MemStore) Append(ctx context.Context, ps []Prediction) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for i := range ps {
		p := &ps[i]
		ok, birth := s.idx.accepts(p)
		if !ok {
			continue
		}
		s.idx.add(p, birth, s.idx.seq, clonePrediction(*p))
		s.idx.seq++
		// Within the bound after each one, so that a large batch does
		// not hold more than the bound at any time.
		s.idx.prune(s.now())
	}
	return nil
}

// Feedback implements [Store]. Nothing in memory fails half way: a batch
// fails as a whole, before it changes anything, when ctx is done or the
// store is closed.
func (s *MemStore) Feedback(ctx context.Context, endpoint process.EndpointRef, outs []Outcome, at time.Time) (Applied, error) {
	if err := s.lock(ctx); err != nil {
		return Applied{}, err
	}
	defer s.mu.Unlock()
	a, matched := s.idx.plan(endpoint, outs)
	if len(matched) > 0 {
		s.idx.feed(endpoint, matched, at, s.idx.seq)
		s.idx.seq++
	}
	return a, nil
}

// Joined implements [Store].
func (s *MemStore) Joined(ctx context.Context, endpoint process.EndpointRef, since time.Time) ([]Joined, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []Joined
	for _, f := range s.idx.joined(endpoint, since) {
		for _, e := range f.row.preds {
			out = append(out, Joined{Prediction: clonePrediction(e.body), Actual: f.outcome(), FedAt: f.at})
		}
	}
	return out, nil
}

// Pending implements [Store].
func (s *MemStore) Pending(ctx context.Context, endpoint process.EndpointRef) (int, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	return s.idx.pendingRows(endpoint), nil
}

// Close implements [Store]: it drops what the store holds; later calls
// fail with [ErrClosed]. Closing a closed store does nothing.
func (s *MemStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.idx = nil
	return nil
}

// clonePrediction returns p with slices of its own, nil when empty, so
// that neither the caller that appended p nor one that reads it back
// changes what a store holds.
func clonePrediction(p Prediction) Prediction {
	p.Classes = cloneOrNil(p.Classes)
	p.Confidences = cloneOrNil(p.Confidences)
	return p
}

func cloneOrNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}
