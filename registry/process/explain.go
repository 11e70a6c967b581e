package process

import (
	"context"
	"fmt"
)

// Explainer is implemented by a model's [Process] that can attribute each
// prediction to the model's inputs exactly: Explain returns, for every row
// of in.Table, each input's contribution to the row's raw margin and the
// bias, so that the bias plus the contributions is the margin the model
// computed for the row (local accuracy). The margin is the model's own
// space before its output transform: log-odds for a logistic objective,
// one raw score per class for softmax, the raw prediction for a
// regression. Tree models compute path-dependent TreeSHAP (Lundberg et al.
// 2018, Algorithm 2) with the split decisions their scoring makes.
//
// Explain follows the rules of [Process.Score]: it stops early when ctx is
// done, does not modify in.Table, and is safe for concurrent use.
type Explainer interface {
	Explain(ctx context.Context, in Input) (*Explanation, error)
}

// Explanation is the contributions an [Explainer] found for the rows of a
// table.
type Explanation struct {
	// Features names the inputs contributions are given for, in the
	// model's input order ([ModelSchema.Inputs]).
	Features []string
	// Groups names the margins a row has: one per class for a model that
	// computes a margin per class (softmax), their class names; one,
	// named "", for a model of one margin (binary logistic, regression).
	Groups []string
	// Values holds the contributions: Values[g] has, for each row r, the
	// len(Features)+1 numbers of group g at
	// [r*(len(Features)+1) : (r+1)*(len(Features)+1)], the features' in
	// order and then the bias.
	Values [][]float64
}

// Rows returns how many rows e explains.
func (e *Explanation) Rows() int {
	if len(e.Values) == 0 {
		return 0
	}
	return len(e.Values[0]) / (len(e.Features) + 1)
}

// Row returns the contributions of group g to row r: the features' in
// order, then the bias. The slice shares memory with e.
func (e *Explanation) Row(g, r int) []float64 {
	n := len(e.Features) + 1
	return e.Values[g][r*n : (r+1)*n]
}

// Check reports an error unless e is well formed for rows rows: a group
// at least, every group of rows × (features + 1) values.
func (e *Explanation) Check(rows int) error {
	if e == nil || len(e.Groups) == 0 || len(e.Groups) != len(e.Values) {
		return fmt.Errorf("process: an explanation needs one set of values per group")
	}
	want := rows * (len(e.Features) + 1)
	for g, v := range e.Values {
		if len(v) != want {
			return fmt.Errorf("process: group %d of an explanation holds %d values, not %d rows × %d", g, len(v), rows, len(e.Features)+1)
		}
	}
	return nil
}
