package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/internal/pgtest"
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
