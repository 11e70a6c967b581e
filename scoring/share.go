package scoring

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/scorehub/scorehub/registry/process"
)

// ComparisonStore is where the replicas that serve one registry publish
// what their [Challenges] measured, so that the comparison of a champion
// and a challenger describes the traffic of all of them. A replica's
// figures are its own since it started; the store keeps the last each
// replica published. Implementations are safe for concurrent use.
type ComparisonStore interface {
	// Publish replaces what replica published before with figures, at
	// the time at.
	Publish(ctx context.Context, replica string, figures []EndpointComparison, at time.Time) error
	// Collect returns the comparisons of endpoint that replicas
	// published at or after since, one per replica and pair.
	Collect(ctx context.Context, endpoint process.EndpointRef, since time.Time) ([]Comparison, error)
}

// ShareEvery is how often [Queues.ShareComparisons] publishes, and
// ShareFresh how long a replica's figures count after it last did: a
// replica that stopped drops out of the sums.
const (
	ShareEvery = time.Second
	ShareFresh = time.Minute
)

// ShareComparisons has q publish its Challenges' figures to store every
// ShareEvery as replica, until ctx ends, so that [Queues.Comparisons]
// sums every replica's; and its live drift histograms too when store is
// also a [DriftStore], so that [Queues.Drift] adds up every replica's. It returns at once; the last publication happens
// when ctx ends (see [Queues.StopSharing]).
func (q *Queues) ShareComparisons(store ComparisonStore, replica string, log *slog.Logger) error {
	if store == nil || replica == "" {
		return errors.New("scoring: ShareComparisons needs a store and a replica name")
	}
	if log == nil {
		log = slog.Default()
	}
	s := &sharing{store: store, replica: replica, stop: make(chan struct{}), done: make(chan struct{})}
	if !q.challenges.sharing.CompareAndSwap(nil, s) {
		return errors.New("scoring: comparisons are shared already")
	}
	go func() {
		defer close(s.done)
		t := time.NewTicker(ShareEvery)
		defer t.Stop()
		for {
			q.publish(s, log)
			select {
			case <-s.stop:
				q.publish(s, log)
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

// StopSharing publishes a last time and stops sharing.
func (q *Queues) StopSharing() {
	s := q.challenges.sharing.Swap(nil)
	if s == nil {
		return
	}
	s.once.Do(func() { close(s.stop) })
	<-s.done
}

// sharing is a running ShareComparisons.
type sharing struct {
	store   ComparisonStore
	replica string
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func (q *Queues) publish(s *sharing, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st := q.reg.Snapshot().State()
	now := time.Now()
	if err := s.store.Publish(ctx, s.replica, q.challenges.All(st), now); err != nil {
		log.Warn("scoring: the comparisons of this replica were not published", "error", err)
	}
	if ds, ok := s.store.(DriftStore); ok {
		if err := ds.PublishDrift(ctx, s.replica, q.challenges.sharedDrifts(st), now); err != nil {
			log.Warn("scoring: the drift figures of this replica were not published", "error", err)
		}
	}
}

// Comparisons returns the comparisons of endpoint's champions and
// challengers: this replica's ([Challenges.Compare]), or, while it shares
// them ([Queues.ShareComparisons]), the sums of what every replica
// published within ShareFresh, this one's as of its last publication.
func (q *Queues) Comparisons(ctx context.Context, endpoint process.EndpointRef) ([]Comparison, error) {
	st := q.reg.Snapshot().State()
	s := q.challenges.sharing.Load()
	if s == nil {
		return q.challenges.Compare(st, endpoint), nil
	}
	all, err := s.store.Collect(ctx, endpoint, time.Now().Add(-ShareFresh))
	if err != nil {
		return nil, err
	}
	return SumComparisons(all), nil
}

// SumComparisons returns the comparisons of cs added up by pair: counts
// and histograms summed, bucket by bucket.
func SumComparisons(cs []Comparison) []Comparison {
	type key struct{ champion, challenger, mode string }
	var order []key
	sums := map[key]*Comparison{}
	for _, c := range cs {
		k := key{c.Champion, c.Challenger, c.Mode}
		s, ok := sums[k]
		if !ok {
			cp := c
			cp.Delta, cp.ChampionLatency, cp.ChallengerLatency = c.Delta.clone(), c.ChampionLatency.clone(), c.ChallengerLatency.clone()
			sums[k] = &cp
			order = append(order, k)
			continue
		}
		s.Compared += c.Compared
		s.Agreed += c.Agreed
		s.Answered += c.Answered
		s.Skipped += c.Skipped
		s.Errors += c.Errors
		s.Unavailable += c.Unavailable
		s.Delta.add(c.Delta)
		s.ChampionLatency.add(c.ChampionLatency)
		s.ChallengerLatency.add(c.ChallengerLatency)
	}
	out := make([]Comparison, 0, len(order))
	for _, k := range order {
		out = append(out, *sums[k])
	}
	slices.SortFunc(out, func(a, b Comparison) int {
		return cmp.Or(cmp.Compare(a.Champion, b.Champion), cmp.Compare(a.Challenger, b.Challenger), cmp.Compare(a.Mode, b.Mode))
	})
	return out
}

func (h Histogram) clone() Histogram {
	h.Bounds, h.Counts = slices.Clone(h.Bounds), slices.Clone(h.Counts)
	return h
}

// add adds o's counts to h's; histograms of other bounds (a replica of
// another build) add their totals only.
func (h *Histogram) add(o Histogram) {
	h.Count += o.Count
	h.Sum += o.Sum
	if slices.Equal(h.Bounds, o.Bounds) && len(h.Counts) == len(o.Counts) {
		for i := range h.Counts {
			h.Counts[i] += o.Counts[i]
		}
	}
}

// MemComparisons is a [ComparisonStore] in memory, for replicas in one
// process (tests, or a host running several Queues). It is safe for
// concurrent use.
type MemComparisons struct {
	mu   sync.Mutex
	pubs map[string]publication
}

type publication struct {
	figures []EndpointComparison
	drift   []SharedDrift
	at      time.Time
	driftAt time.Time
}

var _ ComparisonStore = (*MemComparisons)(nil)

// Publish keeps figures as replica's.
func (m *MemComparisons) Publish(_ context.Context, replica string, figures []EndpointComparison, at time.Time) error {
	m.update(replica, func(p *publication) { p.figures, p.at = figures, at })
	return nil
}

// PublishDrift keeps figures as replica's drift.
func (m *MemComparisons) PublishDrift(_ context.Context, replica string, figures []SharedDrift, at time.Time) error {
	m.update(replica, func(p *publication) { p.drift, p.driftAt = figures, at })
	return nil
}

// update changes replica's publication with set.
func (m *MemComparisons) update(replica string, set func(*publication)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pubs == nil {
		m.pubs = map[string]publication{}
	}
	p := m.pubs[replica]
	set(&p)
	m.pubs[replica] = p
}

// CollectDrift returns endpoint's drift figures of the replicas that
// published them at or after since.
func (m *MemComparisons) CollectDrift(_ context.Context, endpoint process.EndpointRef, since time.Time) ([]SharedDrift, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []SharedDrift
	for replica, p := range m.pubs {
		if p.driftAt.Before(since) {
			continue
		}
		for _, f := range p.drift {
			if f.Endpoint == endpoint {
				f.Replica = replica
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// Collect returns endpoint's comparisons of the replicas that published
// at or after since.
func (m *MemComparisons) Collect(_ context.Context, endpoint process.EndpointRef, since time.Time) ([]Comparison, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Comparison
	for _, p := range m.pubs {
		if p.at.Before(since) {
			continue
		}
		for _, e := range p.figures {
			if e.Endpoint == endpoint {
				out = append(out, e.Comparisons...)
			}
		}
	}
	return out, nil
}
