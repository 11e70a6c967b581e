package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/outcomes/outcomestest"
	"github.com/scorehub/scorehub/registry/process"
)

func TestOutcomesConformance(t *testing.T) {
	outcomestest.Run(t, func(t *testing.T, opts outcomes.Options) outcomes.Store {
		s := open(t, pgstore.Config{URL: pgtest.DB(t)}).Outcomes(opts)
		t.Cleanup(func() { s.Close() })
		return s
	})
}

var (
	logEpoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	logRef   = process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "live"}
)

func logPrediction(id string, at time.Time) outcomes.Prediction {
	return outcomes.Prediction{Endpoint: logRef, RowID: id, Model: "churn@3", Role: "champion", Label: "yes",
		Classes: []string{"no", "yes"}, Confidences: []float64{0.4, 0.6}, At: at}
}

func logYes(id string) outcomes.Outcome {
	return outcomes.Outcome{RowID: id, IsLabel: true, Label: "yes"}
}

func mustLogAppend(t *testing.T, s outcomes.Store, ps ...outcomes.Prediction) {
	t.Helper()
	if err := s.Append(context.Background(), ps); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

func mustLogPending(t *testing.T, s outcomes.Store, want int) {
	t.Helper()
	n, err := s.Pending(context.Background(), logRef)
	if err != nil || n != want {
		t.Errorf("Pending = %d, %v; want %d", n, err, want)
	}
}

// TestOutcomesShared runs two DBs on one database, as two replicas do:
// what one appends the other feeds back, and the same batch fed through
// both at once is recorded once.
func TestOutcomesShared(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	a := open(t, pgstore.Config{URL: url}).Outcomes(outcomes.Options{})
	b := open(t, pgstore.Config{URL: url}).Outcomes(outcomes.Options{})
	const rows = 40
	var batch []outcomes.Outcome
	for i := range rows {
		mustLogAppend(t, a, logPrediction(fmt.Sprint(i), time.Now()))
		batch = append(batch, logYes(fmt.Sprint(i)))
	}
	mustLogPending(t, b, rows)

	var wg sync.WaitGroup
	applied := make([]outcomes.Applied, 6)
	for i := range applied {
		s := []outcomes.Store{a, b}[i%2]
		wg.Go(func() {
			var err error
			if applied[i], err = s.Feedback(ctx, logRef, batch, time.Now()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var matched, duplicates int
	for _, ap := range applied {
		matched += ap.Matched
		duplicates += ap.Duplicates
	}
	if matched != rows || duplicates != rows*(len(applied)-1) {
		t.Errorf("the batch fed %d times through two replicas matched %d and counted %d duplicates; want %d and %d",
			len(applied), matched, duplicates, rows, rows*(len(applied)-1))
	}
	joined, err := a.Joined(ctx, logRef, time.Time{})
	if err != nil || len(joined) != rows {
		t.Errorf("Joined through the other replica: %d, %v; want %d", len(joined), err, rows)
	}
}

// TestOutcomesRefusedBatch feeds a batch PostgreSQL refuses one outcome
// of: none of it is recorded.
func TestOutcomesRefusedBatch(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgstore.Config{URL: pgtest.DB(t)}).Outcomes(outcomes.Options{Now: func() time.Time { return logEpoch }})
	mustLogAppend(t, s, logPrediction("a", logEpoch), logPrediction("b", logEpoch))
	bad := outcomes.Outcome{RowID: "b", IsLabel: true, Label: "no\x00pe"}
	if ap, err := s.Feedback(ctx, logRef, []outcomes.Outcome{logYes("a"), bad}, logEpoch); err == nil {
		t.Fatalf("a label holding a NUL byte was recorded: %+v", ap)
	}
	mustLogPending(t, s, 2)
	if joined, err := s.Joined(ctx, logRef, time.Time{}); err != nil || len(joined) != 0 {
		t.Errorf("Joined after the refused batch: %d, %v; want none", len(joined), err)
	}
	ap, err := s.Feedback(ctx, logRef, []outcomes.Outcome{logYes("a"), logYes("b")}, logEpoch)
	if err != nil || ap.Matched != 2 {
		t.Errorf("the batch without the NUL byte: %+v, %v; want both matched", ap, err)
	}
	if err := s.Append(ctx, []outcomes.Prediction{logPrediction("c\x00", logEpoch)}); err == nil {
		t.Error("a row ID holding a NUL byte was appended")
	}
}

// TestOutcomesBulk appends, feeds back and prunes more than one
// statement or transaction of the store handles at once.
func TestOutcomesBulk(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	clock := testutil.NewClock(logEpoch)
	s := open(t, pgstore.Config{URL: url}).Outcomes(outcomes.Options{MaxRecords: 500, Retention: time.Hour, Now: clock.Now})
	ps := make([]outcomes.Prediction, 2500)
	outs := make([]outcomes.Outcome, len(ps))
	for i := range ps {
		ps[i] = logPrediction(fmt.Sprintf("r%04d", i), logEpoch)
		outs[i] = logYes(ps[i].RowID)
	}
	// The first Append applies the bounds: the 500 appended last stay.
	mustLogAppend(t, s, ps...)
	mustLogPending(t, s, 500)
	ap, err := s.Feedback(ctx, logRef, outs, logEpoch)
	if err != nil {
		t.Fatal(err)
	}
	if ap.Matched != 500 || ap.Unknown != 2000 || len(ap.UnknownIDs) != outcomes.MaxListedUnknown || ap.UnknownIDs[0] != "r0000" {
		t.Errorf("Feedback = {Matched: %d, Unknown: %d, UnknownIDs: %d from %q}; want 500, 2000, %d from r0000",
			ap.Matched, ap.Unknown, len(ap.UnknownIDs), ap.UnknownIDs[0], outcomes.MaxListedUnknown)
	}
	// Past the retention, the 500 go, and their outcomes with them.
	now := clock.Advance(time.Hour + outcomes.PruneInterval)
	mustLogAppend(t, s, logPrediction("new", now))
	mustLogPending(t, s, 1)
	for table, want := range map[string]int{"outcome_predictions": 1, "outcome_actuals": 0} {
		if got := query[int](t, url, "SELECT count(*) FROM "+table); got != want {
			t.Errorf("%s holds %d rows, want %d", table, got, want)
		}
	}
}

// TestOutcomesPruneInterval checks that the bounds are applied in bulk,
// once a PruneInterval of the store's clock, not on every Append.
func TestOutcomesPruneInterval(t *testing.T) {
	clock := testutil.NewClock(logEpoch)
	s := open(t, pgstore.Config{URL: pgtest.DB(t)}).Outcomes(outcomes.Options{MaxRecords: 2, Now: clock.Now})
	for i := range 4 {
		mustLogAppend(t, s, logPrediction(fmt.Sprint(i), clock.Now()))
	}
	// Applied on the first Append only, when it held one.
	mustLogPending(t, s, 4)
	clock.Advance(outcomes.PruneInterval - time.Second)
	mustLogAppend(t, s, logPrediction("4", clock.Now()))
	mustLogPending(t, s, 5)
	clock.Advance(time.Second)
	mustLogAppend(t, s, logPrediction("5", clock.Now()))
	mustLogPending(t, s, 2)
}

func TestOutcomesClosedDB(t *testing.T) {
	ctx := context.Background()
	db := open(t, pgstore.Config{URL: pgtest.DB(t)})
	s := db.Outcomes(outcomes.Options{})
	mustLogAppend(t, s, logPrediction("a", time.Now()))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, []outcomes.Prediction{logPrediction("b", time.Now())}); !errors.Is(err, outcomes.ErrClosed) {
		t.Errorf("Append after the DB closed: %v, want ErrClosed", err)
	}
	if _, err := s.Pending(ctx, logRef); !errors.Is(err, outcomes.ErrClosed) {
		t.Errorf("Pending after the DB closed: %v, want ErrClosed", err)
	}
}
