package modeltest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// Load reads the model file dir/file, checks that format detects it, and
// loads it with a copy of meta, failing t where any step fails.
func Load(t testing.TB, format process.ModelFormat, dir, file string, meta process.ModelMetadata) *process.LoadedModel {
	t.Helper()
	artifact, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	if !format.Detect(artifact) {
		t.Fatalf("Detect(%s) = false, want true", file)
	}
	m, err := format.Load(artifact, meta.Clone())
	if err != nil {
		t.Fatalf("Load(%s): %v", file, err)
	}
	return m
}

// Table builds the table a client would send for fixture rows first to
// last-1: cols, a column per input the format's test makes from the
// fixture, then
// a text column "id" ("row 0", "row 1", …) the model does not read, which
// it must answer around.
func Table(t testing.TB, first, last int, cols ...process.Column) *process.Table {
	t.Helper()
	n := last - first
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("row %d", first+i)
	}
	tab, err := process.NewTable(n, append(slices.Clip(cols), process.TextColumn("id", ids, nil))...)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// Outputs are the columns a classifier or regressor answers:
// prediction(LABEL), then confidence(CLASS) for each of classes.
func Outputs(label string, classes []string) []string {
	out := []string{"prediction(" + label + ")"}
	for _, c := range classes {
		out = append(out, "confidence("+c+")")
	}
	return out
}

// Names are the names a model's schema should hold.
type Names struct {
	// Label is the schema's label.
	Label string
	// Inputs are its inputs' names, in order.
	Inputs []string
	// Classes are a classifier's classes, in order; nil for others.
	Classes []string
	// Outputs are the names of the columns it answers, in order.
	Outputs []string
}

// CheckNames reports to t where s's label, input names, classes or output
// names differ from want's. The kinds of inputs are the format's to check.
func CheckNames(t testing.TB, s process.ModelSchema, want Names) {
	t.Helper()
	if s.Label != want.Label {
		t.Errorf("schema: label %q, want %q", s.Label, want.Label)
	}
	var inputs []string
	for _, c := range s.Inputs {
		inputs = append(inputs, c.Name)
	}
	if !slices.Equal(inputs, want.Inputs) {
		t.Errorf("schema: inputs %q, want %q", inputs, want.Inputs)
	}
	if !slices.Equal(s.Classes, want.Classes) {
		t.Errorf("schema: classes %q, want %q", s.Classes, want.Classes)
	}
	var outputs []string
	for _, c := range s.Outputs {
		outputs = append(outputs, c.Name)
	}
	if !slices.Equal(outputs, want.Outputs) {
		t.Errorf("schema: outputs %q, want %q", outputs, want.Outputs)
	}
}

// Schema is what a model's schema should hold, for [CheckSchema].
type Schema struct {
	// Format and Task are the schema's.
	Format string
	Task   process.Task
	// TextInputs are the inputs that are text; the others are numbers.
	TextInputs []string
	Names
}

// CheckSchema reports to t where s's format, task, kinds of inputs or
// names differ from want's.
func CheckSchema(t testing.TB, s process.ModelSchema, want Schema) {
	t.Helper()
	if s.Format != want.Format || s.Task != want.Task {
		t.Errorf("schema: format %q, task %q; want %s, %q", s.Format, s.Task, want.Format, want.Task)
	}
	for _, c := range s.Inputs {
		kind := process.Number
		if slices.Contains(want.TextInputs, c.Name) {
			kind = process.Text
		}
		if c.Kind != kind {
			t.Errorf("schema: input %q is %v, want %v", c.Name, c.Kind, kind)
		}
	}
	CheckNames(t, s, want.Names)
}

// RowsTable builds rows first..last-1 of a fixture's rows as a client's
// request would arrive: a column per input, a Text column for those
// textInputs names and a Number column for the others (missing where a
// row has null), in the reverse of the model's order (the reader matches
// columns by name), plus the id column of [Table]. A value of another
// type fails t, naming the fixture's model.
func RowsTable(t testing.TB, model string, rows []map[string]any, first, last int, inputs, textInputs []string) *process.Table {
	t.Helper()
	n := last - first
	var cols []process.Column
	for j := len(inputs) - 1; j >= 0; j-- {
		name := inputs[j]
		if slices.Contains(textInputs, name) {
			values := make([]string, n)
			for i := range n {
				s, ok := rows[first+i][name].(string)
				if !ok {
					t.Fatalf("%s: row %d: %s is %v, not text", model, first+i, name, rows[first+i][name])
				}
				values[i] = s
			}
			cols = append(cols, process.TextColumn(name, values, nil))
			continue
		}
		values := make([]float64, n)
		var missing []bool
		for i := range n {
			switch v := rows[first+i][name].(type) {
			case float64:
				values[i] = v
			case nil:
				if missing == nil {
					missing = make([]bool, n)
				}
				missing[i] = true
			default:
				t.Fatalf("%s: row %d: %s is %v, not a number", model, first+i, name, v)
			}
		}
		cols = append(cols, process.NumberColumn(name, values, missing))
	}
	return Table(t, first, last, cols...)
}
