package lightgbm

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/internal/treeshap"
	"github.com/scorehub/scorehub/registry/process"
)

// readContribs reads NAME.contribs.json, as testdata/contribs.py writes
// it: LightGBM's contributions by row, raw score, then the features and
// the bias; nil when there is none (a model of linear trees).
func readContribs(t testing.TB, dir, name string) [][][]float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".contribs.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Contributions [][][]float64 `json:"contributions"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s.contribs.json: %v", name, err)
	}
	return c.Contributions
}

// explainOf explains every row of fixture name from dir.
func explainOf(t *testing.T, dir, name string) (*fixture, *model, *process.LoadedModel, *process.Explanation, error) {
	t.Helper()
	f := readFixture(t, dir, name)
	m, lm := loadFixture(t, dir, name)
	p, ok := lm.Process.(process.Explainer)
	if !ok {
		t.Fatalf("the process (%T) does not explain", lm.Process)
	}
	e, err := p.Explain(context.Background(), process.Input{Table: f.table(t, lm.Schema.Inputs, 0, len(f.Rows))})
	return f, m, lm, e, err
}

// TestExplainFixtures: every fixture model explains its rows as
// LightGBM's predict_contrib does, within 1e-9 (both compute in float64;
// the sums of one row's contributions may round in another order), and
// the contributions and bias add up to LightGBM's raw score (local
// accuracy) within 1e-9 of the size of the numbers summed. A model of
// linear trees is refused, as LightGBM refuses it.
func TestExplainFixtures(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := readContribs(t, "testdata", name)
			f, _, lm, e, err := explainOf(t, "testdata", name)
			if want == nil {
				if !errors.Is(err, process.ErrModelInvalid) {
					t.Fatalf("a model without contributions: Explain: %v; want ErrModelInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkContribs(t, f, lm, e, want)
		})
	}
}

func checkContribs(t *testing.T, f *fixture, lm *process.LoadedModel, e *process.Explanation, want [][][]float64) {
	t.Helper()
	if err := e.Check(len(f.Rows)); err != nil {
		t.Fatal(err)
	}
	groups := []string{""}
	if len(want[0]) > 1 {
		groups = lm.Schema.Classes
	}
	if !slices.Equal(e.Groups, groups) {
		t.Errorf("groups %q; want %q", e.Groups, groups)
	}
	for i, in := range lm.Schema.Inputs {
		if e.Features[i] != in.Name {
			t.Errorf("feature %d is %q; want %q", i, e.Features[i], in.Name)
		}
	}
	for r := range f.Rows {
		for g := range e.Groups {
			got, w := e.Row(g, r), want[r][g]
			sum, scale := 0.0, 0.0
			for j := range got {
				sum += got[j]
				scale += math.Abs(w[j])
				if math.Abs(got[j]-w[j]) > 1e-9*max(1, math.Abs(w[j])) {
					t.Errorf("row %d group %d: contribution %d is %v; LightGBM's is %v", r, g, j, got[j], w[j])
				}
			}
			raw := float64(f.LightGBM.Raw[r][g])
			if math.Abs(sum-raw) > 1e-9*(1+scale) {
				t.Errorf("row %d group %d: contributions sum to %v; LightGBM's raw score is %v", r, g, sum, raw)
			}
		}
	}
}

// TestExplainExact: on every fixture model (none has more than 10
// features), the contributions are the Shapley values by their
// definition, every subset of features enumerated, its value each tree's
// count-weighted expectation with the row's splits decided as scoring
// decides them.
func TestExplainExact(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if readContribs(t, "testdata", name) == nil {
				t.Skip("LightGBM explains no linear trees")
			}
			f, m, lm, e, err := explainOf(t, "testdata", name)
			if err != nil {
				t.Fatal(err)
			}
			nf := len(m.feats)
			if nf > 10 {
				t.Fatalf("%d features: too many to enumerate", nf)
			}
			cols := make([]*process.Column, nf)
			tab := f.table(t, lm.Schema.Inputs, 0, len(f.Rows))
			if err := m.columns(tab, cols); err != nil {
				t.Fatal(err)
			}
			s := m.shapModel()
			x := make([]float64, nf)
			for r := range min(len(f.Rows), 10) {
				for j, c := range cols {
					x[j] = m.value(j, c, r)
				}
				want := make([][]float64, m.outputs)
				for g := range want {
					want[g] = make([]float64, nf)
				}
				for ti := range m.trees {
					if len(m.trees[ti].nodes) == 0 {
						continue
					}
					tr := &m.trees[ti]
					phi := treeshap.Exact(&s.trees[ti], func(i int32) int32 { return tr.shapIndex(tr.next(i, x)) }, nf)
					for j, v := range phi {
						want[ti%m.outputs][j] += v
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

// TestExplainNeedsCounts: a file without the training counts of its
// splits and leaves cannot be explained, and its process says so by not
// being an Explainer.
func TestExplainNeedsCounts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "binary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b = regexp.MustCompile(`(?m)^((internal|leaf)_count|tree_sizes)=.*\n`).ReplaceAll(b, nil)
	_, lm, err := Format{}.load(b, process.ModelMetadata{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lm.Process.(process.Explainer); ok {
		t.Error("a model without counts explains")
	}
}

// TestExplainCancelled: a done context stops an explanation.
func TestExplainCancelled(t *testing.T) {
	f := readFixture(t, "testdata", "multiclass")
	_, lm := loadFixture(t, "testdata", "multiclass")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := lm.Process.(process.Explainer).Explain(ctx, process.Input{Table: f.table(t, lm.Schema.Inputs, 0, len(f.Rows))})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Explain with a cancelled context: %v; want context.Canceled", err)
	}
}
