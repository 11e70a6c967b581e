package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// TestComparisonsOfReplicas: two replicas publish over one database, a
// publication replaces the replica's last, and the comparisons an
// endpoint collects are those published since, which sum to both
// replicas' figures.
func TestComparisonsOfReplicas(t *testing.T) {
	url := pgtest.DB(t)
	a, b := open(t, pgstore.Config{URL: url}).Comparisons(), open(t, pgstore.Config{URL: url}).Comparisons()
	ctx := context.Background()
	ep := process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "score"}
	other := process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "other"}
	pair := func(compared uint64) scoring.Comparison {
		c := scoring.NoComparison("churn@1", "churn@2", "shadow")
		c.Compared, c.Agreed = compared, compared/2
		c.Delta.Counts[0], c.Delta.Count, c.Delta.Sum = compared, compared, 0.0005*float64(compared)
		return c
	}
	t0 := time.Now()
	publish := func(s *pgstore.Comparisons, replica string, compared uint64, at time.Time) {
		t.Helper()
		figures := []scoring.EndpointComparison{{Endpoint: ep, Comparisons: []scoring.Comparison{pair(compared)}},
			{Endpoint: other, Comparisons: []scoring.Comparison{pair(1000)}}}
		if err := s.Publish(ctx, replica, figures, at); err != nil {
			t.Fatal(err)
		}
	}
	publish(a, "a", 4, t0)
	publish(a, "a", 10, t0.Add(time.Second)) // replaces the first
	publish(b, "b", 6, t0.Add(time.Second))
	publish(b, "gone", 100, t0.Add(-time.Hour))
	got, err := b.Collect(ctx, ep, t0)
	if err != nil {
		t.Fatal(err)
	}
	sum := scoring.SumComparisons(got)
	if len(got) != 2 || len(sum) != 1 || sum[0].Compared != 16 || sum[0].Agreed != 8 || sum[0].Delta.Counts[0] != 16 {
		t.Errorf("collected %d comparisons summing to %+v, want a's 10 and b's 6 rows, 16 in all", len(got), sum)
	}
}

// TestDriftOfReplicas: two replicas publish their live drift histograms
// over one database; a publication replaces the replica's last, and an
// endpoint collects those published since, each with its replica.
func TestDriftOfReplicas(t *testing.T) {
	url := pgtest.DB(t)
	a, b := open(t, pgstore.Config{URL: url}).Comparisons(), open(t, pgstore.Config{URL: url}).Comparisons()
	ctx := context.Background()
	ep := process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "score"}
	figures := func(rows int64) []scoring.SharedDrift {
		return []scoring.SharedDrift{{Endpoint: ep, Version: "churn@1", Fingerprint: "f1",
			Histograms: drift.Histograms{Rows: rows, Features: []drift.Histogram{{Name: "x", Counts: []int64{rows - 1, 1}, Missing: 0}}}}}
	}
	t0 := time.Now()
	for _, p := range []struct {
		s       *pgstore.Comparisons
		replica string
		rows    int64
		at      time.Time
	}{{a, "a", 4, t0}, {a, "a", 10, t0.Add(time.Second)}, {b, "b", 6, t0.Add(time.Second)}, {b, "gone", 100, t0.Add(-time.Hour)}} {
		if err := p.s.PublishDrift(ctx, p.replica, figures(p.rows), p.at); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.CollectDrift(ctx, ep, t0)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	for _, f := range got {
		rows[f.Replica] = f.Histograms.Rows
		if f.Version != "churn@1" || f.Fingerprint != "f1" || len(f.Histograms.Features) != 1 || f.Histograms.Features[0].Counts[1] != 1 {
			t.Errorf("collected %+v", f)
		}
	}
	if len(got) != 2 || rows["a"] != 10 || rows["b"] != 6 {
		t.Errorf("collected the rows %v, want a's 10 and b's 6", rows)
	}
	if other, err := a.CollectDrift(ctx, process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "other"}, t0); err != nil || len(other) != 0 {
		t.Errorf("another endpoint collected %v, %v", other, err)
	}
}
