// Package outcomestest is the conformance suite of [outcomes.Store]: the
// memory, file and PostgreSQL stores pass the same tests, so that a
// service reads the same joined records whichever keeps them.
package outcomestest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/process"
)

// Opener returns a new, empty store bounded by opts. Closing it at the end
// of the test (t.Cleanup) is the opener's to arrange; a test may close it
// first.
type Opener func(t *testing.T, opts outcomes.Options) outcomes.Store

// epoch is the suite's clock at the start of each test: whole seconds,
// which every store keeps exactly.
var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

var (
	churn = process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "live"}
	other = process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "test"}
)

// cmpOpts compare what a store returns with what the test expects: the
// stores return empty slices as nil, and a regressor's missing answer is
// NaN.
var cmpOpts = cmp.Options{cmpopts.EquateEmpty(), cmpopts.EquateNaNs()}

// Run runs the conformance suite on the stores open returns.
func Run(t *testing.T, open Opener) {
	ctx := context.Background()
	// start opens a store on a clock of its own, at epoch.
	start := func(t *testing.T, opts outcomes.Options) (outcomes.Store, *testutil.Clock) {
		t.Helper()
		clock := testutil.NewClock(epoch)
		opts.Now = clock.Now
		return open(t, opts), clock
	}

	t.Run("feedback joins every model's prediction of a row", func(t *testing.T) {
		s, _ := start(t, outcomes.Options{})
		champ := classified(churn, "a", "churn@3", "champion", "yes", epoch)
		shadow := classified(churn, "a", "churn@4", "shadow", "no", epoch)
		mustAppend(t, s, champ, shadow, classified(churn, "b", "churn@3", "champion", "no", epoch))
		fedAt := epoch.Add(time.Hour)
		yes := outcomes.Outcome{RowID: "a", IsLabel: true, Label: "yes"}
		checkApplied(t, mustFeed(t, s, churn, fedAt, yes), outcomes.Applied{Matched: 1})
		checkJoined(t, s, churn, time.Time{}, []outcomes.Joined{
			{Prediction: champ, Actual: yes, FedAt: fedAt},
			{Prediction: shadow, Actual: yes, FedAt: fedAt},
		})
		checkPending(t, s, churn, 1)
	})

	t.Run("predictions and outcomes come back as they were given", func(t *testing.T) {
		s, _ := start(t, outcomes.Options{})
		scored := epoch.Add(-90 * time.Minute)
		class := classified(churn, "c", "churn@3", "champion", "yes", scored)
		regr := outcomes.Prediction{Endpoint: other, RowID: "12345678901234567890", Model: "spend@1", Role: "split", Value: -1234.5625, At: scored}
		missing := outcomes.Prediction{Endpoint: other, RowID: "r2", Model: "spend@1", Role: "champion", Value: math.NaN(), At: scored}
		unanswered := outcomes.Prediction{Endpoint: churn, RowID: "d", Model: "churn@3", Role: "champion", At: scored}
		mustAppend(t, s, class, regr, missing, unanswered)
		fedAt := epoch.Add(24 * time.Hour)
		outC := outcomes.Outcome{RowID: "c", IsLabel: true, Label: "no"}
		outD := outcomes.Outcome{RowID: "d", IsLabel: true, Label: "ja, sí — \"quoted\""}
		mustFeed(t, s, churn, fedAt, outC, outD)
		outR := outcomes.Outcome{RowID: regr.RowID, Value: 1e-9}
		outM := outcomes.Outcome{RowID: "r2", Value: 0}
		mustFeed(t, s, other, fedAt, outR, outM)
		checkJoined(t, s, churn, time.Time{}, []outcomes.Joined{
			{Prediction: class, Actual: outC, FedAt: fedAt},
			{Prediction: unanswered, Actual: outD, FedAt: fedAt},
		})
		checkJoined(t, s, other, time.Time{}, []outcomes.Joined{
			{Prediction: regr, Actual: outR, FedAt: fedAt},
			{Prediction: missing, Actual: outM, FedAt: fedAt},
		})
	})

	t.Run("joined filters by endpoint and since, oldest outcome first", func(t *testing.T) {
		s, _ := start(t, outcomes.Options{})
		p := map[string]outcomes.Prediction{}
		for _, id := range []string{"r1", "r2", "r3", "r4"} {
			p[id] = classified(churn, id, "churn@3", "champion", "yes", epoch)
			mustAppend(t, s, p[id])
		}
		// The same row ID of another endpoint is another row.
		o1 := classified(other, "r1", "churn@3", "champion", "no", epoch)
		mustAppend(t, s, o1)
		yes := func(id string) outcomes.Outcome { return outcomes.Outcome{RowID: id, IsLabel: true, Label: "yes"} }
		t1, t2, t3 := epoch.Add(time.Hour), epoch.Add(2*time.Hour), epoch.Add(3*time.Hour)
		mustFeed(t, s, churn, t3, yes("r2"))
		// Fed later, of an earlier time: the outcome time orders.
		mustFeed(t, s, churn, t1, yes("r3"), yes("r1"))
		mustFeed(t, s, other, t2, yes("r1"))
		all := []outcomes.Joined{
			{Prediction: p["r3"], Actual: yes("r3"), FedAt: t1},
			{Prediction: p["r1"], Actual: yes("r1"), FedAt: t1},
			{Prediction: p["r2"], Actual: yes("r2"), FedAt: t3},
		}
		checkJoined(t, s, churn, time.Time{}, all)
		checkJoined(t, s, churn, t1, all)
		checkJoined(t, s, churn, t1.Add(time.Second), all[2:])
		checkJoined(t, s, churn, t3.Add(time.Second), nil)
		checkJoined(t, s, other, time.Time{}, []outcomes.Joined{{Prediction: o1, Actual: yes("r1"), FedAt: t2}})
		checkJoined(t, s, process.EndpointRef{Group: "DEFAULT", Path: "never", Alias: "scored"}, time.Time{}, nil)
		checkPending(t, s, churn, 1)
		checkPending(t, s, other, 0)
	})

	t.Run("unknown row IDs are counted and the first listed", func(t *testing.T) {
		s, _ := start(t, outcomes.Options{})
		mustAppend(t, s, classified(churn, "known", "churn@3", "champion", "yes", epoch))
		outs := []outcomes.Outcome{{RowID: "u0", IsLabel: true, Label: "no"}}
		var listed []string
		for i := range 25 {
			id := fmt.Sprintf("u%d", i)
			outs = append(outs, outcomes.Outcome{RowID: id, IsLabel: true, Label: "no"})
			if len(listed) < outcomes.MaxListedUnknown {
				listed = append(listed, id)
			}
			if i == 10 {
				outs = append(outs, outcomes.Outcome{RowID: "known", IsLabel: true, Label: "yes"})
			}
		}
		checkApplied(t, mustFeed(t, s, churn, epoch, outs...), outcomes.Applied{Matched: 1, Unknown: 26, UnknownIDs: listed})
		// The unknown outcomes were not kept: a row scored after them
		// waits for its own.
		mustAppend(t, s, classified(churn, "u3", "churn@3", "champion", "yes", epoch))
		checkPending(t, s, churn, 1)
		checkApplied(t, mustFeed(t, s, churn, epoch, outcomes.Outcome{RowID: "u3", IsLabel: true, Label: "yes"}), outcomes.Applied{Matched: 1})
	})

	t.Run("a second outcome of a row is a duplicate that changes nothing", func(t *testing.T) {
		s, _ := start(t, outcomes.Options{})
		p := map[string]outcomes.Prediction{}
		for _, id := range []string{"a", "b", "c", "d", "e"} {
			p[id] = classified(churn, id, "churn@3", "champion", "yes", epoch)
			mustAppend(t, s, p[id])
		}
		label := func(id, l string) outcomes.Outcome { return outcomes.Outcome{RowID: id, IsLabel: true, Label: l} }
		t1, t2 := epoch.Add(time.Hour), epoch.Add(2*time.Hour)
		checkApplied(t, mustFeed(t, s, churn, t1, label("a", "yes")), outcomes.Applied{Matched: 1})
		checkApplied(t, mustFeed(t, s, churn, t2, label("a", "no"), label("b", "no")), outcomes.Applied{Matched: 1, Duplicates: 1})
		batch := []outcomes.Outcome{label("c", "yes"), label("d", "no")}
		checkApplied(t, mustFeed(t, s, churn, t2, batch...), outcomes.Applied{Matched: 2})
		checkApplied(t, mustFeed(t, s, churn, t2.Add(time.Minute), batch...), outcomes.Applied{Duplicates: 2})
		// Within one batch, the first of a row is kept.
		checkApplied(t, mustFeed(t, s, churn, t2, label("e", "yes"), label("e", "no")), outcomes.Applied{Matched: 1, Duplicates: 1})
		checkJoined(t, s, churn, time.Time{}, []outcomes.Joined{
			{Prediction: p["a"], Actual: label("a", "yes"), FedAt: t1},
			{Prediction: p["b"], Actual: label("b", "no"), FedAt: t2},
			{Prediction: p["c"], Actual: label("c", "yes"), FedAt: t2},
			{Prediction: p["d"], Actual: label("d", "no"), FedAt: t2},
			{Prediction: p["e"], Actual: label("e", "yes"), FedAt: t2},
		})
	})

	t.Run("a batch that fails changes nothing", func(t *testing.T) {
		s, _ := start(t, outcomes.Options{})
		a := classified(churn, "a", "churn@3", "champion", "yes", epoch)
		mustAppend(t, s, a)
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		yes := outcomes.Outcome{RowID: "a", IsLabel: true, Label: "yes"}
		if got, err := s.Feedback(canceled, churn, []outcomes.Outcome{yes}, epoch); !errors.Is(err, context.Canceled) {
			t.Fatalf("Feedback with a canceled context: %+v, %v; want context.Canceled", got, err)
		}
		if err := s.Append(canceled, []outcomes.Prediction{classified(churn, "b", "churn@3", "champion", "yes", epoch)}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Append with a canceled context: %v, want context.Canceled", err)
		}
		checkJoined(t, s, churn, time.Time{}, nil)
		checkPending(t, s, churn, 1)
		// The same batch goes through afterwards, as the first.
		checkApplied(t, mustFeed(t, s, churn, epoch, yes), outcomes.Applied{Matched: 1})
		checkJoined(t, s, churn, time.Time{}, []outcomes.Joined{{Prediction: a, Actual: yes, FedAt: epoch}})
	})

	t.Run("a prediction appended twice keeps the first", func(t *testing.T) {
		s, _ := start(t, outcomes.Options{})
		first := classified(churn, "a", "churn@3", "champion", "yes", epoch)
		shadow := classified(churn, "a", "churn@4", "shadow", "yes", epoch)
		mustAppend(t, s, first)
		mustAppend(t, s,
			classified(churn, "a", "churn@3", "champion", "no", epoch.Add(time.Minute)),
			shadow,
			classified(churn, "a", "churn@4", "shadow", "no", epoch.Add(time.Minute)))
		checkPending(t, s, churn, 1)
		yes := outcomes.Outcome{RowID: "a", IsLabel: true, Label: "yes"}
		mustFeed(t, s, churn, epoch, yes)
		checkJoined(t, s, churn, time.Time{}, []outcomes.Joined{
			{Prediction: first, Actual: yes, FedAt: epoch},
			{Prediction: shadow, Actual: yes, FedAt: epoch},
		})
	})

	t.Run("a prediction appended after its row's outcome is joined with it", func(t *testing.T) {
		s, _ := start(t, outcomes.Options{})
		champ := classified(churn, "a", "churn@3", "champion", "yes", epoch)
		mustAppend(t, s, champ)
		yes := outcomes.Outcome{RowID: "a", IsLabel: true, Label: "yes"}
		mustFeed(t, s, churn, epoch.Add(time.Hour), yes)
		late := classified(churn, "a", "churn@4", "shadow", "no", epoch.Add(2*time.Hour))
		mustAppend(t, s, late)
		checkPending(t, s, churn, 0)
		checkJoined(t, s, churn, time.Time{}, []outcomes.Joined{
			{Prediction: champ, Actual: yes, FedAt: epoch.Add(time.Hour)},
			{Prediction: late, Actual: yes, FedAt: epoch.Add(time.Hour)},
		})
	})

	t.Run("pending counts rows without an outcome", func(t *testing.T) {
		s, _ := start(t, outcomes.Options{})
		checkPending(t, s, churn, 0)
		mustAppend(t, s,
			classified(churn, "a", "churn@3", "champion", "yes", epoch),
			classified(churn, "a", "churn@4", "shadow", "yes", epoch),
			classified(churn, "b", "churn@3", "champion", "yes", epoch),
			classified(other, "a", "churn@3", "champion", "yes", epoch))
		checkPending(t, s, churn, 2)
		checkPending(t, s, other, 1)
		mustFeed(t, s, churn, epoch, outcomes.Outcome{RowID: "a", IsLabel: true, Label: "no"})
		checkPending(t, s, churn, 1)
		checkPending(t, s, other, 1)
		mustFeed(t, s, churn, epoch, outcomes.Outcome{RowID: "b", IsLabel: true, Label: "no"})
		checkPending(t, s, churn, 0)
	})

	t.Run("retention drops the oldest records with their outcomes", func(t *testing.T) {
		s, clock := start(t, outcomes.Options{Retention: time.Hour})
		mustAppend(t, s,
			classified(churn, "old", "churn@3", "champion", "yes", epoch),
			classified(churn, "old", "churn@4", "shadow", "yes", epoch))
		mustFeed(t, s, churn, epoch.Add(10*time.Minute), outcomes.Outcome{RowID: "old", IsLabel: true, Label: "yes"})
		mid := classified(churn, "mid", "churn@3", "champion", "yes", clock.Advance(30*time.Minute))
		mustAppend(t, s, mid)

		// Past the retention of "old", not of "mid"; a store applies
		// its bounds at the latest on an Append a PruneInterval on.
		now := clock.Advance(30*time.Minute + outcomes.PruneInterval)
		mustAppend(t, s, classified(churn, "new", "churn@3", "champion", "yes", now))
		checkJoined(t, s, churn, time.Time{}, nil)
		checkPending(t, s, churn, 2)
		old := outcomes.Outcome{RowID: "old", IsLabel: true, Label: "no"}
		checkApplied(t, mustFeed(t, s, churn, now, old), outcomes.Applied{Unknown: 1, UnknownIDs: []string{"old"}})

		// Scored again, "old" is a new row, without the outcome it had.
		again := classified(churn, "old", "churn@3", "champion", "no", now)
		mustAppend(t, s, again)
		checkPending(t, s, churn, 3)
		checkApplied(t, mustFeed(t, s, churn, now, old), outcomes.Applied{Matched: 1})
		checkJoined(t, s, churn, time.Time{}, []outcomes.Joined{{Prediction: again, Actual: old, FedAt: now}})

		// Then "mid" is past it too.
		now = clock.Advance(30*time.Minute + outcomes.PruneInterval)
		mustAppend(t, s, classified(churn, "newer", "churn@3", "champion", "yes", now))
		checkPending(t, s, churn, 2) // new, newer
		checkApplied(t, mustFeed(t, s, churn, now, outcomes.Outcome{RowID: "mid", IsLabel: true, Label: "yes"}), outcomes.Applied{Unknown: 1, UnknownIDs: []string{"mid"}})
	})

	t.Run("max records drops the earliest appended first", func(t *testing.T) {
		s, clock := start(t, outcomes.Options{MaxRecords: 4})
		aShadow := classified(churn, "a", "churn@4", "shadow", "yes", epoch)
		mustAppend(t, s, classified(churn, "a", "churn@3", "champion", "yes", epoch), aShadow)
		yes := outcomes.Outcome{RowID: "a", IsLabel: true, Label: "yes"}
		mustFeed(t, s, churn, epoch, yes)
		mustAppend(t, s, classified(churn, "b", "churn@3", "champion", "yes", epoch), classified(churn, "c", "churn@3", "champion", "yes", epoch))

		// A fifth prediction pushes out the first; its row lives on in
		// its other prediction, with its outcome.
		now := clock.Advance(outcomes.PruneInterval)
		mustAppend(t, s, classified(churn, "d", "churn@3", "champion", "yes", now))
		checkJoined(t, s, churn, time.Time{}, []outcomes.Joined{{Prediction: aShadow, Actual: yes, FedAt: epoch}})
		checkPending(t, s, churn, 3)

		now = clock.Advance(outcomes.PruneInterval)
		mustAppend(t, s, classified(churn, "e", "churn@3", "champion", "yes", now), classified(churn, "f", "churn@3", "champion", "yes", now))
		checkJoined(t, s, churn, time.Time{}, nil)
		checkPending(t, s, churn, 4)
		checkApplied(t, mustFeed(t, s, churn, now,
			outcomes.Outcome{RowID: "a", IsLabel: true, Label: "yes"},
			outcomes.Outcome{RowID: "b", IsLabel: true, Label: "yes"},
			outcomes.Outcome{RowID: "c", IsLabel: true, Label: "yes"}),
			outcomes.Applied{Matched: 1, Unknown: 2, UnknownIDs: []string{"a", "b"}})
	})

	t.Run("concurrent appends, feedback and reads", func(t *testing.T) {
		s, _ := start(t, outcomes.Options{})
		const writers, rows = 6, 25
		var (
			wg                sync.WaitGroup
			mu                sync.Mutex
			matched, answered int
		)
		count := func(a outcomes.Applied) {
			mu.Lock()
			defer mu.Unlock()
			matched += a.Matched
			answered += a.Matched + a.Duplicates + a.Unknown
		}
		stop := make(chan struct{})
		var readers sync.WaitGroup
		for range 2 {
			readers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.Joined(ctx, churn, time.Time{}); err != nil {
						t.Error(err)
						return
					}
					if _, err := s.Pending(ctx, churn); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		for w := range writers {
			wg.Go(func() {
				for i := range rows {
					id := fmt.Sprintf("w%d-%d", w, i)
					err := s.Append(ctx, []outcomes.Prediction{
						classified(churn, id, "churn@3", "champion", "yes", epoch),
						classified(churn, id, "churn@4", "shadow", "no", epoch),
					})
					if err != nil {
						t.Error(err)
						return
					}
					// Another writer's row too, which may not be
					// scored yet or fed already.
					peer := fmt.Sprintf("w%d-%d", (w+1)%writers, i)
					a, err := s.Feedback(ctx, churn, []outcomes.Outcome{
						{RowID: id, IsLabel: true, Label: "yes"},
						{RowID: peer, IsLabel: true, Label: "yes"},
					}, epoch.Add(time.Hour))
					if err != nil {
						t.Error(err)
						return
					}
					count(a)
				}
			})
		}
		wg.Wait()
		close(stop)
		readers.Wait()
		if matched != writers*rows || answered != 2*writers*rows {
			t.Errorf("feedback matched %d of %d outcomes, want %d of %d", matched, answered, writers*rows, 2*writers*rows)
		}
		joined, err := s.Joined(ctx, churn, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(joined) != 2*writers*rows {
			t.Errorf("%d joined predictions, want %d", len(joined), 2*writers*rows)
		}
		checkPending(t, s, churn, 0)
	})

	t.Run("a store keeps its own copy", func(t *testing.T) {
		s, _ := start(t, outcomes.Options{})
		p := classified(churn, "a", "churn@3", "champion", "yes", epoch)
		given := p
		given.Classes, given.Confidences = slices.Clone(p.Classes), slices.Clone(p.Confidences)
		mustAppend(t, s, given)
		given.Classes[0], given.Confidences[0] = "changed by the caller", -1
		yes := outcomes.Outcome{RowID: "a", IsLabel: true, Label: "yes"}
		mustFeed(t, s, churn, epoch, yes)
		want := []outcomes.Joined{{Prediction: p, Actual: yes, FedAt: epoch}}
		got := checkJoined(t, s, churn, time.Time{}, want)
		if len(got) == 1 {
			got[0].Classes[0], got[0].Confidences[0] = "changed by a reader", -1
		}
		checkJoined(t, s, churn, time.Time{}, want)
	})

	t.Run("empty batches change nothing", func(t *testing.T) {
		s, _ := start(t, outcomes.Options{})
		if err := s.Append(ctx, nil); err != nil {
			t.Errorf("Append of no predictions: %v", err)
		}
		a, err := s.Feedback(ctx, churn, nil, epoch)
		if err != nil {
			t.Errorf("Feedback of no outcomes: %v", err)
		}
		checkApplied(t, a, outcomes.Applied{})
		checkPending(t, s, churn, 0)
	})

	t.Run("a closed store fails with ErrClosed", func(t *testing.T) {
		s, _ := start(t, outcomes.Options{})
		mustAppend(t, s, classified(churn, "a", "churn@3", "champion", "yes", epoch))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		errs := map[string]error{"Append": s.Append(ctx, []outcomes.Prediction{classified(churn, "b", "churn@3", "champion", "yes", epoch)})}
		_, errs["Feedback"] = s.Feedback(ctx, churn, []outcomes.Outcome{{RowID: "a", IsLabel: true, Label: "yes"}}, epoch)
		_, errs["Joined"] = s.Joined(ctx, churn, time.Time{})
		_, errs["Pending"] = s.Pending(ctx, churn)
		for call, err := range errs {
			if !errors.Is(err, outcomes.ErrClosed) {
				t.Errorf("%s after Close: %v, want ErrClosed", call, err)
			}
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// classified is a classifier's prediction of two classes.
func classified(ep process.EndpointRef, id, model, role, label string, at time.Time) outcomes.Prediction {
	conf := []float64{0.75, 0.25}
	if label == "yes" {
		conf = []float64{0.25, 0.75}
	}
	return outcomes.Prediction{Endpoint: ep, RowID: id, Model: model, Role: role, Label: label,
		Classes: []string{"no", "yes"}, Confidences: conf, At: at}
}

func mustAppend(t *testing.T, s outcomes.Store, ps ...outcomes.Prediction) {
	t.Helper()
	if err := s.Append(context.Background(), ps); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

func mustFeed(t *testing.T, s outcomes.Store, ep process.EndpointRef, at time.Time, outs ...outcomes.Outcome) outcomes.Applied {
	t.Helper()
	a, err := s.Feedback(context.Background(), ep, outs, at)
	if err != nil {
		t.Fatalf("Feedback: %v", err)
	}
	return a
}

func checkApplied(t *testing.T, got, want outcomes.Applied) {
	t.Helper()
	if diff := cmp.Diff(want, got, cmpOpts); diff != "" {
		t.Errorf("Applied (-want +got):\n%s", diff)
	}
}

func checkJoined(t *testing.T, s outcomes.Store, ep process.EndpointRef, since time.Time, want []outcomes.Joined) []outcomes.Joined {
	t.Helper()
	got, err := s.Joined(context.Background(), ep, since)
	if err != nil {
		t.Fatalf("Joined: %v", err)
	}
	if diff := cmp.Diff(want, got, cmpOpts); diff != "" {
		t.Errorf("Joined(%s, since %v) (-want +got):\n%s", ep.Alias, since, diff)
	}
	return got
}

func checkPending(t *testing.T, s outcomes.Store, ep process.EndpointRef, want int) {
	t.Helper()
	got, err := s.Pending(context.Background(), ep)
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	if got != want {
		t.Errorf("Pending(%s) = %d, want %d", ep.Alias, got, want)
	}
}
