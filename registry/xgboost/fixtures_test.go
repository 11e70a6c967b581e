package xgboost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/xgboost"
)

// fixture is one model's NAME.rows.json, as testdata/gen.py writes it.
type fixture struct {
	Model string `json:"model"`
	// Metadata is what an upload of the model carries.
	Metadata registry.ModelMetadata `json:"metadata"`
	// Schema is what the reader should derive from the file and Metadata.
	Schema struct {
		Task      registry.Task `json:"task"`
		Objective string        `json:"objective"`
		Inputs    []string      `json:"inputs"`
		Classes   []string      `json:"classes"`
		Trees     int           `json:"trees"`
	} `json:"schema"`
	// Rows are the input rows; a nil value or an absent key is missing.
	Rows []map[string]*float64 `json:"rows"`
	// Predictions are XGBoost's: per row a []float64 of confidences in
	// class order for a classifier, a float64 for a regressor.
	Predictions []json.RawMessage `json:"predictions"`
}

// fixtureNames lists the models in dir: every NAME with a NAME.rows.json.
func fixtureNames(t testing.TB, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".rows.json"))
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatalf("no *.rows.json in %s", dir)
	}
	return names
}

func readFixture(t testing.TB, dir, name string) *fixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s.rows.json: %v", name, err)
	}
	if len(f.Rows) == 0 || len(f.Rows) != len(f.Predictions) {
		t.Fatalf("%s.rows.json: %d rows, %d predictions", name, len(f.Rows), len(f.Predictions))
	}
	return &f
}

// classProbs returns row i's expected confidences (classifiers).
func (f *fixture) classProbs(t testing.TB, i int) []float64 {
	t.Helper()
	var p []float64
	if err := json.Unmarshal(f.Predictions[i], &p); err != nil || len(p) != len(f.Schema.Classes) {
		t.Fatalf("%s: prediction %d is not %d confidences: %s", f.Model, i, len(f.Schema.Classes), f.Predictions[i])
	}
	return p
}

// value returns row i's expected prediction (regressors).
func (f *fixture) value(t testing.TB, i int) float64 {
	t.Helper()
	var v float64
	if err := json.Unmarshal(f.Predictions[i], &v); err != nil {
		t.Fatalf("%s: prediction %d is not a number: %s", f.Model, i, f.Predictions[i])
	}
	return v
}

// table builds rows first..last-1 as a client's request would arrive: a
// Number column for each feature some row has, missing where a row has
// null or no key, in the reverse of the model's order (the reader matches
// columns by name), plus a text column the model does not read.
func (f *fixture) table(t testing.TB, first, last int) *registry.Table {
	t.Helper()
	n := last - first
	var cols []registry.Column
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
		cols = append(cols, registry.NumberColumn(name, values, missing))
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("row %d", first+i)
	}
	cols = append(cols, registry.TextColumn("id", ids, nil))
	tab, err := registry.NewTable(n, cols...)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// loadFixtureModel loads NAME.ext from dir with the fixture's metadata.
func loadFixtureModel(t testing.TB, dir, name, ext string, f *fixture) *registry.LoadedModel {
	t.Helper()
	artifact, err := os.ReadFile(filepath.Join(dir, name+ext))
	if err != nil {
		t.Fatal(err)
	}
	format := xgboost.Format{}
	if !format.Detect(artifact) {
		t.Fatalf("Detect(%s%s) = false, want true", name, ext)
	}
	m, err := format.Load(artifact, f.Metadata.Clone())
	if err != nil {
		t.Fatalf("Load(%s%s): %v", name, ext, err)
	}
	return m
}

