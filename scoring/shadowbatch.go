package scoring

import (
	"sync"

	"github.com/scorehub/scorehub/registry/process"
)

// maxShadowBatch bounds the rows one challenger's shadow batch gathers:
// rows past it, while the batch waits for a worker, are skipped.
const maxShadowBatch = 100_000

// shadowBatch gathers the rows one shadow challenger of one endpoint is
// yet to score, from every request answered while its last batch waited
// for a worker or ran, so that many small requests cost the challenger
// one execution, not one each. The rows are copied in as they come (the
// request's memory is reused once it is answered), as the challenger's
// inputs alone.
//
// While no task to score the batch is offered to a worker, the batch is
// empty: the request that adds the first rows offers the task, and the
// task takes every row gathered by the time it runs.
type shadowBatch struct {
	mu      sync.Mutex
	cols    []process.Column // the challenger's inputs, as the rows gathered hold them
	parts   []batchPart
	rows    int
	offered bool
}

// batchPart is one request's rows in a batch: how many, the champion's
// answers to them, their IDs, and where the challenger's predictions of
// them go.
type batchPart struct {
	rows  int
	champ *answers
	ids   []string
	keep  func(ids []string, a *answers)
}

// add copies the inputs of the rows of t into the batch as part p, and
// reports whether it did and whether the caller is to offer the task
// that scores the batch (the batch was empty). It does not when the
// batch is full, or when a column of t that the challenger reads holds
// values of another kind than it reads (which it would fail on): wrong
// is then true.
func (b *shadowBatch) add(inputs []process.ColumnSpec, t *process.Table, p batchPart) (ok, first, wrong bool) {
	for _, in := range inputs {
		if c, found := t.Lookup(in.Name); found && c.Kind != in.Kind {
			return false, false, true
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n := t.Rows()
	if b.rows+n > maxShadowBatch {
		return false, false, false
	}
	if b.cols == nil {
		b.cols = make([]process.Column, len(inputs))
		for i, in := range inputs {
			b.cols[i] = process.Column{Name: in.Name, Kind: in.Kind}
		}
	}
	for i := range b.cols {
		appendRows(&b.cols[i], t, b.rows, n)
	}
	b.rows += n
	b.parts = append(b.parts, p)
	first = !b.offered
	b.offered = true
	return true, first, false
}

// appendRows appends the n rows of t's column named as bc to bc, which holds
// had rows: missing values where t has no such column. bc keeps no
// missing marks until a row is missing.
func appendRows(bc *process.Column, t *process.Table, had, n int) {
	c, found := t.Lookup(bc.Name)
	if found {
		if bc.Kind == process.Number {
			bc.Numbers = append(bc.Numbers, c.Numbers...)
		} else {
			bc.Texts = append(bc.Texts, c.Texts...)
		}
	} else if bc.Kind == process.Number {
		bc.Numbers = append(bc.Numbers, make([]float64, n)...)
	} else {
		bc.Texts = append(bc.Texts, make([]string, n)...)
	}
	switch {
	case found && c.Missing == nil && bc.Missing == nil:
		return
	case bc.Missing == nil:
		bc.Missing = make([]bool, had, had+n)
	}
	switch {
	case !found:
		for range n {
			bc.Missing = append(bc.Missing, true)
		}
	case c.Missing != nil:
		bc.Missing = append(bc.Missing, c.Missing...)
	default:
		bc.Missing = append(bc.Missing, make([]bool, n)...)
	}
}

// take empties the batch and returns its rows as a table of the
// challenger's inputs, and its parts in order; a request that adds rows
// after it offers a task of its own.
func (b *shadowBatch) take() (*process.Table, []batchPart) {
	b.mu.Lock()
	cols, parts, rows := b.cols, b.parts, b.rows
	b.cols, b.parts, b.rows, b.offered = nil, nil, 0, false
	b.mu.Unlock()
	if rows == 0 {
		return nil, nil
	}
	t, err := process.NewTable(rows, cols...)
	if err != nil {
		panic(err) // columns of rows rows each, by construction
	}
	return t, parts
}
