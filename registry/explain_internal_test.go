package registry

import (
	"context"
	"math"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// threeClasses is a model of three margins, one per class, that predicts
// the class of the largest: row r's margins are r+1 for class a, 2 for b
// and 0 for c, each its input x's contribution times its class's weight
// plus a bias.
type threeClasses struct{}

var weights = []float64{1, 0, -1} // of x, by class; bias 1, 2, 1

func (threeClasses) Score(_ context.Context, in process.Input) (*process.Table, error) {
	x, _ := in.Table.Lookup("x")
	n := in.Table.Rows()
	pred := make([]string, n)
	for r := range n {
		v, _ := x.Number(r)
		m := []float64{v + 1, 2, 1 - v}
		best := 0
		for g := range m {
			if m[g] > m[best] {
				best = g
			}
		}
		pred[r] = []string{"a", "b", "c"}[best]
	}
	return process.NewTable(n, process.TextColumn("prediction(label)", pred, nil))
}

func (threeClasses) Explain(_ context.Context, in process.Input) (*process.Explanation, error) {
	x, _ := in.Table.Lookup("x")
	n := in.Table.Rows()
	e := &process.Explanation{Features: []string{"x"}, Groups: []string{"a", "b", "c"}, Values: make([][]float64, 3), Margins: make([][]float64, 3)}
	for g := range 3 {
		for r := range n {
			v, _ := x.Number(r)
			bias := []float64{1, 2, 1}[g]
			e.Values[g] = append(e.Values[g], weights[g]*v, bias)
			e.Margins[g] = append(e.Margins[g], weights[g]*v+bias)
		}
	}
	return e, nil
}

// TestExplainedClasses: a model of one margin per class answers the
// predicted class's contributions by default, and every class's with
// "all", named by class.
func TestExplainedClasses(t *testing.T) {
	s := process.ModelSchema{Format: "test", Task: process.Classification, Classes: []string{"a", "b", "c"},
		Inputs:  []process.ColumnSpec{{Name: "x", Kind: process.Number}},
		Outputs: []process.ColumnSpec{{Name: "prediction(label)", Kind: process.Text}}}
	in := process.Input{Table: mustTable(t, 3, process.NumberColumn("x", []float64{3, 0, -3}, nil))}
	for _, c := range []struct {
		class string
		want  map[string][]float64 // column → by row
	}{
		{"", map[string][]float64{"contribution(x)": {3, 0, 3}, "contribution(bias)": {1, 2, 1}}},
		{ExplainAll, map[string][]float64{"contribution(a,x)": {3, 0, -3}, "contribution(c,x)": {-3, 0, 3}, "contribution(b,bias)": {2, 2, 2}}},
	} {
		p, err := explained(process.ProcessInfo{Process: threeClasses{}, Output: s.Outputs}, s, Explain{Method: ExplainTreeSHAP, Class: c.class})
		if err != nil {
			t.Fatal(err)
		}
		if want := len(s.Outputs) + map[string]int{"": 2, ExplainAll: 6}[c.class]; len(p.Output) != want {
			t.Errorf("class %q: %d outputs declared, want %d", c.class, len(p.Output), want)
		}
		res, err := p.Process.Score(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range c.want {
			col, ok := res.Lookup(name)
			if !ok {
				t.Errorf("class %q: no column %s", c.class, name)
				continue
			}
			for r, w := range want {
				if v, _ := col.Number(r); math.Abs(v-w) > 1e-12 {
					t.Errorf("class %q: %s row %d = %v, want %v", c.class, name, r, v, w)
				}
			}
		}
	}
	if _, err := explained(process.ProcessInfo{Process: process.ProcessFunc(threeClasses{}.Score)}, s, Explain{Method: ExplainTreeSHAP}); err == nil {
		t.Error("a process that cannot explain itself was given explanations")
	}
}

func mustTable(t *testing.T, rows int, cols ...process.Column) *process.Table {
	t.Helper()
	tab, err := process.NewTable(rows, cols...)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}