func TestFixtures(t *testing.T) {
	for _, name := range fixtureNames(t, "testdata") {
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
	got := score(t, m, f.table(t, 0, len(f.Rows)))
	compareFixture(t, f, got, 0)
	for i := range f.Rows {
		compareFixture(t, f, score(t, m, f.table(t, i, i+1)), i)
	}
}

func score(t *testing.T, m *registry.LoadedModel, tab *registry.Table) *registry.Table {
	t.Helper()
	out, err := m.Process.Score(context.Background(), registry.Input{Table: tab})
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	if out.Rows() != tab.Rows() {
		t.Fatalf("Score answered %d rows for %d", out.Rows(), tab.Rows())
	}
	return out
}

func checkSchema(t *testing.T, f *fixture, s registry.ModelSchema) {
	t.Helper()
	want := f.Schema
	if s.Task != want.Task || s.Objective != want.Objective || s.Trees != want.Trees {
		t.Errorf("schema: task %q, objective %q, %d trees; want %q, %q, %d", s.Task, s.Objective, s.Trees, want.Task, want.Objective, want.Trees)
	}
	if !strings.Contains(s.Producer, "1.7.4") {
		t.Errorf("schema: producer %q does not name XGBoost 1.7.4, which wrote the file", s.Producer)
	}
	label := f.Metadata.LabelOrDefault()
	if s.Label != label {
		t.Errorf("schema: label %q, want %q", s.Label, label)
	}
	var inputs []string
	for _, c := range s.Inputs {
		inputs = append(inputs, c.Name)
		if c.Kind != registry.Number || c.Required {
			t.Errorf("schema: input %q is %v, required %v; want an optional number", c.Name, c.Kind, c.Required)
		}
	}
	if !slices.Equal(inputs, want.Inputs) {
		t.Errorf("schema: inputs %q, want %q", inputs, want.Inputs)
	}
	if !slices.Equal(s.Classes, want.Classes) {
		t.Errorf("schema: classes %q, want %q", s.Classes, want.Classes)
	}
	outputs := []string{"prediction(" + label + ")"}
	for _, c := range want.Classes {
		outputs = append(outputs, "confidence("+c+")")
	}
	var got []string
	for _, c := range s.Outputs {
		got = append(got, c.Name)
	}
	if !slices.Equal(got, outputs) {
		t.Errorf("schema: outputs %q, want %q", got, outputs)
	}
}

// compareFixture checks got, the answer for f's rows from first on, against
// XGBoost's predictions: confidences within 1e-6, the predicted class the
// most confident one; regression values within 1e-6 relative.
func compareFixture(t *testing.T, f *fixture, got *registry.Table, first int) {
	t.Helper()
	label := "prediction(" + f.Metadata.LabelOrDefault() + ")"
	pred, ok := got.Lookup(label)
	if !ok {
		t.Fatalf("no column %q in the answer", label)
	}
	for r := range got.Rows() {
		i := first + r
		if f.Schema.Task == registry.Regression {
			want := f.value(t, i)
			v, ok := pred.Number(r)
			if !ok || math.Abs(v-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("row %d: %s = %v (present %v), XGBoost says %v (off by %.3g)", i, label, v, ok, want, v-want)
			}
			continue
		}
		probs := f.classProbs(t, i)
		for c, want := range probs {
			name := "confidence(" + f.Schema.Classes[c] + ")"
			col, ok := got.Lookup(name)
			if !ok {
				t.Fatalf("no column %q in the answer", name)
			}
			v, ok := col.Number(r)
			if !ok || math.Abs(v-want) > 1e-6 {
				t.Errorf("row %d: %s = %v (present %v), XGBoost says %v (off by %.3g)", i, name, v, ok, want, v-want)
			}
		}
		best := argmax(probs)
		if second := secondBest(probs, best); probs[best]-second < 1e-6 {
			continue // a tie within the tolerance may go either way
		}
		if v, _ := pred.Text(r); v != f.Schema.Classes[best] {
			t.Errorf("row %d: %s = %q, XGBoost's most probable class is %q", i, label, v, f.Schema.Classes[best])
		}
	}
}

func argmax(p []float64) int {
	best := 0
	for i, v := range p {
		if v > p[best] {
			best = i
		}
	}
	return best
}

func secondBest(p []float64, best int) float64 {
	second := math.Inf(-1)
	for i, v := range p {
		if i != best && v > second {
			second = v
		}
	}
	return second
}
