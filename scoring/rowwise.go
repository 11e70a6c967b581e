package scoring

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// score calls x's process on x's input: in parts on several goroutines,
// one range of rows each, for a large input of a process that promises to
// answer each row alone ([process.ProcessInfo].RowWise); otherwise once.
func (e *engine) score(ctx context.Context, x *execution) (wire.Result, error) {
	rows := x.in.Table.Rows()
	n := wire.Parallelism()
	if !x.process.RowWise || rows < parallelRows || n < 2 {
		t, err := x.process.Process.Score(ctx, x.in)
		return wire.Result{Whole: t}, err
	}
	return e.scoreParts(ctx, x.process.Name, x.process.Process, x.in, min(n, rows/(parallelRows/2)))
}

// scoreParts scores in in n row ranges, each on a goroutine of its own
// but the last, which runs on this one, and checks that each range's
// result has its rows and the columns of the others. It takes the
// execution's parts as values, so that the execution itself stays on its
// caller's stack.
func (e *engine) scoreParts(ctx context.Context, name string, p process.Process, in process.Input, n int) (wire.Result, error) {
	rows := in.Table.Rows()
	results := make([]*process.Table, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		lo, hi := rows*k/n, rows*(k+1)/n
		part := func() {
			defer func() {
				if v := recover(); v != nil {
					e.log.ErrorContext(ctx, "scoring: process panicked", "process", name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
					errs[k] = fmt.Errorf("scoring: process %q panicked: %v", name, v)
				}
			}()
			pin := in
			pin.Table = in.Table.Slice(lo, hi)
			results[k], errs[k] = p.Score(ctx, pin)
			if errs[k] == nil {
				errs[k] = wire.CheckResult(hi-lo, results[k])
			}
		}
		if k == n-1 {
			part() // the last range on this goroutine
		} else {
			wg.Go(part)
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return wire.Result{}, err
		}
	}
	if err := sameColumns(name, results); err != nil {
		return wire.Result{}, err
	}
	return wire.Result{Parts: results}, nil
}

// sameColumns reports tables that do not have the same columns in the
// same order, of the same kinds.
func sameColumns(process string, parts []*process.Table) error {
	first := parts[0]
	for _, p := range parts {
		if p.NumColumns() != first.NumColumns() {
			return fmt.Errorf("scoring: process %q returned %d columns for some rows and %d for others", process, first.NumColumns(), p.NumColumns())
		}
		for i := range p.NumColumns() {
			if a, b := first.Column(i), p.Column(i); a.Name != b.Name || a.Kind != b.Kind {
				return fmt.Errorf("scoring: process %q returned column %d as %q (%s) for some rows and %q (%s) for others", process, i, a.Name, a.Kind, b.Name, b.Kind)
			}
		}
	}
	return nil
}
