package xgboost_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/xgboost"
)

// fixture is one model's NAME.rows.json, as testdata/gen.py writes it.
type fixture struct {
	Model string `json:"model"`
	// Metadata is what an upload of the model carries.
	Metadata process.ModelMetadata `json:"metadata"`
	// Schema is what the reader should derive from the file and Metadata.
	Schema struct {
		Task      process.Task `json:"task"`
		Objective string       `json:"objective"`
		Inputs    []string     `json:"inputs"`
		Classes   []string     `json:"classes"`
		Trees     int          `json:"trees"`
	} `json:"schema"`
	// Rows are the input rows; a nil value or an absent key is missing.
	Rows []map[string]*float64 `json:"rows"`
	// Predictions are XGBoost's: per row a []float64 of confidences in
	// class order for a classifier, a float64 for a regressor.
	Predictions []json.RawMessage `json:"predictions"`
}

func readFixture(t testing.TB, dir, name string) *fixture {
	t.Helper()
	var f fixture
	modeltest.ReadFixture(t, dir, name, &f)
	if len(f.Rows) == 0 || len(f.Rows) != len(f.Predictions) {
		t.Fatalf("%s.rows.json: %d rows, %d predictions", name, len(f.Rows), len(f.Predictions))
	}
	return &f
}

// table builds rows first..last-1 as a client's request would arrive: a
// Number column for each feature some row has, missing where a row has
// null or no key, in the reverse of the model's order (the reader matches
// columns by name), plus a text column the model does not read.
func (f *fixture) table(t testing.TB, first, last int) *process.Table {
	t.Helper()
	n := last - first
	var cols []process.Column
	for j := len(f.Schema.Inputs) - 1; j >= 0; j-- {
		name := f.Schema.Inputs[j]
		if !slices.ContainsFunc(f.Rows[first:last], func(r map[string]*float64) bool { _, ok := r[name]; return ok }) {
			continue // no row names it: the column is absent
		}
		values, missing := make([]float64, n), make([]bool, n)
		for i := range n {
			if v := f.Rows[first+i][name]; v != nil {
				values[i] = *v
			} else {
				missing[i] = true
			}
		}
		cols = append(cols, process.NumberColumn(name, values, missing))
	}
	return modeltest.Table(t, first, last, cols...)
}

// loadFixtureModel loads NAME.ext from dir with the fixture's metadata.
func loadFixtureModel(t testing.TB, dir, name, ext string, f *fixture) *process.LoadedModel {
	t.Helper()
	return modeltest.Load(t, xgboost.Format{}, dir, name+ext, f.Metadata)
}

func TestFixtures(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		f := readFixture(t, "testdata", name)
		for _, ext := range []string{".json", ".ubj"} {
			t.Run(name+ext, func(t *testing.T) {
				t.Parallel()
				checkFixture(t, "testdata", name, ext, f)
			})
		}
	}
}

// checkFixture loads dir/NAME.ext and checks its schema against f's, and
// its predictions for f's rows against XGBoost's: the whole table at once
// and every row on its own (a one-row request takes its own path).
func checkFixture(t *testing.T, dir, name, ext string, f *fixture) {
	m := loadFixtureModel(t, dir, name, ext, f)
	checkSchema(t, f, m.Schema)
	modeltest.ScoreEachWay(t, m, len(f.Rows), func(first, last int) *process.Table { return f.table(t, first, last) },
		func(got *process.Table, first int) { compareFixture(t, f, got, first) })
}

func checkSchema(t *testing.T, f *fixture, s process.ModelSchema) {
	t.Helper()
	want := f.Schema
	if s.Task != want.Task || s.Objective != want.Objective || s.Trees != want.Trees {
		t.Errorf("schema: task %q, objective %q, %d trees; want %q, %q, %d", s.Task, s.Objective, s.Trees, want.Task, want.Objective, want.Trees)
	}
	if !strings.Contains(s.Producer, "1.7.4") {
		t.Errorf("schema: producer %q does not name XGBoost 1.7.4, which wrote the file", s.Producer)
	}
	for _, c := range s.Inputs {
		if c.Kind != process.Number || c.Required {
			t.Errorf("schema: input %q is %v, required %v; want an optional number", c.Name, c.Kind, c.Required)
		}
	}
	label := f.Metadata.LabelOrDefault()
	modeltest.CheckNames(t, s, modeltest.Names{
		Label:   label,
		Inputs:  want.Inputs,
		Classes: want.Classes,
		Outputs: modeltest.Outputs(label, want.Classes),
	})
}

// compareFixture checks got, the answer for f's rows from first on, against
// XGBoost's predictions: confidences within 1e-6, the predicted class the
// most confident one; regression values within 1e-6 relative.
func compareFixture(t *testing.T, f *fixture, got *process.Table, first int) {
	t.Helper()
	label := "prediction(" + f.Metadata.LabelOrDefault() + ")"
	for r := range got.Rows() {
		i := first + r
		if f.Schema.Task == process.Regression {
			modeltest.CheckValue(t, "XGBoost", got, label, r, i, modeltest.Value(t, f.Model, i, f.Predictions[i]))
			continue
		}
		probs := modeltest.Confidences(t, f.Model, i, f.Predictions[i], len(f.Schema.Classes))
		modeltest.CheckConfidences(t, "XGBoost", got, r, i, f.Schema.Classes, probs)
		modeltest.CheckClass(t, "XGBoost", got, label, r, i, probs, f.Schema.Classes[modeltest.MostProbable(probs)])
	}
}

// TestFixturesRowWise: every fixture model, scored in row ranges at once,
// answers each range as it answers the whole table, which is what its
// RowWise promise lets the scoring engine do with a large request.
func TestFixturesRowWise(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			f := readFixture(t, "testdata", name)
			m := loadFixtureModel(t, "testdata", name, ".json", f)
			if !m.RowWise || !m.ProcessInfo(name).RowWise {
				t.Errorf("the model is not RowWise")
			}
			big := *f
			for len(big.Rows) < 4000 {
				big.Rows = append(big.Rows, f.Rows...)
			}
			modeltest.CheckRowWise(t, m.Process, big.table(t, 0, len(big.Rows)), 7)
		})
	}
}
