package modeltest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/internal/testenv"
	"github.com/scorehub/scorehub/registry"
)

// recorder stands in for a test, noting the errors reported and how it
// ended; Skip and Fatal stop its goroutine as they stop a real test's.
type recorder struct {
	testing.TB
	errors []string
	ended  string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Skip(args ...any) {
	r.ended = "skip: " + fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.ended = "fail: " + fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func run(f func(testing.TB)) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func TestRequireMissingPython(t *testing.T) {
	t.Setenv(testenv.RequireAllVar, "")
	p := modeltest.Python{
		Path:     filepath.Join(t.TempDir(), "python3"),
		Imports:  []string{"sklearn"},
		Packages: "python3-sklearn",
		Module:   "sklearn",
		Library:  "scikit-learn",
		Version:  "1.2",
	}
	r := run(p.Require)
	if !strings.HasPrefix(r.ended, "skip: ") || !strings.Contains(r.ended, "install python3-sklearn to test against scikit-learn") {
		t.Errorf("Require without the interpreter ended with %q, want a skip saying what to install", r.ended)
	}
}

func TestFixtureNames(t *testing.T) {
	r := run(func(tb testing.TB) { modeltest.FixtureNames(tb, t.TempDir()) })
	if !strings.Contains(r.ended, "no *.rows.json") {
		t.Errorf("FixtureNames of an empty directory ended with %q, want a failure naming *.rows.json", r.ended)
	}
}

// answer is a classifier's answer for one row.
func answer(t *testing.T, class string, confidences ...float64) *registry.Table {
	t.Helper()
	return tabletest.Must(1,
		registry.TextColumn("prediction(label)", []string{class}, nil),
		registry.NumberColumn("confidence(a)", []float64{confidences[0]}, nil),
		registry.NumberColumn("confidence(b)", []float64{confidences[1]}, nil),
	)
}

func TestCompare(t *testing.T) {
	classes := []string{"a", "b"}
	tests := []struct {
		name   string
		got    *registry.Table
		probs  []float64
		errors int
	}{
		{"within tolerance", answer(t, "b", 0.2000005, 0.7999995), []float64{0.2, 0.8}, 0},
		{"confidence off", answer(t, "b", 0.201, 0.799), []float64{0.2, 0.8}, 2},
		{"wrong class", answer(t, "a", 0.2, 0.8), []float64{0.2, 0.8}, 1},
		{"tie goes either way", answer(t, "a", 0.5, 0.5000001), []float64{0.5, 0.5000001}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(func(tb testing.TB) {
				modeltest.CheckConfidences(tb, "lib", tt.got, 0, 7, classes, tt.probs)
				modeltest.CheckClass(tb, "lib", tt.got, "prediction(label)", 0, 7, tt.probs, classes[modeltest.MostProbable(tt.probs)])
			})
			if len(r.errors) != tt.errors || r.ended != "" {
				t.Fatalf("got errors %q and end %q, want %d errors", r.errors, r.ended, tt.errors)
			}
			for _, e := range r.errors {
				if !strings.HasPrefix(e, "row 7: ") || !strings.Contains(e, "lib") {
					t.Errorf("error %q does not name the fixture row and the library", e)
				}
			}
		})
	}
}

func TestCheckValue(t *testing.T) {
	tests := []struct {
		got, want float64
		ok        bool
	}{
		{1000.0005, 1000, true}, // relative to the value
		{1000.002, 1000, false},
		{0.0000005, 0, true}, // absolute below 1
		{0.000002, 0, false},
	}
	for _, tt := range tests {
		got := tabletest.Must(1, registry.NumberColumn("prediction(y)", []float64{tt.got}, nil))
		r := run(func(tb testing.TB) { modeltest.CheckValue(tb, "lib", got, "prediction(y)", 0, 0, tt.want) })
		if (len(r.errors) == 0) != tt.ok {
			t.Errorf("CheckValue(%v, want %v) reported %q; want passing %v", tt.got, tt.want, r.errors, tt.ok)
		}
	}
	r := run(func(tb testing.TB) {
		modeltest.CheckValue(tb, "lib", tabletest.Must(1, registry.NumberColumn("x", []float64{1}, nil)), "prediction(y)", 0, 0, 1)
	})
	if !strings.Contains(r.ended, `no column "prediction(y)"`) {
		t.Errorf("CheckValue without the column ended with %q, want a failure naming it", r.ended)
	}
}

func TestTable(t *testing.T) {
	tab := modeltest.Table(t, 3, 5, registry.NumberColumn("x", []float64{1, 2}, nil))
	id, ok := tab.Lookup("id")
	if !ok || tab.Rows() != 2 || tab.NumColumns() != 2 {
		t.Fatalf("Table answered %d rows × %d columns (id %v), want 2 × 2 with id", tab.Rows(), tab.NumColumns(), ok)
	}
	if v, _ := id.Text(1); v != "row 4" {
		t.Errorf("id of the second row is %q, want the fixture's row number, %q", v, "row 4")
	}
}

func TestCheckNames(t *testing.T) {
	s := registry.ModelSchema{
		Label:   "species",
		Inputs:  []registry.ColumnSpec{{Name: "a"}, {Name: "b"}},
		Classes: []string{"x", "y"},
		Outputs: []registry.ColumnSpec{{Name: "prediction(species)"}, {Name: "confidence(x)"}, {Name: "confidence(y)"}},
	}
	want := modeltest.Names{Label: "species", Inputs: []string{"a", "b"}, Classes: []string{"x", "y"}, Outputs: modeltest.Outputs("species", []string{"x", "y"})}
	if r := run(func(tb testing.TB) { modeltest.CheckNames(tb, s, want) }); len(r.errors) != 0 {
		t.Errorf("CheckNames of a matching schema reported %q", r.errors)
	}
	want.Inputs = []string{"b", "a"}
	r := run(func(tb testing.TB) { modeltest.CheckNames(tb, s, want) })
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "schema: inputs") {
		t.Errorf("CheckNames of inputs in another order reported %q, want one error about the inputs", r.errors)
	}
}

