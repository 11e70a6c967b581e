package pmml

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/internal/treeshap"
	"github.com/scorehub/scorehub/registry/process"
)

// exactTolerance is how far the walk may be from treeshap.Exact: both sum
// the same float64 products in other orders.
const exactTolerance = 1e-9

// accuracyTolerance is how far bias + Σ contributions may be from the
// margin the reader computes, relatively to the margin's size (at least
// 1): the reader sums float32 leaves in float32 (x-mathContext="float"),
// 31 additions at most each off by 2^-24 of its partial sum, ≈ 2e-6; the
// explanation sums the same leaves in float64.
const accuracyTolerance = 4e-6

// contribTolerance is how far a contribution may be from XGBoost's
// pred_contribs, relatively to the size of the row's terms (1 plus the
// magnitudes of XGBoost's contributions and bias): XGBoost accumulates
// each contribution in float32, its rounding 2^-24 (6e-8) of the partial
// sums, and a split's cover here is its children's recordCounts summed
// rather than its own, their float32 sum. The fixtures come within 1.5e-7.
const contribTolerance = 1e-6

// explainFixture is what the explanation tests read of an XGBoost fixture.
type explainFixture struct {
	Model    string                `json:"model"`
	Metadata process.ModelMetadata `json:"metadata"`
	Schema   struct {
		Inputs []string `json:"inputs"`
	} `json:"schema"`
	Rows []map[string]any `json:"rows"`
	// Contributions are XGBoost's pred_contribs: by row, by group, the
	// features' and the bias.
	Contributions [][][]float64 `json:"contributions"`
}

// TestExplainXGBoost explains every row of the JPMML-XGBoost-style
// fixtures and holds the contributions to XGBoost's own, the bias plus
// their sum to the margin the reader computes, and the walk to the
// brute-force Shapley values for models of at most 10 features.
func TestExplainXGBoost(t *testing.T) {
	dir := filepath.Join("testdata", "xgboost")
	for _, name := range modeltest.FixtureNames(t, dir) {
		var f explainFixture
		modeltest.ReadFixture(t, dir, name, &f)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			lm := modeltest.Load(t, Format{}, dir, name+".pmml", f.Metadata)
			p, ok := lm.Process.(*explained)
			if !ok {
				t.Fatalf("the process is a %T, not one that explains", lm.Process)
			}
			tab := modeltest.RowsTable(t, f.Model, f.Rows, 0, len(f.Rows), f.Schema.Inputs, nil)
			e, err := p.Explain(context.Background(), process.Input{Table: tab})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Check(len(f.Rows)); err != nil {
				t.Fatal(err)
			}
			groups := []string{""}
			if len(f.Contributions[0]) > 1 {
				groups = f.Metadata.Classes
			}
			if !slices.Equal(e.Groups, groups) {
				t.Errorf("groups %q, want %q", e.Groups, groups)
			}
			if len(f.Contributions) != len(f.Rows) {
				t.Fatalf("%d rows, %d rows of contributions", len(f.Rows), len(f.Contributions))
			}
			for r := range f.Rows {
				for g := range e.Groups {
					got, want := e.Row(g, r), f.Contributions[r][g]
					size := 1.0
					for _, v := range want {
						size += math.Abs(v)
					}
					for i := range want {
						if d := math.Abs(got[i] - want[i]); d > contribTolerance*size {
							t.Errorf("row %d group %d: contribution %d is %v, XGBoost's %v (off by %.2g of %.3g)", r, g, i, got[i], want[i], d/size, size)
						}
					}
				}
			}
			checkLocalAccuracy(t, p, tab, e)
			if len(f.Schema.Inputs) <= 10 {
				checkShapExact(t, p, tab, e, len(f.Rows))
			}
		})
	}
}

// checkLocalAccuracy holds the bias plus the contributions of every row
// and group of e to the margin the reader computes for it.
func checkLocalAccuracy(t *testing.T, p *explained, tab *process.Table, e *process.Explanation) {
	t.Helper()
	sc, x := p.sc, p.x
	st := sc.begin(tab)
	defer sc.pool.Put(st)
	for r := range tab.Rows() {
		for g := range x.groups {
			if err := x.prepare(sc, st, r); err != nil {
				t.Fatal(err)
			}
			var pred prediction
			if err := x.margins[g].predict(st.in, &pred); err != nil {
				t.Fatal(err)
			}
			margin, ok := pred.value.asNumber()
			if !ok {
				t.Fatalf("row %d group %d: the reader computes no margin", r, g)
			}
			sum := 0.0
			for _, v := range e.Row(g, r) {
				sum += v
			}
			if d := math.Abs(sum - margin); d > accuracyTolerance*math.Max(1, math.Abs(margin)) {
				t.Errorf("row %d group %d: bias + contributions = %v, the margin %v", r, g, sum, margin)
			}
		}
	}
}

// checkShapExact holds the contributions of the first rows rows of e to
// treeshap.Exact's over the same trees, decisions and scales.
func checkShapExact(t *testing.T, p *explained, tab *process.Table, e *process.Explanation, rows int) {
	t.Helper()
	sc, x := p.sc, p.x
	st := sc.begin(tab)
	defer sc.pool.Put(st)
	nf := len(x.features)
	for r := range rows {
		if err := x.prepare(sc, st, r); err != nil {
			t.Fatal(err)
		}
		want := make([][]float64, len(x.groups))
		for g := range want {
			want[g] = make([]float64, nf+1)
			want[g][nf] = x.bias[g]
		}
		for i := range x.terms {
			term := &x.terms[i]
			phi := treeshap.Exact(&term.st, func(j int32) int32 {
				c := term.child(j, st.in)
				if c < 0 {
					if term.matters(j, st.in) {
						t.Fatalf("row %d: tree %d decides no child at split %d", r, i, j)
					}
					return term.st.Left[j]
				}
				return c
			}, nf)
			for k, v := range phi {
				want[term.group][k] += term.scale * v
			}
		}
		for g := range want {
			got := e.Row(g, r)
			for k := range want[g] {
				if d := math.Abs(got[k] - want[g][k]); d > exactTolerance {
					t.Errorf("row %d group %d: contribution %d is %v, Exact's %v", r, g, k, got[k], want[g][k])
				}
			}
		}
	}
}
