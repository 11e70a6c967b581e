package xgboost

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/internal/treeshap"
	"github.com/scorehub/scorehub/registry/process"
)

// TestExplainExact: on the fixture models of at most 10 features, each
// tree model's contributions are the Shapley values by their definition,
// every subset of features enumerated, its value the cover-weighted
// expectation of each tree with the row's splits decided as scoring
// decides them.
func TestExplainExact(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		var f struct {
			Metadata process.ModelMetadata `json:"metadata"`
			Schema   struct {
				Inputs []string `json:"inputs"`
			} `json:"schema"`
			Rows []map[string]*float64 `json:"rows"`
		}
		modeltest.ReadFixture(t, "testdata", name, &f)
		if len(f.Schema.Inputs) > 10 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			lm := modeltest.Load(t, Format{}, "testdata", name+".json", f.Metadata)
			p, ok := lm.Process.(*explained)
			if !ok {
				t.Fatalf("the process is a %T, not one that explains", lm.Process)
			}
			m := p.m
			if m.weights != nil {
				t.Skip("a linear model has no trees")
			}
			rows := min(len(f.Rows), 10) // 2^10 subsets for every tree and row
			tab := tableOf(t, f.Schema.Inputs, f.Rows[:rows])
			e, err := p.Explain(context.Background(), process.Input{Table: tab})
			if err != nil {
				t.Fatal(err)
			}
			s := m.shapModel()
			for r := range rows {
				x := make([]float32, m.nFeat)
				for j, name := range f.Schema.Inputs {
					x[j] = float32(math.NaN())
					if v := f.Rows[r][name]; v != nil {
						x[j] = float32(*v)
					}
				}
				want := make([][]float64, m.groups)
				for g := range want {
					want[g] = make([]float64, m.nFeat)
				}
				for ti := range m.trees {
					tr := &m.trees[ti]
					phi := treeshap.Exact(&s.trees[ti], func(i int32) int32 { return tr.next(i, x) }, m.nFeat)
					for j, v := range phi {
						want[tr.group][j] += float64(tr.w) * v
					}
				}
				for g := range want {
					got := e.Row(g, r)
					for j, w := range want[g] {
						if math.Abs(got[j]-w) > 1e-9*(1+math.Abs(w)) {
							t.Errorf("row %d group %d feature %d: TreeSHAP %v, by definition %v", r, g, j, got[j], w)
						}
					}
				}
			}
		})
	}
}

// tableOf builds a table of rows, a nil value or an absent key missing.
func tableOf(t testing.TB, inputs []string, rows []map[string]*float64) *process.Table {
	t.Helper()
	var cols []process.Column
	for _, name := range inputs {
		values, missing := make([]float64, len(rows)), make([]bool, len(rows))
		for i, r := range rows {
			if v := r[name]; v != nil {
				values[i] = *v
			} else {
				missing[i] = true
			}
		}
		cols = append(cols, process.NumberColumn(name, values, missing))
	}
	return modeltest.Table(t, 0, len(rows), cols...)
}

// TestExplainCovers: a model explains only when every tree holds its
// nodes' covers; a stump with covers 4 = 1 + 3 gives its feature the
// leaf's distance from the cover-weighted mean, in both directions and
// for a missing value, which takes the default branch.
func TestExplainCovers(t *testing.T) {
	withCover := func(tr obj, cover ...float32) obj { tr["sum_hessian"] = cover; return tr }
	t.Run("absent", func(t *testing.T) {
		lm := load(t, modelOf("reg:squarederror", 0, stump(0, 1, -1, 1, 1)), process.ModelMetadata{})
		if _, ok := lm.Process.(process.Explainer); ok {
			t.Error("a model without sum_hessian explains")
		}
	})
	t.Run("one tree lacks them", func(t *testing.T) {
		lm := load(t, modelOf("reg:squarederror", 0, withCover(stump(0, 1, -1, 1, 1), 4, 1, 3), stump(1, 1, -1, 1, 1)), process.ModelMetadata{})
		if _, ok := lm.Process.(process.Explainer); ok {
			t.Error("a model with a tree without sum_hessian explains")
		}
	})
	t.Run("wrong length", func(t *testing.T) {
		_, err := Format{}.Load(encodeJSON(t, modelOf("reg:squarederror", 0, withCover(stump(0, 1, -1, 1, 1), 4, 1))), process.ModelMetadata{})
		if !errors.Is(err, process.ErrModelInvalid) {
			t.Errorf("sum_hessian of 2 nodes for 3: %v; want ErrModelInvalid", err)
		}
	})
	t.Run("stump", func(t *testing.T) {
		lm := load(t, modelOf("reg:squarederror", 0, withCover(stump(0, 1, -1, 1, 1), 4, 1, 3)), process.ModelMetadata{})
		e, err := lm.Process.(process.Explainer).Explain(context.Background(), process.Input{Table: rowsOf([2]float64{0, 5}, [2]float64{2, 5}, [2]float64{math.NaN(), 5})})
		if err != nil {
			t.Fatal(err)
		}
		// mean = (1·-1 + 3·1)/4 = 0.5; base_score 0.5.
		want := [][]float64{{-1.5, 0, 1}, {0.5, 0, 1}, {-1.5, 0, 1}}
		for r, w := range want {
			if got := e.Row(0, r); !slices.Equal(got, w) {
				t.Errorf("row %d: %v; want %v", r, got, w)
			}
		}
	})
}
