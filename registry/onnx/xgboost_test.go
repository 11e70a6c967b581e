package onnx_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/registry/onnx"
	"github.com/scorehub/scorehub/registry/process"
)

// xgboostDir holds XGBoost models written as ONNX tree ensembles whose
// nodes_hitrates are XGBoost's covers, by testdata/xgboost/export.py.
var xgboostDir = filepath.Join("testdata", "xgboost")

// xgboostPython is the interpreter with the XGBoost that trained them and
// the onnx package that wrote them.
var xgboostPython = modeltest.Python{
	Path:     "/usr/bin/python3",
	Imports:  []string{"xgboost", "sklearn", "onnx"},
	Packages: "python3-xgboost python3-sklearn python3-onnx",
	Module:   "xgboost",
	Library:  "XGBoost",
	Version:  "1.7",
}

// xgboostTolerance is how far an explanation's numbers may be from
// XGBoost's, relatively to the size of the row's terms (1 plus the
// magnitudes of XGBoost's contributions and bias), and its answers from
// XGBoost's predictions (absolutely for a confidence, relatively for a
// value above 1). XGBoost computes TreeSHAP and sums its trees in
// float32, each of a fixture's at most 30 additions rounded by up to
// 2^-24 (6e-8) of its partial sum: 30 × 6e-8 ≈ 2e-6. The explanation
// computes in float64 and adds up to the ensemble's margins, summed in
// float32 with the base value last where XGBoost adds it first (in double
// for a double ensemble). The fixtures come within 2e-7.
const xgboostTolerance = 2e-6

// xgboostFixture is NAME.rows.json of testdata/xgboost.
type xgboostFixture struct {
	Model    string                `json:"model"`
	Metadata process.ModelMetadata `json:"metadata"`
	Schema   struct {
		Task    process.Task `json:"task"`
		Label   string       `json:"label"`
		Inputs  []string     `json:"inputs"`
		Classes []string     `json:"classes"`
	} `json:"schema"`
	Rows []map[string]any `json:"rows"`
	// Predictions are XGBoost's: a classifier's probabilities in class
	// order, a regressor's value.
	Predictions []json.RawMessage `json:"predictions"`
	// Margins are XGBoost's output_margin, by row and margin;
	// Contributions its pred_contribs, by row, margin, then the features'
	// and the bias.
	Margins       [][]float64   `json:"margins"`
	Contributions [][][]float64 `json:"contributions"`
}

func readXGBoostFixture(t testing.TB, dir, name string) *xgboostFixture {
	t.Helper()
	var f xgboostFixture
	modeltest.ReadFixture(t, dir, name, &f)
	if n := len(f.Rows); n == 0 || len(f.Predictions) != n || len(f.Margins) != n || len(f.Contributions) != n {
		t.Fatalf("%s.rows.json: %d rows, %d predictions, %d margins, %d contributions", name, n, len(f.Predictions), len(f.Margins), len(f.Contributions))
	}
	return &f
}

func (f *xgboostFixture) table(t testing.TB) *process.Table {
	return modeltest.RowsTable(t, f.Model, f.Rows, 0, len(f.Rows), f.Schema.Inputs, nil)
}

// groups are the margins XGBoost computes: one per class for softmax,
// else one.
func (f *xgboostFixture) groups() []string {
	if len(f.Contributions[0]) > 1 {
		return f.Schema.Classes
	}
	return []string{""}
}

func explainerOf(t testing.TB, m *process.LoadedModel) process.Explainer {
	t.Helper()
	e, ok := m.Process.(process.Explainer)
	if !ok {
		t.Fatalf("the model's process (%T) does not explain; its schema says %q", m.Process, m.Schema.Unexplained)
	}
	return e
}

// TestExplainXGBoost: an XGBoost model written as ONNX with its covers as
// nodes_hitrates explains every row as XGBoost's pred_contribs does,
// within xgboostTolerance, its bias and contributions adding up to the
// margins the ensemble computes (Explanation.Check) and to XGBoost's; and
// it scores as XGBoost predicts.
func TestExplainXGBoost(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, xgboostDir) {
		f := readXGBoostFixture(t, xgboostDir, name)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkXGBoostFixture(t, xgboostDir, name, f)
		})
	}
}

