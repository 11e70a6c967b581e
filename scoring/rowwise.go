package scoring

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/scorehub/scorehub/registry"
)

// score calls x's process on x's input: in parts on several goroutines,
// one range of rows each, for a large input of a process that promises to
// answer each row alone ([registry.ProcessInfo].RowWise); otherwise once.
func (e *engine) score(ctx context.Context, x *execution) (*registry.Table, error) {
	rows := x.in.Table.Rows()
	n := parallelism()
	if !x.process.RowWise || rows < parallelRows || n < 2 {
		return x.process.Process.Score(ctx, x.in)
	}
	return e.scoreParts(ctx, x.process.Name, x.process.Process, x.in, min(n, rows/(parallelRows/2)))
}

// scoreParts scores in in n row ranges, each on a goroutine of its own
// but the last, which runs on this one, and joins the results. It takes
// the execution's parts as values, so that the execution itself stays on
// its caller's stack.
func (e *engine) scoreParts(ctx context.Context, name string, p registry.Process, in registry.Input, n int) (*registry.Table, error) {
	rows := in.Table.Rows()
	results := make([]*registry.Table, n)
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
				errs[k] = checkResult(hi-lo, results[k])
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
			return nil, err
		}
	}
	return joinRows(name, results)
}

// joinRows returns the tables' rows one after the other, in one table. The
// tables must have the same columns in the same order, of the same kinds.
func joinRows(process string, parts []*registry.Table) (*registry.Table, error) {
	first := parts[0]
	rows := 0
	for _, p := range parts {
		if p.NumColumns() != first.NumColumns() {
			return nil, fmt.Errorf("scoring: process %q returned %d columns for some rows and %d for others", process, first.NumColumns(), p.NumColumns())
		}
		for i := range p.NumColumns() {
			if a, b := first.Column(i), p.Column(i); a.Name != b.Name || a.Kind != b.Kind {
				return nil, fmt.Errorf("scoring: process %q returned column %d as %q (%s) for some rows and %q (%s) for others", process, i, a.Name, a.Kind, b.Name, b.Kind)
			}
		}
		rows += p.Rows()
	}
	cols := make([]registry.Column, first.NumColumns())
	for i := range cols {
		c := first.Column(i)
		col := registry.Column{Name: c.Name, Kind: c.Kind}
		missing := false
		for _, p := range parts {
			missing = missing || p.Column(i).Missing != nil
		}
		if missing {
			col.Missing = make([]bool, 0, rows)
		}
		if c.Kind == registry.Number {
			col.Numbers = make([]float64, 0, rows)
		} else {
			col.Texts = make([]string, 0, rows)
		}
		for _, p := range parts {
			pc := p.Column(i)
			col.Numbers = append(col.Numbers, pc.Numbers...)
			col.Texts = append(col.Texts, pc.Texts...)
			if missing {
				if pc.Missing != nil {
					col.Missing = append(col.Missing, pc.Missing...)
				} else {
					col.Missing = append(col.Missing, make([]bool, p.Rows())...)
				}
			}
		}
		cols[i] = col
	}
	return registry.NewTable(rows, cols...)
}
