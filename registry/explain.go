package registry

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/scorehub/scorehub/registry/process"
)

// explained returns p, the process of a model version whose schema is s,
// as an endpoint with explanations x serves it: its Score answers the
// model's result columns and then the contributions (see [Explain]). It
// fails with ErrUnavailable when the model cannot explain its predictions.
func explained(p process.ProcessInfo, s process.ModelSchema, x Explain) (process.ProcessInfo, error) {
	ex, ok := p.Process.(process.Explainer)
	switch {
	case !ok && s.Unexplained != "":
		return p, errorf(ErrUnavailable, "the endpoint explains its predictions, but this %s model cannot explain them: %s", s.Format, s.Unexplained)
	case !ok:
		return p, errorf(ErrUnavailable, "the endpoint explains its predictions, but a %s model of this kind cannot explain them", s.Format)
	}
	e := &explainer{scorer: p.Process, explainer: ex, x: x, prediction: predictionColumn(s)}
	for _, in := range s.Inputs {
		e.features = append(e.features, in.Name)
	}
	if groups := marginGroups(s); len(groups) > 1 && x.Class == ExplainAll {
		e.groups = groups
	}
	e.outputs = e.columns()
	p.Output = append(slices.Clone(p.Output), e.outputs...)
	p.Process = e
	return p, nil
}

// marginGroups returns the names of the margins a model of schema s
// computes: one per class for a classifier of more than two classes (a
// softmax or one-versus-all), else one, "".
func marginGroups(s process.ModelSchema) []string {
	if s.Task == process.Classification && len(s.Classes) > 2 {
		return s.Classes
	}
	return []string{""}
}

// predictionColumn returns the name of a classifier's predicted class
// column; "" for a model of another task.
func predictionColumn(s process.ModelSchema) string {
	if s.Task != process.Classification {
		return ""
	}
	for _, o := range s.Outputs {
		if o.Kind == process.Text {
			return o.Name
		}
	}
	return ""
}

// explainer is a model's process that answers contributions after its
// results.
type explainer struct {
	scorer     process.Process
	explainer  process.Explainer
	x          Explain
	features   []string
	groups     []string // the classes whose margins are all answered; nil: one margin a row
	prediction string   // the predicted class's column, to pick its margin
	outputs    []process.ColumnSpec
}

// columns returns the contribution columns e adds, in order.
func (e *explainer) columns() []process.ColumnSpec {
	var out []process.ColumnSpec
	add := func(prefix string) {
		for _, f := range e.features {
			out = append(out, process.ColumnSpec{Name: "contribution(" + prefix + f + ")", Kind: process.Number})
		}
		out = append(out, process.ColumnSpec{Name: "contribution(" + prefix + "bias)", Kind: process.Number})
	}
	if e.groups == nil {
		add("")
		return out
	}
	for _, g := range e.groups {
		add(g + ",")
	}
	return out
}

// Score answers the model's results, then the contributions.
func (e *explainer) Score(ctx context.Context, in process.Input) (*process.Table, error) {
	res, err := e.scorer.Score(ctx, in)
	if err != nil {
		return nil, err
	}
	ex, err := e.explainer.Explain(ctx, in)
	if err != nil {
		return nil, err
	}
	rows := in.Table.Rows()
	if err := ex.Check(rows); err != nil {
		return nil, err
	}
	if !slices.Equal(ex.Features, e.features) {
		return nil, fmt.Errorf("registry: the model explained the features %q, not its inputs %q", ex.Features, e.features)
	}
	cols := make([]process.Column, 0, res.NumColumns()+len(e.outputs))
	for i := range res.NumColumns() {
		cols = append(cols, *res.Column(i))
	}
	if e.groups != nil {
		if len(ex.Groups) != len(e.groups) {
			return nil, fmt.Errorf("registry: the model explained %d margins, not one per class (%d)", len(ex.Groups), len(e.groups))
		}
		for g := range e.groups {
			cols = append(cols, e.contributions(ex, rows, func(int) int { return g }, e.groups[g]+",")...)
		}
	} else {
		pick, err := e.pick(res, ex)
		if err != nil {
			return nil, err
		}
		cols = append(cols, e.contributions(ex, rows, pick, "")...)
	}
	return process.NewTable(rows, cols...)
}

// pick returns, for each row, the margin group explained: the only one, or
// that of the row's predicted class (-1 for a row without a prediction).
func (e *explainer) pick(res *process.Table, ex *process.Explanation) (func(int) int, error) {
	if len(ex.Groups) == 1 {
		return func(int) int { return 0 }, nil
	}
	pred, ok := res.Lookup(e.prediction)
	if e.prediction == "" || !ok {
		return nil, fmt.Errorf("registry: the model explained %d margins but answers no predicted class", len(ex.Groups))
	}
	return func(r int) int {
		label, ok := pred.Text(r)
		if !ok {
			return -1
		}
		return slices.Index(ex.Groups, label)
	}, nil
}

// contributions returns the columns of the contributions of the margin
// group(r) of each row r, named with prefix: null for a row without one,
// and, with Top, for all but the row's Top largest in magnitude.
func (e *explainer) contributions(ex *process.Explanation, rows int, group func(int) int, prefix string) []process.Column {
	n := len(e.features)
	values := make([][]float64, n+1)
	missing := make([][]bool, n+1)
	for f := range values {
		values[f] = make([]float64, rows)
		missing[f] = make([]bool, rows)
	}
	var order, idx []int // each row's top features, and the buffer they are sorted in
	for r := range rows {
		g := group(r)
		if g < 0 {
			for f := range values {
				values[f][r], missing[f][r] = math.NaN(), true
			}
			continue
		}
		row := ex.Row(g, r)
		for f, v := range row {
			values[f][r] = v
		}
		if e.x.Top > 0 && e.x.Top < n {
			idx = topFeatures(idx, row[:n])
			order = idx[:e.x.Top]
			for f := range n {
				if !slices.Contains(order, f) {
					values[f][r], missing[f][r] = math.NaN(), true
				}
			}
		}
	}
	cols := make([]process.Column, 0, n+1)
	for f := range n {
		cols = append(cols, process.NumberColumn("contribution("+prefix+e.features[f]+")", values[f], missing[f]))
	}
	return append(cols, process.NumberColumn("contribution("+prefix+"bias)", values[n], missing[n]))
}

// topFeatures returns the indices of row's values, the largest in
// magnitude first, the earlier feature first on a tie, in idx when it has
// room.
func topFeatures(idx []int, row []float64) []int {
	idx = slices.Grow(idx[:0], len(row))[:len(row)]
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		x, y := math.Abs(row[a]), math.Abs(row[b])
		switch {
		case x > y:
			return -1
		case x < y:
			return 1
		}
		return 0
	})
	return idx
}
