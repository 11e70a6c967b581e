package xgboost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/registry/process"
)

// contribFixture is NAME.contribs.json, as testdata/contribs.py writes it:
// XGBoost's pred_contribs for the rows of NAME.rows.json, by row, group,
// then the features and the bias.
type contribFixture struct {
	Contributions [][][]float64 `json:"contributions"`
}

func readContribs(t testing.TB, dir, name string) *contribFixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".contribs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c contribFixture
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s.contribs.json: %v", name, err)
	}
	return &c
}

// margins reads the raw margins NAME.rows.json holds, by row and group.
func margins(t testing.TB, dir, name string) [][]float64 {
	t.Helper()
	var f struct {
		Margins []json.RawMessage `json:"margins"`
	}
	modeltest.ReadFixture(t, dir, name, &f)
	out := make([][]float64, len(f.Margins))
	for i, raw := range f.Margins {
		var one float64
		if json.Unmarshal(raw, &one) == nil {
			out[i] = []float64{one}
			continue
		}
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			t.Fatalf("%s.rows.json: margin %d: %v", name, i, err)
		}
	}
	return out
}

func explainer(t testing.TB, m *process.LoadedModel) process.Explainer {
	t.Helper()
	e, ok := m.Process.(process.Explainer)
	if !ok {
		t.Fatalf("the model's process (%T) does not explain", m.Process)
	}
	return e
}

// float32Close reports whether got, computed in float64, is want, which
// XGBoost computed in float32: within 1e-5 of 1+scale, scale being the
// size of the numbers the row's margin is summed from. float32 keeps 24
// bits, about 6e-8 relative, and a contribution is a sum of rounded terms
// over up to 300 trees; the fixtures part by at most 1.5e-6 of 1+scale.
func float32Close(got, want, scale float64) bool {
	return math.Abs(got-want) <= 1e-5*(1+scale)
}

// TestExplainFixtures: every fixture model explains its rows as XGBoost's
// pred_contribs does, from JSON and from UBJSON, and its contributions
// and bias add up to the margin XGBoost computed (local accuracy).
func TestExplainFixtures(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		f := readFixture(t, "testdata", name)
		want := readContribs(t, "testdata", name)
		margin := margins(t, "testdata", name)
		for _, ext := range []string{".json", ".ubj"} {
			t.Run(name+ext, func(t *testing.T) {
				t.Parallel()
				m := loadFixtureModel(t, "testdata", name, ext, f)
				checkExplanation(t, m, f, want, margin)
			})
		}
	}
}

func checkExplanation(t *testing.T, m *process.LoadedModel, f *fixture, want *contribFixture, margin [][]float64) {
	t.Helper()
	rows := len(f.Rows)
	e, err := explainer(t, m).Explain(context.Background(), process.Input{Table: f.table(t, 0, rows)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Check(rows); err != nil {
		t.Fatal(err)
	}
	if len(want.Contributions) != rows {
		t.Fatalf("the fixture has %d rows of contributions for %d rows", len(want.Contributions), rows)
	}
	wantGroups := []string{""}
	if len(want.Contributions[0]) > 1 {
		wantGroups = f.Schema.Classes
	}
	if !slices.Equal(e.Groups, wantGroups) {
		t.Errorf("groups %q; want %q", e.Groups, wantGroups)
	}
	if !slices.Equal(e.Features, f.Schema.Inputs) {
		t.Errorf("features %q; want %q", e.Features, f.Schema.Inputs)
	}
	for r := range rows {
		for g := range e.Groups {
			got, w := e.Row(g, r), want.Contributions[r][g]
			scale, sum := 0.0, 0.0
			for _, v := range w {
				scale += math.Abs(v)
			}
			for j := range got {
				sum += got[j]
				if !float32Close(got[j], w[j], scale) {
					t.Errorf("row %d group %d: contribution %d is %v; XGBoost's is %v", r, g, j, got[j], w[j])
				}
			}
			if !float32Close(sum, margin[r][g], scale) {
				t.Errorf("row %d group %d: contributions sum to %v; XGBoost's margin is %v", r, g, sum, margin[r][g])
			}
		}
	}
}

// TestExplainConcurrent: one model explains from many goroutines at once,
// each answer the one it gives alone; and a done context stops it.
func TestExplainConcurrent(t *testing.T) {
	const name = "iris_forest"
	f := readFixture(t, "testdata", name)
	m := loadFixtureModel(t, "testdata", name, ".json", f)
	e := explainer(t, m)
	in := process.Input{Table: f.table(t, 0, len(f.Rows))}
	want, err := e.Explain(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			got, err := e.Explain(context.Background(), in)
			switch {
			case err != nil:
				errs <- err
			case !slices.EqualFunc(got.Values, want.Values, slices.Equal[[]float64]):
				errs <- fmt.Errorf("an explanation made beside others differs from one made alone")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Explain(ctx, in); !errors.Is(err, context.Canceled) {
		t.Errorf("Explain with a cancelled context: %v; want context.Canceled", err)
	}
}
