package pmml_test

import (
	"encoding/json"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/registry/pmml"
	"github.com/scorehub/scorehub/registry/process"
)

// fixture is one model's NAME.rows.json, as testdata/export.py writes it.
type fixture struct {
	Model string `json:"model"`
	// Metadata is what an upload of the model carries.
	Metadata process.ModelMetadata `json:"metadata"`
	// Schema is what the reader should derive from the file and Metadata.
	Schema struct {
		Task process.Task `json:"task"`
		// Element is the PMML model element at the document's top.
		Element string `json:"model"`
		// Label is the PMML target's name, the label unless Metadata
		// gives another; a clustering model has none.
		Label  string   `json:"label"`
		Inputs []string `json:"inputs"`
		// TextInputs are the inputs of Inputs that are text (categorical
		// strings); the others are numbers.
		TextInputs []string `json:"text_inputs"`
		Classes    []string `json:"classes"`
	} `json:"schema"`
	// Rows are the input rows: a number or a string per input.
	Rows []map[string]any `json:"rows"`
	// Predictions are scikit-learn's: per row a []float64 of
	// predict_proba in class order for a classifier, predict's float64
	// for a regressor, the name of predict's cluster for a clustering.
	Predictions []json.RawMessage `json:"predictions"`
	// Classes are predict's answers of a classifier, one per row.
	Classes []string `json:"classes"`
	// DocumentPredictions, where the generator writes them, are what the
	// PMML document computes for the rows in its own arithmetic, shaped
	// as Predictions (testdata/xgboost: float32, step by step).
	DocumentPredictions []json.RawMessage `json:"document_predictions"`
}

func readFixture(t testing.TB, dir, name string) *fixture {
	t.Helper()
	var f fixture
	modeltest.ReadFixture(t, dir, name, &f)
	if len(f.Rows) == 0 || len(f.Rows) != len(f.Predictions) {
		t.Fatalf("%s.rows.json: %d rows, %d predictions", name, len(f.Rows), len(f.Predictions))
	}
	if f.Schema.Task == process.Classification && len(f.Classes) != len(f.Rows) {
		t.Fatalf("%s.rows.json: %d rows, %d predicted classes", name, len(f.Rows), len(f.Classes))
	}
	return &f
}

// label is the name the answer's columns use.
func (f *fixture) label() string {
	if f.Metadata.Label != "" {
		return f.Metadata.Label
	}
	if f.Schema.Label != "" {
		return f.Schema.Label
	}
	return f.Metadata.LabelOrDefault()
}

// outputs are the columns the model answers.
func (f *fixture) outputs() []string {
	if f.Schema.Task == process.Clustering {
		return []string{"cluster"}
	}
	return modeltest.Outputs(f.label(), f.Schema.Classes)
}

// cluster returns row i's expected cluster (clusterings).
func (f *fixture) cluster(t testing.TB, i int) string {
	t.Helper()
	var c string
	if err := json.Unmarshal(f.Predictions[i], &c); err != nil {
		t.Fatalf("%s: prediction %d is not a cluster's name: %s", f.Model, i, f.Predictions[i])
	}
	return c
}

// table builds rows first..last-1 as a client's request would arrive
// (see [modeltest.RowsTable]).
func (f *fixture) table(t testing.TB, first, last int) *process.Table {
	t.Helper()
	return modeltest.RowsTable(t, f.Model, f.Rows, first, last, f.Schema.Inputs, f.Schema.TextInputs)
}

// loadFixtureModel loads NAME.pmml from dir with the fixture's metadata.
func loadFixtureModel(t testing.TB, dir, name string, f *fixture) *process.LoadedModel {
	t.Helper()
	return modeltest.Load(t, pmml.Format{}, dir, name+".pmml", f.Metadata)
}

// TestFixtures scores every scikit-learn model of testdata as PMML and
// compares the answers with scikit-learn's own.
func TestFixtures(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		f := readFixture(t, "testdata", name)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkFixture(t, "testdata", name, f)
		})
	}
}

// checkFixture loads dir/NAME.pmml and checks its schema against f's, and
// its answers for f's rows against scikit-learn's: the whole table at once
// and every row on its own.
func checkFixture(t *testing.T, dir, name string, f *fixture) {
	m := loadFixtureModel(t, dir, name, f)
	checkSchema(t, f, m.Schema)
	modeltest.ScoreEachWay(t, m, len(f.Rows), func(first, last int) *process.Table { return f.table(t, first, last) },
		func(got *process.Table, first int) { compareFixture(t, f, got, first) })
}

func checkSchema(t *testing.T, f *fixture, s process.ModelSchema) {
	t.Helper()
	modeltest.CheckSchema(t, s, modeltest.Schema{
		Format:     "pmml",
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

// compareFixture checks got, the answer for f's rows from first on, against
// scikit-learn's: confidences within 1e-6 of predict_proba and the class
// predict answers; regression values within 1e-6 relative; the cluster
// predict answers.
func compareFixture(t *testing.T, f *fixture, got *process.Table, first int) {
	t.Helper()
	label := f.outputs()[0]
	pred, ok := got.Lookup(label)
	if !ok {
		t.Fatalf("no column %q in the answer", label)
	}
	for r := range got.Rows() {
		i := first + r
		switch f.Schema.Task {
		case process.Clustering:
			if v, ok := pred.Text(r); !ok || v != f.cluster(t, i) {
				t.Errorf("row %d: cluster = %q (present %v), scikit-learn says %q", i, v, ok, f.cluster(t, i))
			}
		case process.Regression:
			modeltest.CheckValue(t, "scikit-learn", got, label, r, i, modeltest.Value(t, f.Model, i, f.Predictions[i]))
		default:
			probs := modeltest.Confidences(t, f.Model, i, f.Predictions[i], len(f.Schema.Classes))
			modeltest.CheckConfidences(t, "scikit-learn", got, r, i, f.Schema.Classes, probs)
			modeltest.CheckClass(t, "scikit-learn", got, label, r, i, probs, f.Classes[i])
		}
	}
}
