package scoring

import (
	"slices"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// TestShadowBatchGathers: a batch holds the challenger's inputs of every
// request added, in order, a column a request lacks as missing values and
// the columns it does not read left out; the first add is the one to
// offer the task, take empties the batch, and a request whose column
// holds another kind than the challenger reads does not join.
func TestShadowBatchGathers(t *testing.T) {
	inputs := []process.ColumnSpec{{Name: "x", Kind: process.Number}, {Name: "plan", Kind: process.Text}}
	var b shadowBatch
	mustTable := func(rows int, cols ...process.Column) *process.Table {
		tab, err := process.NewTable(rows, cols...)
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}
	add := func(tab *process.Table) (bool, bool, bool) {
		return b.add(inputs, tab, batchPart{rows: tab.Rows()})
	}
	if ok, first, wrong := add(mustTable(2, process.NumberColumn("x", []float64{1, 2}, nil), process.TextColumn("note", []string{"a", "b"}, nil))); !ok || !first || wrong {
		t.Fatalf("first add: %v %v %v", ok, first, wrong)
	}
	if ok, first, _ := add(mustTable(1, process.TextColumn("plan", []string{"gold"}, nil), process.NumberColumn("x", []float64{0}, []bool{true}))); !ok || first {
		t.Fatalf("second add: ok %v first %v; want it joined, the task offered already", ok, first)
	}
	if ok, _, wrong := add(mustTable(1, process.TextColumn("x", []string{"three"}, nil))); ok || !wrong {
		t.Errorf("a request whose x is text joined the batch (ok %v, wrong %v)", ok, wrong)
	}
	tab, parts := b.take()
	if tab.Rows() != 3 || tab.NumColumns() != 2 || len(parts) != 2 || parts[0].rows != 2 || parts[1].rows != 1 {
		t.Fatalf("took %d rows of %d columns in %d parts", tab.Rows(), tab.NumColumns(), len(parts))
	}
	x, _ := tab.Lookup("x")
	plan, _ := tab.Lookup("plan")
	var xs []any
	var plans []any
	for r := range 3 {
		v, ok := x.Number(r)
		xs = append(xs, map[bool]any{true: v, false: nil}[ok])
		p, ok := plan.Text(r)
		plans = append(plans, map[bool]any{true: p, false: nil}[ok])
	}
	if !slices.Equal(xs, []any{1.0, 2.0, nil}) || !slices.Equal(plans, []any{nil, nil, "gold"}) {
		t.Errorf("x %v, plan %v; want 1, 2, missing and missing, missing, gold", xs, plans)
	}
	if tab, _ := b.take(); tab != nil {
		t.Error("a second take found rows")
	}
	if _, first, _ := add(mustTable(1, process.NumberColumn("x", []float64{5}, nil))); !first {
		t.Error("the first add after take does not offer a task")
	}
}
