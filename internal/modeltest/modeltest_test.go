package modeltest_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/internal/testenv"
	"github.com/scorehub/scorehub/registry/process"
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
func answer(t *testing.T, class string, confidences ...float64) *process.Table {
	t.Helper()
	return tabletest.Must(1,
		process.TextColumn("prediction(label)", []string{class}, nil),
		process.NumberColumn("confidence(a)", []float64{confidences[0]}, nil),
		process.NumberColumn("confidence(b)", []float64{confidences[1]}, nil),
	)
}

func TestCompare(t *testing.T) {
	classes := []string{"a", "b"}
	tests := []struct {
		name   string
		got    *process.Table
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
		got := tabletest.Must(1, process.NumberColumn("prediction(y)", []float64{tt.got}, nil))
		r := run(func(tb testing.TB) { modeltest.CheckValue(tb, "lib", got, "prediction(y)", 0, 0, tt.want) })
		if (len(r.errors) == 0) != tt.ok {
			t.Errorf("CheckValue(%v, want %v) reported %q; want passing %v", tt.got, tt.want, r.errors, tt.ok)
		}
	}
	r := run(func(tb testing.TB) {
		modeltest.CheckValue(tb, "lib", tabletest.Must(1, process.NumberColumn("x", []float64{1}, nil)), "prediction(y)", 0, 0, 1)
	})
	if !strings.Contains(r.ended, `no column "prediction(y)"`) {
		t.Errorf("CheckValue without the column ended with %q, want a failure naming it", r.ended)
	}
}

func TestTable(t *testing.T) {
	tab := modeltest.Table(t, 3, 5, process.NumberColumn("x", []float64{1, 2}, nil))
	id, ok := tab.Lookup("id")
	if !ok || tab.Rows() != 2 || tab.NumColumns() != 2 {
		t.Fatalf("Table answered %d rows × %d columns (id %v), want 2 × 2 with id", tab.Rows(), tab.NumColumns(), ok)
	}
	if v, _ := id.Text(1); v != "row 4" {
		t.Errorf("id of the second row is %q, want the fixture's row number, %q", v, "row 4")
	}
}

