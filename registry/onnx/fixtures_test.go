package onnx_test

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/registry/onnx"
	"github.com/scorehub/scorehub/registry/process"
)

// fixture is one model's NAME.rows.json, as testdata/export.py writes it.
type fixture struct {
	Model string `json:"model"`
	// Metadata is what an upload of the model carries.
	Metadata process.ModelMetadata `json:"metadata"`
	// Schema is what the reader should derive from the file and Metadata.
	Schema struct {
		Task  process.Task `json:"task"`
		Label string       `json:"label"`
		// Inputs are the columns a request carries, in the model's
		// order: the features of a model reading one [N, F] tensor, the
		// graph's inputs of a model reading one per column.
		Inputs []string `json:"inputs"`
		// GraphInputs are the graph's input tensors.
		GraphInputs []string `json:"graph_inputs"`
		// TextInputs are the inputs of Inputs that are text (string
		// tensors); the others are numbers.
		TextInputs []string `json:"text_inputs"`
		// Classes name the classes in the answer: the metadata's names
		// where it renames the model's integer labels, else the model's.
		Classes []string `json:"classes"`
		// ModelClasses are the model's own labels where the metadata
		// renames them; empty otherwise.
		ModelClasses []string `json:"model_classes"`
		// Threshold is the precision of the trees' thresholds, "float"
		// or "double"; empty for a model without trees.
		Threshold string `json:"threshold"`
	} `json:"schema"`
	// Rows are the input rows: a number (nil where missing) or a string
	// per input.
	Rows []map[string]any `json:"rows"`
	// Predictions are scikit-learn's: per row a []float64 of
	// predict_proba in class order for a classifier, predict's float64
	// for a regressor.
	Predictions []json.RawMessage `json:"predictions"`
	// Classes are predict's answers of a classifier, one per row.
	Classes []string `json:"classes"`
	// ONNXRuntime holds ONNX Runtime's answers for the same rows, in the
	// same shapes: its probabilities (or values) and labels.
	ONNXRuntime answers `json:"onnxruntime"`
}

// answers are a runtime's answers for a fixture's rows.
type answers struct {
	Predictions []json.RawMessage `json:"predictions"`
	Classes     []string          `json:"classes"`
}

func readFixture(t testing.TB, dir, name string) *fixture {
	t.Helper()
	var f fixture
	modeltest.ReadFixture(t, dir, name, &f)
	n := len(f.Rows)
	if n == 0 || len(f.Predictions) != n || len(f.ONNXRuntime.Predictions) != n {
		t.Fatalf("%s.rows.json: %d rows, %d predictions, %d of ONNX Runtime", name, n, len(f.Predictions), len(f.ONNXRuntime.Predictions))
	}
	if f.Schema.Task == process.Classification && (len(f.Classes) != n || len(f.ONNXRuntime.Classes) != n) {
		t.Fatalf("%s.rows.json: %d rows, %d predicted classes, %d of ONNX Runtime", name, n, len(f.Classes), len(f.ONNXRuntime.Classes))
	}
	return &f
}

// className returns the answer's name of the class the model labels
// label.
func (f *fixture) className(label string) string {
	if k := slices.Index(f.Schema.ModelClasses, label); k >= 0 {
		return f.Schema.Classes[k]
	}
	return label
}

// label is the name the answer's columns use.
func (f *fixture) label() string {
	if f.Metadata.Label != "" {
		return f.Metadata.Label
	}
	return f.Metadata.LabelOrDefault()
}

// outputs are the columns the model answers.
func (f *fixture) outputs() []string {
	return modeltest.Outputs(f.label(), f.Schema.Classes)
}

// matchesScikitLearn reports whether the model computes what scikit-learn
// does to within 1e-6. A tree with float thresholds does not: it compares a
// feature with the threshold rounded to float32, and where a value lies
// between the two roundings it takes the other branch than scikit-learn's
// float64 threshold. ONNX Runtime does the same, so such a model is held to
// ONNX Runtime's answers alone; in these fixtures the difference reaches
// 2% of a forest's value (diabetes_forest), and a probability can move by
// up to 0.15 on other data.
func (f *fixture) matchesScikitLearn() bool {
	return f.Schema.Threshold != "float"
}

// table builds rows first..last-1 as a client's request would arrive
// (see [modeltest.RowsTable]).
func (f *fixture) table(t testing.TB, first, last int) *process.Table {
	t.Helper()
	return modeltest.RowsTable(t, f.Model, f.Rows, first, last, f.Schema.Inputs, f.Schema.TextInputs)
}

// loadFixtureModel loads NAME.onnx from dir with the fixture's metadata.
func loadFixtureModel(t testing.TB, dir, name string, f *fixture) *process.LoadedModel {
	t.Helper()
	return modeltest.Load(t, onnx.Format{}, dir, name+".onnx", f.Metadata)
}

