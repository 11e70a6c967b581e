package scoring

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
)

// DriftStore is where replicas publish their live drift histograms, so
// that an endpoint's drift describes the rows of all of them. A
// [ComparisonStore] that is also a DriftStore has [Queues.ShareComparisons]
// publish both. Implementations are safe for concurrent use.
type DriftStore interface {
	// PublishDrift replaces what replica published before with figures,
	// at the time at.
	PublishDrift(ctx context.Context, replica string, figures []SharedDrift, at time.Time) error
	// CollectDrift returns the figures of endpoint that replicas
	// published at or after since, one per replica and version.
	CollectDrift(ctx context.Context, endpoint process.EndpointRef, since time.Time) ([]SharedDrift, error)
}

// SharedDrift is one replica's live histograms of one endpoint and
// version, as it publishes them.
type SharedDrift struct {
	Endpoint process.EndpointRef `json:"endpoint"`
	Version  string              `json:"version"`
	// Fingerprint names the bins and the window the histograms count in:
	// only figures of one fingerprint are added up.
	Fingerprint string           `json:"fingerprint"`
	Histograms  drift.Histograms `json:"histograms"`
	// Replica is who published the figures; set by CollectDrift.
	Replica string `json:"replica,omitempty"`
}

// fingerprint names profile p counted under settings s.
func fingerprint(p *drift.Profile, s registry.Monitor) string {
	b, err := json.Marshal(struct {
		Profile *drift.Profile
		Window  time.Duration
		Rows    int64
	}{p, s.Window, s.MaxRows})
	if err != nil {
		return "" // a profile that was decoded from JSON encodes
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// sharedDrifts returns the histograms of every endpoint st deploys that
// counts rows, as this replica publishes them.
func (c *Challenges) sharedDrifts(st *registry.State) []SharedDrift {
	c.pruneMonitors(st)
	var out []SharedDrift
	c.monitors.Range(func(k, v any) bool {
		mk, m := k.(monitorKey), v.(*monitored)
		out = append(out, SharedDrift{Endpoint: mk.endpoint, Version: mk.champion, Fingerprint: m.fingerprint, Histograms: *m.live.Snapshot()})
		return true
	})
	return out
}

// sharedDrift returns the store drift is shared through, or nil while it
// is not.
func (q *Queues) sharedDrift() DriftStore {
	s := q.challenges.sharing.Load()
	if s == nil {
		return nil
	}
	ds, _ := s.store.(DriftStore)
	return ds
}

// collectDrift adds up the histograms of endpoint and version of
// fingerprint fp that replicas published within ShareFresh, and counts
// the replicas; nil histograms when none did.
func collectDrift(ctx context.Context, store DriftStore, endpoint process.EndpointRef, version, fp string) (*drift.Histograms, int, error) {
	all, err := store.CollectDrift(ctx, endpoint, time.Now().Add(-ShareFresh))
	if err != nil {
		return nil, 0, err
	}
	var sum *drift.Histograms
	replicas := 0
	for _, f := range all {
		if f.Version != version || f.Fingerprint != fp {
			continue
		}
		h := f.Histograms
		if sum == nil {
			sum = &h
		} else if sum, err = drift.Merge(sum, &h); err != nil {
			return nil, 0, err
		}
		replicas++
	}
	if sum != nil && sum.Rows == 0 {
		return nil, replicas, nil
	}
	return sum, replicas, nil
}

var _ DriftStore = (*MemComparisons)(nil)
