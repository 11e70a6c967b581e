package scoring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// TestAnsweringAcquire: a shadow takes a processor at once while answers
// and other shadows leave one idle, and waits while they take them all,
// until one is given back or its context ends.
func TestAnsweringAcquire(t *testing.T) {
	a := newAnswering(2)
	a.take(1) // an answer
	if err := a.acquire(context.Background()); err != nil {
		t.Fatalf("acquire with a processor idle: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire with an answer and a shadow on two processors returned %v, want it to wait until its context ended", err)
	}
	done := make(chan error)
	go func() { done <- a.acquire(context.Background()) }()
	a.give(1) // the answer is written
	if err := <-done; err != nil {
		t.Fatalf("acquire after the answer gave its processor back: %v", err)
	}
	if n := a.taken.Load(); n != 2 {
		t.Errorf("%d processors taken, want the 2 shadows'", n)
	}
	a.take(3) // a large answer takes its processors whatever shadows hold
	if n := a.taken.Load(); n != 5 {
		t.Errorf("%d processors taken, want 5", n)
	}
}

// TestScoreSlices: a shadow scores a batch in slices, their answers in
// the rows' order as one execution would give them; a process that is
// not row-wise scores it whole; and a shadow whose context ends while
// an answer takes the processor keeps the slices scored before it.
func TestScoreSlices(t *testing.T) {
	const rows = 1000
	x := make([]float64, rows)
	for i := range x {
		x[i] = float64(i)
	}
	tab, err := process.NewTable(rows, process.NumberColumn("x", x, nil))
	if err != nil {
		t.Fatal(err)
	}
	var slicesScored []int
	score := process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
		c, _ := in.Table.Lookup("x")
		n := in.Table.Rows()
		slicesScored = append(slicesScored, n)
		labels, conf := make([]string, n), make([]float64, n)
		for r, v := range c.Numbers {
			labels[r], conf[r] = fmt.Sprint(v), v/rows
		}
		return process.NewTable(n, process.TextColumn("prediction(y)", labels, nil), process.NumberColumn("confidence(a)", conf, nil))
	})
	p := process.ProcessInfo{Name: "m", Process: score, RowWise: true,
		Output: []process.ColumnSpec{{Name: "prediction(y)", Kind: process.Text}, {Name: "confidence(a)", Kind: process.Number}}}
	e := &engine{challenges: newChallenges(1), log: slog.Default()}
	answering := newAnswering(1)
	e.challenges.answering = answering
	// scoreSlices scores its first slice on a processor its caller holds,
	// and gives back every one it scores on.
	scoreSlices := func(ctx context.Context, p process.ProcessInfo) (*answers, int, error) {
		t.Helper()
		if err := answering.acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
		all, scored, _, err := e.scoreSlices(ctx, p, tab, process.EndpointRef{})
		return all, scored, err
	}

	all, scored, err := scoreSlices(context.Background(), p)
	if n := answering.taken.Load(); n != 0 {
		t.Errorf("%d processors taken after the shadow scored, want none", n)
	}
	if err != nil || scored != rows || all == nil || len(all.labels) != rows {
		t.Fatalf("scored %d of %d rows: %v", scored, rows, err)
	}
	if len(slicesScored) < 2 || slicesScored[0] != firstSlice {
		t.Errorf("slices %v, want several, the first of %d rows", slicesScored, firstSlice)
	}
	for r, l := range all.labels {
		if l != fmt.Sprint(r) || all.of("a")[r] != float64(r)/rows {
			t.Fatalf("row %d answered %q, %v: the slices' answers are out of order", r, l, all.of("a")[r])
		}
	}

	slicesScored = nil
	whole := p
	whole.RowWise = false
	if _, scored, err := scoreSlices(context.Background(), whole); err != nil || scored != rows || !slices.Equal(slicesScored, []int{rows}) {
		t.Errorf("a process not row-wise: slices %v, %d scored, %v; want one of %d", slicesScored, scored, err, rows)
	}

	slicesScored = nil
	busy := p
	busy.Process = process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
		if len(slicesScored) == 0 {
			answering.take(1) // an answer takes the one processor as the first slice is scored
		}
		return score(ctx, in)
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // ... and the shadow's deadline passes while it waits
		for !answering.waiting.Load() {
			runtime.Gosched()
		}
		cancel()
	}()
	all, scored, err = scoreSlices(ctx, busy)
	if err != nil {
		t.Fatalf("a shadow whose context ended while it waited failed: %v", err)
	}
	if n := answering.taken.Load(); n != 1 {
		t.Errorf("%d processors taken, want the answer's alone", n)
	}
	if scored != firstSlice || len(all.labels) != scored {
		t.Errorf("scored %d rows with %d answers, want the first slice of %d only", scored, len(all.labels), firstSlice)
	}
}