// TestFixtures scores every scikit-learn model of testdata as ONNX and
// compares the answers with ONNX Runtime's, and with scikit-learn's where
// the model computes as scikit-learn does.
func TestFixtures(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		f := readFixture(t, "testdata", name)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkFixture(t, "testdata", name, f)
		})
	}
}

// checkFixture loads dir/NAME.onnx and checks its schema against f's, and
// its answers for f's rows against ONNX Runtime's and scikit-learn's: the
// whole table at once and every row on its own.
func checkFixture(t *testing.T, dir, name string, f *fixture) {
	m := loadFixtureModel(t, dir, name, f)
	checkSchema(t, f, m.Schema)
	modeltest.ScoreEachWay(t, m, len(f.Rows), func(first, last int) *process.Table { return f.table(t, first, last) },
		func(got *process.Table, first int) { compareFixture(t, f, got, first) })
}

func checkSchema(t *testing.T, f *fixture, s process.ModelSchema) {
	t.Helper()
	modeltest.CheckSchema(t, s, modeltest.Schema{
		Format:     "onnx",
		Task:       f.Schema.Task,
		TextInputs: f.Schema.TextInputs,
		Names: modeltest.Names{
			Label:   f.label(),
			Inputs:  f.Schema.Inputs,
			Classes: f.Schema.Classes,
			Outputs: f.outputs(),
		},
	})
}

// compareFixture checks got, the answer for f's rows from first on,
// against ONNX Runtime's and, where the model matches it, scikit-learn's.
func compareFixture(t *testing.T, f *fixture, got *process.Table, first int) {
	t.Helper()
	compareAnswers(t, f, "ONNX Runtime", f.ONNXRuntime, got, first)
	if f.matchesScikitLearn() {
		compareAnswers(t, f, "scikit-learn", answers{f.Predictions, f.Classes}, got, first)
	}
}

// compareAnswers checks got, the answer for f's rows from first on,
// against want, library's: confidences within 1e-6 and the class it
// predicts; regression values within 1e-6 relative.
func compareAnswers(t *testing.T, f *fixture, library string, want answers, got *process.Table, first int) {
	t.Helper()
	label := f.outputs()[0]
	for r := range got.Rows() {
		i := first + r
		if f.Schema.Task == process.Regression {
			v := modeltest.Value(t, f.Model, i, want.Predictions[i])
			modeltest.CheckValue(t, library, got, label, r, i, v)
			continue
		}
		probs := modeltest.Confidences(t, f.Model, i, want.Predictions[i], len(f.Schema.Classes))
		modeltest.CheckConfidences(t, library, got, r, i, f.Schema.Classes, probs)
		modeltest.CheckClass(t, library, got, label, r, i, probs, want.Classes[i])
	}
}

// TestFloatThresholds proves that matchesScikitLearn leaves out only what
// it must: the committed float-threshold fixtures include one whose ONNX
// Runtime answers differ from scikit-learn's by more than 1e-6, and every
// other fixture's ONNX Runtime answers are within 1e-6 of scikit-learn's.
func TestFloatThresholds(t *testing.T) {
	var differ []string
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		f := readFixture(t, "testdata", name)
		worst := 0.0
		for i := range f.Rows {
			var sk, rt []float64
			if f.Schema.Task == process.Regression {
				v, w := modeltest.Value(t, name, i, f.Predictions[i]), modeltest.Value(t, name, i, f.ONNXRuntime.Predictions[i])
				sk, rt = []float64{v / math.Max(1, math.Abs(v))}, []float64{w / math.Max(1, math.Abs(v))}
			} else {
				n := len(f.Schema.Classes)
				sk, rt = modeltest.Confidences(t, name, i, f.Predictions[i], n), modeltest.Confidences(t, name, i, f.ONNXRuntime.Predictions[i], n)
			}
			for k := range sk {
				worst = math.Max(worst, math.Abs(sk[k]-rt[k]))
			}
		}
		switch {
		case worst > modeltest.Tolerance && f.matchesScikitLearn():
			t.Errorf("%s: ONNX Runtime's answers are up to %.3g from scikit-learn's, though the model has no float thresholds", name, worst)
		case worst > modeltest.Tolerance:
			differ = append(differ, name)
		}
	}
	if len(differ) == 0 {
		t.Error("no float-threshold fixture shows how far float thresholds take ONNX Runtime from scikit-learn")
	}
}

// TestFixturesRowWise: every fixture model, scored in row ranges at once,
// answers each range as it answers the whole table, which is what its
// RowWise promise lets the scoring engine do with a large request. The
// ranges cut across the evaluator's chunks of 2,048 rows.
func TestFixturesRowWise(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			f := readFixture(t, "testdata", name)
			m := loadFixtureModel(t, "testdata", name, f)
			if !m.RowWise || !m.ProcessInfo(name).RowWise {
				t.Errorf("the model is not RowWise")
			}
			big := *f
			for len(big.Rows) < 5000 {
				big.Rows = append(big.Rows, f.Rows...)
			}
			modeltest.CheckRowWise(t, m.Process, big.table(t, 0, len(big.Rows)), 7)
		})
	}
}
