package process

import (
	"context"
	"fmt"
	"math"
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
	// Margins holds the margins the model's scoring computed: Margins[g][r]
	// is row r's margin of group g, NaN where the model computed none. They
	// are what the contributions must add up to ([Explanation.Check]), so
	// an Explainer takes them from its scoring, not from its contributions.
	Margins [][]float64
}

// LocalAccuracy bounds how far the bias plus a row's contributions may be
// from the row's margin: |bias + Σ contributions − margin| may be at most
// LocalAccuracy × max(1, |bias| + Σ |contributions|). That is float32
// rounding over some thousand terms, as models that compute in float32
// (XGBoost, PMML in x-mathContext="float") sum their trees; a wrong
// attribution misses by far more.
const LocalAccuracy = 1e-4

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

// Check reports an error unless e is well formed for rows rows (a group
// at least, every group of rows × (features + 1) values and rows margins)
// and locally accurate: each row's bias plus its contributions is its
// margin within [LocalAccuracy]. A row has contributions (they are
// numbers) exactly when it has a margin. The error of a row that is not
// locally accurate is an [*LocalAccuracyError].
func (e *Explanation) Check(rows int) error {
	if e == nil || len(e.Groups) == 0 || len(e.Groups) != len(e.Values) {
		return fmt.Errorf("process: an explanation needs one set of values per group")
	}
	if len(e.Margins) != len(e.Groups) {
		return fmt.Errorf("process: an explanation needs the margins of its %d groups, not %d", len(e.Groups), len(e.Margins))
	}
	want := rows * (len(e.Features) + 1)
	for g, v := range e.Values {
		if len(v) != want {
			return fmt.Errorf("process: group %d of an explanation holds %d values, not %d rows × %d", g, len(v), rows, len(e.Features)+1)
		}
		if len(e.Margins[g]) != rows {
			return fmt.Errorf("process: group %d of an explanation holds %d margins, not %d", g, len(e.Margins[g]), rows)
		}
	}
	for g := range e.Groups {
		for r := range rows {
			if err := e.accurate(g, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// accurate checks the local accuracy of row r's explanation of group g.
func (e *Explanation) accurate(g, r int) error {
	margin := e.Margins[g][r]
	sum, scale := 0.0, 0.0
	for _, v := range e.Row(g, r) {
		sum += v
		scale += math.Abs(v)
	}
	switch {
	case sum == margin, math.IsNaN(sum) && math.IsNaN(margin): // an infinite margin, or none
		return nil
	case math.Abs(sum-margin) <= LocalAccuracy*max(1, scale):
		return nil
	}
	return &LocalAccuracyError{Row: r, Group: e.Groups[g], Margin: margin, Sum: sum}
}

// LocalAccuracyError says that a row's contributions do not add up to its
// margin: the model's explanation is not that of its predictions.
type LocalAccuracyError struct {
	Row    int     // the row, from 0
	Group  string  // the margin's group: a class, or "" for a model of one margin
	Margin float64 // the margin the model computed; NaN for none
	Sum    float64 // the bias plus the contributions; NaN for a row not explained
}

func (e *LocalAccuracyError) Error() string {
	of := ""
	if e.Group != "" {
		of = fmt.Sprintf(" of class %q", e.Group)
	}
	return fmt.Sprintf("process: row %d's contributions%s add up to %v, not to its margin %v", e.Row, of, e.Sum, e.Margin)
}