func TestCheckNames(t *testing.T) {
	s := process.ModelSchema{
		Label:   "species",
		Inputs:  []process.ColumnSpec{{Name: "a"}, {Name: "b"}},
		Classes: []string{"x", "y"},
		Outputs: []process.ColumnSpec{{Name: "prediction(species)"}, {Name: "confidence(x)"}, {Name: "confidence(y)"}},
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
	s := process.ModelSchema{Format: "onnx", Task: process.Classification, Label: "y",
		Inputs: []process.ColumnSpec{{Name: "a", Kind: process.Number}, {Name: "b", Kind: process.Text}}}
	want := modeltest.Schema{Format: "onnx", Task: process.Classification, TextInputs: []string{"b"},
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

// TestSameJSON: a regenerated JSON fixture passes with numbers in their
// last digits changed, and fails naming every value that differs in its
// structure, its text, its integers or its numbers beyond the tolerance.
func TestSameJSON(t *testing.T) {
	tests := []struct {
		name, want, got string
		says            []string
	}{
		{"last digits", `{"p": [0.25, 1e3, -3.4e-9], "n": 4}`, `{"n": 4, "p": [0.2500000000001, 1000.0000000001, -3.4000000000001e-9]}`, nil},
		{"within tolerance", `{"p": [0.25, 1234.5]}`, `{"p": [0.2500009, 1234.5011]}`, nil},
		{"NaN", `{"c": [NaN, 0.5]}`, `{"c": [NaN, 0.5]}`, nil},
		{"number off", `{"p": [0.25, 1234.5]}`, `{"p": [0.2500011, 1234.5013]}`, []string{"/p[0]: want 0.25, got 0.2500011", "/p[1]: want 1234.5, got 1234.5013"}},
		{"integer changed", `{"n": 1000000}`, `{"n": 1000001}`, []string{"/n: want 1000000, got 1000001"}},
		{"key renamed", `{"p": 1}`, `{"q": 1}`, []string{"/p: want 1, got nothing", "/q: want nothing, got 1"}},
		{"list grew", `{"t": [{"l": [1, 2]}]}`, `{"t": [{"l": [1, 2, 3]}]}`, []string{"/t[0]/l: want a list of 2, got a list of 3"}},
		{"text changed", `{"s": "setosa"}`, `{"s": "virginica"}`, []string{`/s: want "setosa", got "virginica"`}},
		{"number became text", `{"s": 1}`, `{"s": "1"}`, []string{`/s: want 1, got "1"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkSame(t, modeltest.SameJSON, "want.json", tt.want, tt.got, tt.says)
		})
	}
}

// TestSameXML: as TestSameJSON, for a PMML document's attributes, elements
// and the numbers of an Array's text.
func TestSameXML(t *testing.T) {
	const doc = `<?xml version="1.0"?>
<PMML version="4.4">
 <!-- %s -->
 <Node id="1" score="0.3333333333333333"><True/><Value value="setosa"/></Node>
 <Node id="2" score="12.5"><Array n="2" type="real">1.5 2.5</Array></Node>
</PMML>`
	variant := func(old, new string) string { return strings.Replace(fmt.Sprintf(doc, "a"), old, new, 1) }
	tests := []struct {
		name, got string
		says      []string
	}{
		{"last digits", variant(`"0.3333333333333333"`, `"0.33333333333333337"`), nil},
		{"comment and spacing", strings.ReplaceAll(fmt.Sprintf(doc, "b"), "\n ", "\n\t"), nil},
		{"number off", variant(`1.5 2.5`, `1.5 2.6`), []string{"/PMML/Node[2]/Array[1]/#text[1]: want 2.5, got 2.6"}},
		{"attribute off", variant(`"12.5"`, `"12.6"`), []string{"/PMML/Node[2]/@score: want 12.5, got 12.6"}},
		{"id changed", variant(`id="1"`, `id="3"`), []string{"/PMML/Node[1]/@id: want 1, got 3"}},
		{"label changed", variant(`"setosa"`, `"Setosa"`), []string{`/PMML/Node[1]/Value[1]/@value: want "setosa", got "Setosa"`}},
		{"children swapped", variant(`<True/><Value value="setosa"/>`, `<Value value="setosa"/><True/>`),
			[]string{`/PMML/Node[1]/#children[0]: want "True", got "Value"`, `/PMML/Node[1]/#children[1]: want "Value", got "True"`}},
		{"element renamed", variant(`<True/>`, `<False/>`), []string{
			`/PMML/Node[1]/#children[0]: want "True", got "False"`,
			"/PMML/Node[1]/False[1]: want nothing, got an object of 0 keys",
			"/PMML/Node[1]/True[1]: want an object of 0 keys, got nothing",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkSame(t, modeltest.SameXML, "want.pmml", fmt.Sprintf(doc, "a"), tt.got, tt.says)
		})
	}
}

// checkSame writes want and got to files and checks that same, comparing
// them, reports exactly the differences says lists, in one error naming
// the file and the script.
func checkSame(t *testing.T, same func(testing.TB, string, string, string), file, want, got string, says []string) {
	t.Helper()
	dir := t.TempDir()
	wantPath, gotPath := filepath.Join(dir, file), filepath.Join(dir, "got")
	writeFile(t, wantPath, want)
	writeFile(t, gotPath, got)
	r := run(func(tb testing.TB) { same(tb, "gen.py", wantPath, gotPath) })
	if r.ended != "" {
		t.Fatalf("ended with %q", r.ended)
	}
	if says == nil {
		if len(r.errors) != 0 {
			t.Errorf("reported %q, want no difference", r.errors)
		}
		return
	}
	if len(r.errors) != 1 {
		t.Fatalf("reported %q, want one error", r.errors)
	}
	lines := strings.Split(r.errors[0], "\n\t")
	if !strings.HasPrefix(lines[0], "gen.py now writes "+file+" differently") {
		t.Errorf("error %q does not name the script and the file", lines[0])
	}
	if diff := cmp.Diff(says, lines[1:]); diff != "" {
		t.Errorf("differences listed (-want +got):\n%s", diff)
	}
}

// TestSameTreeListsSome: a fixture that differs everywhere is reported
// with the count and the first differences in path order, indexes by
// their number.
func TestSameTreeListsSome(t *testing.T) {
	want, got := map[string]any{}, map[string]any{}
	for i := range 30 {
		want[fmt.Sprintf("Node[%d]", i+1)] = int64(i)
		got[fmt.Sprintf("Node[%d]", i+1)] = int64(i + 1)
	}
	r := run(func(tb testing.TB) { modeltest.SameTree(tb, "gen.py", "m.pmml", want, got) })
	if len(r.errors) != 1 {
		t.Fatalf("reported %q, want one error", r.errors)
	}
	lines := strings.Split(r.errors[0], "\n\t")
	if !strings.HasSuffix(lines[0], ": 30 values differ") || len(lines) != 22 ||
		lines[1] != "/Node[1]: want 0, got 1" || lines[2] != "/Node[2]: want 1, got 2" || lines[21] != "… and 10 more" {
		t.Errorf("reported %q", r.errors[0])
	}
}

func TestCompareDocuments(t *testing.T) {
	want := map[string]any{"f": float32(0.1), "d": []any{1.5, math.NaN()}, "i": int64(7), "s": "a", "b": true, "z": nil}
	same := map[string]any{"f": math.Nextafter32(0.1, 1), "d": []any{1.5000000000000002, math.NaN()}, "i": int64(7), "s": "a", "b": true, "z": nil}
	if d := modeltest.Compare(want, same); d != nil {
		t.Errorf("Compare of values in their last digits answered %v", d)
	}
	off := map[string]any{"f": float32(0.1001), "d": []any{1.5, 0.0}, "i": int64(8), "s": "a", "b": false, "z": "x"}
	got := fmt.Sprint(modeltest.Compare(want, off))
	const says = `[/b: want true, got false /d[1]: want NaN, got 0 /f: want 0.1, got 0.1001 /i: want 7, got 8 /z: want null, got "x"]`
	if got != says {
		t.Errorf("Compare answered\n%s\nwant\n%s", got, says)
	}
}

func TestClose(t *testing.T) {
	tests := []struct {
		want, got float64
		close     bool
	}{
		{1000, 1000.0009, true}, // relative to the value
		{1000, 1000.0011, false},
		{0, 0.0000009, true}, // absolute below 1
		{0, 0.0000011, false},
		{math.NaN(), math.NaN(), true},
		{0, math.NaN(), false},
		{math.Inf(1), math.Inf(1), true},
		{math.Inf(1), 1e300, false},
		{1e300, math.Inf(1), false},
	}
	for _, tt := range tests {
		if got := modeltest.Close(tt.want, tt.got); got != tt.close {
			t.Errorf("Close(%v, %v) = %v", tt.want, tt.got, got)
		}
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
	if _, ok := x.Number(0); ok || x.Numbers[1] != 2.5 || s.Kind != process.Text || s.Texts[0] != "b" {
		t.Errorf("RowsTable answered x %v (missing %v) and s %q; want x missing then 2.5, s text b, c", x.Numbers, x.Missing, s.Texts)
	}
	r := run(func(tb testing.TB) { modeltest.RowsTable(tb, "m", rows, 0, 1, []string{"s"}, nil) })
	if !strings.Contains(r.ended, "m: row 0: s is a, not a number") {
		t.Errorf("RowsTable of text in a number input ended with %q, want a failure naming the model, row and input", r.ended)
	}
}
