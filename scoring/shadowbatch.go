package scoring

import (
	"sync"

	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// maxShadowBatch bounds the rows one challenger's shadow batch gathers:
// rows past it, while the batch waits for a worker, are skipped.
const maxShadowBatch = 100_000

// shadowBatch gathers the rows one shadow challenger of one endpoint is
// yet to score, from every request answered while its last batch waited
// for a worker or ran, so that many small requests cost the challenger
// one execution, not one each. The rows are copied in as they come (the
// request's memory is reused once it is answered), as the challenger's
// inputs alone, and so are the champion's answers to them, so that the
// batch is compared with one pass and a request keeps nothing of its own
// in it but the IDs of rows whose predictions are kept.
//
// A batch is a pair's (see pairKey): its champion and challenger are
// one version each, so every request's answers have the same columns.
//
// While no task to score the batch is offered to a worker, the batch is
// empty: the request that adds the first rows offers the task, and the
// task takes every row gathered by the time it runs.
type shadowBatch struct {
	mu      sync.Mutex
	cols    []process.Column // the challenger's inputs, as the rows gathered hold them
	champ   answers          // the champion's answers to the rows gathered
	kept    []keptRows       // the rows gathered with IDs
	rows    int
	offered bool
}

// keptRows are the rows of a batch from lo on that one request added
// with IDs, so that the challenger's predictions of them are kept.
type keptRows struct {
	lo  int
	ids []string
}

// joined is what adding a request's rows to a batch did.
type joined int

const (
	joinedFirst joined = iota // the batch was empty: the caller offers the task that scores it
	joinedBatch               // the task offered already takes these rows too
	batchFull                 // not joined: the rows would take the batch past maxShadowBatch
	unanswered                // not joined: the champion's answer holds nothing to compare with
	wrongKind                 // not joined: a column holds values of another kind than the challenger reads
)

// add copies into the batch the inputs of the rows of t, the champion's
// answers to them in result, whose process declares outputs, and, when
// not nil, their IDs. It adds nothing unless it returns joinedFirst or
// joinedBatch: when the batch is full, when the result holds no answers
// shadowView would read, or when a column of t that the challenger reads
// holds values of another kind than it reads (which it would fail on).
func (b *shadowBatch) add(inputs []process.ColumnSpec, t *process.Table, result wire.Result, outputs []process.ColumnSpec, ids []string) joined {
	for _, in := range inputs {
		if c, found := t.Lookup(in.Name); found && c.Kind != in.Kind {
			return wrongKind
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n := t.Rows()
	if b.rows+n > maxShadowBatch {
		return batchFull
	}
	if !b.champ.appendResult(result, outputs) {
		return unanswered
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
	if ids != nil {
		b.kept = append(b.kept, keptRows{lo: b.rows, ids: ids})
	}
	b.rows += n
	if b.offered {
		return joinedBatch
	}
	b.offered = true
	return joinedFirst
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
// challenger's inputs, the champion's answers to them, and the rows kept
// with IDs, in order; a request that adds rows after it offers a task of
// its own.
func (b *shadowBatch) take() (*process.Table, *answers, []keptRows) {
	b.mu.Lock()
	cols, champ, kept, rows := b.cols, b.champ, b.kept, b.rows
	b.cols, b.champ, b.kept, b.rows, b.offered = nil, answers{}, nil, 0, false
	b.mu.Unlock()
	if rows == 0 {
		return nil, nil, nil
	}
	t, err := process.NewTable(rows, cols...)
	if err != nil {
		panic(err) // columns of rows rows each, by construction
	}
	return t, &champ, kept
}