func checkXGBoostFixture(t *testing.T, dir, name string, f *xgboostFixture) {
	m := modeltest.Load(t, onnx.Format{}, dir, name+".onnx", f.Metadata)
	if m.Schema.Unexplained != "" {
		t.Errorf("schema: unexplained %q, want none", m.Schema.Unexplained)
	}
	rows := len(f.Rows)
	e, err := explainerOf(t, m).Explain(context.Background(), process.Input{Table: f.table(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Check(rows); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e.Features, f.Schema.Inputs) {
		t.Errorf("features %q, want %q", e.Features, f.Schema.Inputs)
	}
	if !slices.Equal(e.Groups, f.groups()) {
		t.Fatalf("groups %q, want %q", e.Groups, f.groups())
	}
	worst := 0.0
	for r := range rows {
		for g := range e.Groups {
			got, want := e.Row(g, r), f.Contributions[r][g]
			if len(want) != len(got) {
				t.Fatalf("row %d: XGBoost has %d contributions, the explanation %d", r, len(want), len(got))
			}
			size := 1.0
			for _, v := range want {
				size += math.Abs(v)
			}
			for j := range want {
				d := math.Abs(got[j]-want[j]) / size
				worst = max(worst, d)
				if d > xgboostTolerance {
					t.Errorf("row %d group %d: contribution %d is %v, XGBoost's %v", r, g, j, got[j], want[j])
				}
			}
			if d := math.Abs(e.Margins[g][r]-f.Margins[r][g]) / size; d > xgboostTolerance {
				t.Errorf("row %d group %d: the ensemble's margin is %v, XGBoost's %v", r, g, e.Margins[g][r], f.Margins[r][g])
			}
		}
	}
	t.Logf("%s: contributions at most %.2g of the row's terms from XGBoost's", name, worst)

	out := modeltest.Score(t, m, f.table(t))
	for r := range rows {
		if f.Schema.Task == process.Regression {
			want := modeltest.Value(t, name, r, f.Predictions[r])
			c, _ := out.Lookup("prediction(" + f.Schema.Label + ")")
			if v := c.Numbers[r]; math.Abs(v-want) > xgboostTolerance*math.Max(1, math.Abs(want)) {
				t.Errorf("row %d: prediction %v, XGBoost's %v", r, v, want)
			}
			continue
		}
		probs := modeltest.Confidences(t, name, r, f.Predictions[r], len(f.Schema.Classes))
		for k, want := range probs {
			c, _ := out.Lookup("confidence(" + f.Schema.Classes[k] + ")")
			if v := c.Numbers[r]; math.Abs(v-want) > xgboostTolerance {
				t.Errorf("row %d: confidence(%s) %v, XGBoost's %v", r, f.Schema.Classes[k], v, want)
			}
		}
	}
}

// TestExplainXGBoostConcurrent: one model explains from many goroutines
// at once, each answer the one it gives alone; a done context stops it.
func TestExplainXGBoostConcurrent(t *testing.T) {
	const name = "iris_softprob"
	f := readXGBoostFixture(t, xgboostDir, name)
	e := explainerOf(t, modeltest.Load(t, onnx.Format{}, xgboostDir, name+".onnx", f.Metadata))
	in := process.Input{Table: f.table(t)}
	want, err := e.Explain(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			got, err := e.Explain(context.Background(), in)
			switch {
			case err != nil:
				errs <- err
			case !slices.EqualFunc(got.Values, want.Values, slices.Equal[[]float64]) ||
				!slices.EqualFunc(got.Margins, want.Margins, slices.Equal[[]float64]):
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

// TestRegenerateXGBoost runs testdata/xgboost/export.py against the
// installed XGBoost and onnx and checks that it writes the committed
// fixtures again: the same graphs (covers included) and the same answers,
// numbers within modeltest.Tolerance. The explanations are then checked
// against the freshly computed contributions too.
func TestRegenerateXGBoost(t *testing.T) {
	xgboostPython.Require(t)
	out := t.TempDir()
	xgboostPython.Run(t, filepath.Join(xgboostDir, "export.py"), "--out", out)

	committed := modeltest.SameFixtureNames(t, "export.py", xgboostDir, out)
	for _, name := range committed {
		t.Run(name, func(t *testing.T) {
			modeltest.SameJSON(t, "export.py", filepath.Join(xgboostDir, name+".rows.json"), filepath.Join(out, name+".rows.json"))
			sameModel(t, filepath.Join(xgboostDir, name+".onnx"), filepath.Join(out, name+".onnx"))
			checkXGBoostFixture(t, out, name, readXGBoostFixture(t, out, name))
		})
	}
}