func TestCheckSchema(t *testing.T) {
	s := registry.ModelSchema{Format: "onnx", Task: registry.Classification, Label: "y",
		Inputs: []registry.ColumnSpec{{Name: "a", Kind: registry.Number}, {Name: "b", Kind: registry.Text}}}
	want := modeltest.Schema{Format: "onnx", Task: registry.Classification, TextInputs: []string{"b"},
		Names: modeltest.Names{Label: "y", Inputs: []string{"a", "b"}}}
	if r := run(func(tb testing.TB) { modeltest.CheckSchema(tb, s, want) }); len(r.errors) != 0 {
		t.Errorf("CheckSchema of a matching schema reported %q", r.errors)
	}
	want.Format, want.TextInputs = "pmml", nil
	r := run(func(tb testing.TB) { modeltest.CheckSchema(tb, s, want) })
	if len(r.errors) != 2 || !strings.Contains(r.errors[0], `format "onnx"`) || !strings.Contains(r.errors[1], `input "b"`) {
		t.Errorf("CheckSchema of another format and a text input said to be a number reported %q, want an error about each", r.errors)
	}
}

func TestSameText(t *testing.T) {
	tests := []struct {
		name, want, got, says string
	}{
		{"last digits", `{"p": [0.25, 1e3]}`, `{"p": [0.2500000000001, 1000.0000000001]}`, ""},
		{"number off", `{"p": [0.25]}`, `{"p": [0.2501]}`, "number 1 is 0.2501, was 0.25"},
		{"text changed", `{"p": [0.25]}`, `{"q": [0.25]}`, "the text before number 1 changed"},
		{"number added", `{"p": [0.25]}`, `{"p": [0.25, 1]}`, "2 numbers, was 1"},
		{"tail changed", `{"p": 1}`, `{"p": 1, "x": "y"}`, "the text after the last number changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			want, got := filepath.Join(dir, "want.json"), filepath.Join(dir, "got.json")
			writeFile(t, want, tt.want)
			writeFile(t, got, tt.got)
			r := run(func(tb testing.TB) { modeltest.SameText(tb, "gen.py", want, got) })
			if tt.says == "" {
				if len(r.errors) != 0 || r.ended != "" {
					t.Errorf("SameText reported %q and ended %q, want no difference", r.errors, r.ended)
				}
				return
			}
			if len(r.errors) != 1 || !strings.Contains(r.errors[0], "gen.py now writes want.json differently: "+tt.says) {
				t.Errorf("SameText reported %q, want one error saying %q", r.errors, tt.says)
			}
		})
	}
}

func TestSameFixtureNames(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(dir, "a.rows.json"), filepath.Join(dir, "b.rows.json"), filepath.Join(out, "a.rows.json")} {
		writeFile(t, p, "{}")
	}
	r := run(func(tb testing.TB) { modeltest.SameFixtureNames(tb, "gen.py", dir, out) })
	if !strings.Contains(r.ended, `gen.py writes the fixtures ["a"]`) {
		t.Errorf("SameFixtureNames with a fixture gone ended with %q, want a failure naming what the script wrote", r.ended)
	}
	writeFile(t, filepath.Join(out, "b.rows.json"), "{}")
	var names []string
	r = run(func(tb testing.TB) { names = modeltest.SameFixtureNames(tb, "gen.py", dir, out) })
	if r.ended != "" || !slices.Equal(names, []string{"a", "b"}) {
		t.Errorf("SameFixtureNames of the same fixtures ended with %q and answered %q, want [a b]", r.ended, names)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRowsTable(t *testing.T) {
	rows := []map[string]any{{"x": 1.5, "s": "a"}, {"x": nil, "s": "b"}, {"x": 2.5, "s": "c"}}
	tab := modeltest.RowsTable(t, "m", rows, 1, 3, []string{"x", "s"}, []string{"s"})
	var names []string
	for i := range tab.NumColumns() {
		names = append(names, tab.Column(i).Name)
	}
	if tab.Rows() != 2 || !slices.Equal(names, []string{"s", "x", "id"}) {
		t.Fatalf("RowsTable of rows 1..2 answered %d rows of %q, want 2 rows of the inputs reversed and the id", tab.Rows(), names)
	}
	x, s := tab.Column(1), tab.Column(0)
	if _, ok := x.Number(0); ok || x.Numbers[1] != 2.5 || s.Kind != registry.Text || s.Texts[0] != "b" {
		t.Errorf("RowsTable answered x %v (missing %v) and s %q; want x missing then 2.5, s text b, c", x.Numbers, x.Missing, s.Texts)
	}
	r := run(func(tb testing.TB) { modeltest.RowsTable(tb, "m", rows, 0, 1, []string{"s"}, nil) })
	if !strings.Contains(r.ended, "m: row 0: s is a, not a number") {
		t.Errorf("RowsTable of text in a number input ended with %q, want a failure naming the model, row and input", r.ended)
	}
}
