package pmml_test

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
	"github.com/scorehub/scorehub/registry/pmml"
)

// fixture is one model's NAME.rows.json, as testdata/export.py writes it.
type fixture struct {
	Model string `json:"model"`
	// Metadata is what an upload of the model carries.
	Metadata registry.ModelMetadata `json:"metadata"`
	// Schema is what the reader should derive from the file and Metadata.
	Schema struct {
		Task registry.Task `json:"task"`
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
	if f.Schema.Task == registry.Classification && len(f.Classes) != len(f.Rows) {
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
	if f.Schema.Task == registry.Clustering {
		return []string{"cluster"}
	}
	out := []string{"prediction(" + f.label() + ")"}
	for _, c := range f.Schema.Classes {
		out = append(out, "confidence("+c+")")
	}
	return out
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

// cluster returns row i's expected cluster (clusterings).
func (f *fixture) cluster(t testing.TB, i int) string {
	t.Helper()
	var c string
	if err := json.Unmarshal(f.Predictions[i], &c); err != nil {
		t.Fatalf("%s: prediction %d is not a cluster's name: %s", f.Model, i, f.Predictions[i])
	}
	return c
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
// column per input, a Number column for a number and a Text column for a
// string, in the reverse of the model's order (the reader matches columns
// by name), plus a text column the model does not read.
func (f *fixture) table(t testing.TB, first, last int) *registry.Table {
	t.Helper()
	n := last - first
	var cols []registry.Column
	for j := len(f.Schema.Inputs) - 1; j >= 0; j-- {
		name := f.Schema.Inputs[j]
		if slices.Contains(f.Schema.TextInputs, name) {
			values := make([]string, n)
			for i := range n {
				s, ok := f.Rows[first+i][name].(string)
				if !ok {
					t.Fatalf("%s: row %d: %s is %v, not text", f.Model, first+i, name, f.Rows[first+i][name])
				}
				values[i] = s
			}
			cols = append(cols, registry.TextColumn(name, values, nil))
			continue
		}
		values := make([]float64, n)
		for i := range n {
			v, ok := f.Rows[first+i][name].(float64)
			if !ok {
				t.Fatalf("%s: row %d: %s is %v, not a number", f.Model, first+i, name, f.Rows[first+i][name])
			}
			values[i] = v
		}
		cols = append(cols, registry.NumberColumn(name, values, nil))
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

// loadFixtureModel loads NAME.pmml from dir with the fixture's metadata.
func loadFixtureModel(t testing.TB, dir, name string, f *fixture) *registry.LoadedModel {
	t.Helper()
	artifact, err := os.ReadFile(filepath.Join(dir, name+".pmml"))
	if err != nil {
		t.Fatal(err)
	}
	format := pmml.Format{}
	if !format.Detect(artifact) {
		t.Fatalf("Detect(%s.pmml) = false, want true", name)
	}
	m, err := format.Load(artifact, f.Metadata.Clone())
	if err != nil {
		t.Fatalf("Load(%s.pmml): %v", name, err)
	}
	return m
}

// TestFixtures scores every scikit-learn model of testdata as PMML and
// compares the answers with scikit-learn's own.
func TestFixtures(t *testing.T) {
	for _, name := range fixtureNames(t, "testdata") {
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
	compareFixture(t, f, score(t, m, f.table(t, 0, len(f.Rows))), 0)
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
	if s.Format != "pmml" || s.Task != want.Task {
		t.Errorf("schema: format %q, task %q; want pmml, %q", s.Format, s.Task, want.Task)
	}
	label := f.label()
	if s.Label != label {
		t.Errorf("schema: label %q, want %q", s.Label, label)
	}
	var inputs []string
	for _, c := range s.Inputs {
		inputs = append(inputs, c.Name)
		kind := registry.Number
		if slices.Contains(want.TextInputs, c.Name) {
			kind = registry.Text
		}
		if c.Kind != kind {
			t.Errorf("schema: input %q is %v, want %v", c.Name, c.Kind, kind)
		}
	}
	if !slices.Equal(inputs, want.Inputs) {
		t.Errorf("schema: inputs %q, want %q", inputs, want.Inputs)
	}
	if !slices.Equal(s.Classes, want.Classes) {
		t.Errorf("schema: classes %q, want %q", s.Classes, want.Classes)
	}
	outputs := f.outputs()
	var got []string
	for _, c := range s.Outputs {
		got = append(got, c.Name)
	}
	if !slices.Equal(got, outputs) {
		t.Errorf("schema: outputs %q, want %q", got, outputs)
	}
}

// compareFixture checks got, the answer for f's rows from first on, against
// scikit-learn's: confidences within 1e-6 of predict_proba and the class
// predict answers; regression values within 1e-6 relative; the cluster
// predict answers.
func compareFixture(t *testing.T, f *fixture, got *registry.Table, first int) {
	t.Helper()
	label := f.outputs()[0]
	pred, ok := got.Lookup(label)
	if !ok {
		t.Fatalf("no column %q in the answer", label)
	}
	for r := range got.Rows() {
		i := first + r
		if f.Schema.Task == registry.Clustering {
			if v, ok := pred.Text(r); !ok || v != f.cluster(t, i) {
				t.Errorf("row %d: cluster = %q (present %v), scikit-learn says %q", i, v, ok, f.cluster(t, i))
			}
			continue
		}
		if f.Schema.Task == registry.Regression {
			want := f.value(t, i)
			v, ok := pred.Number(r)
			if !ok || math.Abs(v-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("row %d: %s = %v (present %v), scikit-learn says %v (off by %.3g)", i, label, v, ok, want, v-want)
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
				t.Errorf("row %d: %s = %v (present %v), scikit-learn says %v (off by %.3g)", i, name, v, ok, want, v-want)
			}
		}
		if tied(probs) {
			continue // a tie within the tolerance may go either way
		}
		if v, _ := pred.Text(r); v != f.Classes[i] {
			t.Errorf("row %d: %s = %q, scikit-learn predicts %q", i, label, v, f.Classes[i])
		}
	}
}

// tied reports whether the two most probable classes are within 1e-6.
func tied(p []float64) bool {
	s := slices.Clone(p)
	slices.Sort(s)
	return len(s) > 1 && s[len(s)-1]-s[len(s)-2] < 1e-6
}
