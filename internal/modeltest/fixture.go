package modeltest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// RowsExt ends the name of a fixture's rows file: NAME.rows.json holds the
// rows of model NAME and what the training library answers for them.
const RowsExt = ".rows.json"

// FixtureNames lists the models in dir, sorted: every NAME with a
// NAME.rows.json. It fails t if there is none.
func FixtureNames(t testing.TB, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*"+RowsExt))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), RowsExt))
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatalf("no *%s in %s", RowsExt, dir)
	}
	return names
}

// ReadFixture decodes dir/NAME.rows.json into v, a format's own fixture
// type, and fails t if it cannot.
func ReadFixture(t testing.TB, dir, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+RowsExt))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s%s: %v", name, RowsExt, err)
	}
}

// Confidences decodes prediction i of model, a classifier's confidences in
// class order, and fails t unless it is n numbers.
func Confidences(t testing.TB, model string, i int, prediction json.RawMessage, n int) []float64 {
	t.Helper()
	var p []float64
	if err := json.Unmarshal(prediction, &p); err != nil || len(p) != n {
		t.Fatalf("%s: prediction %d is not %d confidences: %s", model, i, n, prediction)
	}
	return p
}

// Value decodes prediction i of model, a regressor's number, and fails t
// unless it is one.
func Value(t testing.TB, model string, i int, prediction json.RawMessage) float64 {
	t.Helper()
	var v float64
	if err := json.Unmarshal(prediction, &v); err != nil {
		t.Fatalf("%s: prediction %d is not a number: %s", model, i, prediction)
	}
	return v
}

// Score scores tab with m and fails t unless m answers one row for each.
func Score(t testing.TB, m *process.LoadedModel, tab *process.Table) *process.Table {
	t.Helper()
	out, err := m.Process.Score(context.Background(), process.Input{Table: tab})
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	if out.Rows() != tab.Rows() {
		t.Fatalf("Score answered %d rows for %d", out.Rows(), tab.Rows())
	}
	return out
}

// ScoreEachWay scores a fixture's n rows with m as one table, then each
// row on its own (a one-row request may take its own path), and hands
// check every answer with the index of its first row. table builds the
// request for rows first to last-1.
func ScoreEachWay(t testing.TB, m *process.LoadedModel, n int, table func(first, last int) *process.Table, check func(got *process.Table, first int)) {
	t.Helper()
	check(Score(t, m, table(0, n)), 0)
	for i := range n {
		check(Score(t, m, table(i, i+1)), i)
	}
}
