package scoring

import (
	"math"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// TestShadowBatchGathers: a batch holds the challenger's inputs of every
// request added, in order, a column a request lacks as missing values and
// the columns it does not read left out, and the champion's answers to
// them; the first add is the one to offer the task, take empties the
// batch, and a request whose column holds another kind than the
// challenger reads, or whose answer holds no answers of the batch's
// classes, does not join.
func TestShadowBatchGathers(t *testing.T) {
	inputs := []process.ColumnSpec{{Name: "x", Kind: process.Number}, {Name: "plan", Kind: process.Text}}
	outputs := []process.ColumnSpec{{Name: "prediction(y)", Kind: process.Text}, {Name: "confidence(no)", Kind: process.Number}, {Name: "confidence(yes)", Kind: process.Number}}
	var b shadowBatch
	mustTable := func(rows int, cols ...process.Column) *process.Table {
		tab, err := process.NewTable(rows, cols...)
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}
	answer := func(labels ...string) wire.Result {
		yes := make([]float64, len(labels))
		no := make([]float64, len(labels))
		for r, l := range labels {
			if l == "yes" {
				yes[r] = 0.8
			} else {
				yes[r] = 0.3
			}
			no[r] = 1 - yes[r]
		}
		return wire.Result{Whole: mustTable(len(labels), process.TextColumn("prediction(y)", labels, nil),
			process.NumberColumn("confidence(no)", no, nil), process.NumberColumn("confidence(yes)", yes, nil))}
	}
	if got := b.add(inputs, mustTable(2, process.NumberColumn("x", []float64{1, 2}, nil), process.TextColumn("note", []string{"a", "b"}, nil)), answer("yes", "no"), outputs, nil); got != joinedFirst {
		t.Fatalf("first add: %v, want joinedFirst", got)
	}
	if got := b.add(inputs, mustTable(1, process.TextColumn("plan", []string{"gold"}, nil), process.NumberColumn("x", []float64{0}, []bool{true})), answer("no"), outputs, []string{"r3"}); got != joinedBatch {
		t.Fatalf("second add: %v; want it joined, the task offered already", got)
	}
	if got := b.add(inputs, mustTable(1, process.TextColumn("x", []string{"three"}, nil)), answer("no"), outputs, nil); got != wrongKind {
		t.Errorf("a request whose x is text: %v, want wrongKind", got)
	}
	other := wire.Result{Whole: mustTable(1, process.TextColumn("prediction(y)", []string{"maybe"}, nil), process.NumberColumn("confidence(maybe)", []float64{1}, nil))}
	otherOutputs := []process.ColumnSpec{{Name: "prediction(y)", Kind: process.Text}, {Name: "confidence(maybe)", Kind: process.Number}}
	if got := b.add(inputs, mustTable(1, process.NumberColumn("x", []float64{4}, nil)), other, otherOutputs, nil); got != unanswered {
		t.Errorf("an answer of other classes: %v, want unanswered", got)
	}
	tab, champ, kept := b.take()
	if tab.Rows() != 3 || tab.NumColumns() != 2 {
		t.Fatalf("took %d rows of %d columns", tab.Rows(), tab.NumColumns())
	}
	if !slices.Equal(champ.labels, []string{"yes", "no", "no"}) || !slices.Equal(champ.classes, []string{"no", "yes"}) || !slices.Equal(champ.of("yes"), []float64{0.8, 0.3, 0.3}) {
		t.Errorf("the champion's answers: labels %v, classes %v, confidence(yes) %v", champ.labels, champ.classes, champ.of("yes"))
	}
	if len(kept) != 1 || kept[0].lo != 2 || !slices.Equal(kept[0].ids, []string{"r3"}) {
		t.Errorf("kept %+v, want rows from 2 on with ID r3", kept)
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
	if tab, _, _ := b.take(); tab != nil {
		t.Error("a second take found rows")
	}
	if got := b.add(inputs, mustTable(1, process.NumberColumn("x", []float64{5}, nil)), answer("yes"), outputs, nil); got != joinedFirst {
		t.Errorf("the first add after take: %v, want joinedFirst", got)
	}
}

// TestAnswersAppend: answers read a result in parts as a whole, a missing
// confidence or prediction as NaN and a missing label as a missing row,
// and refuse a result of another kind than they hold, unchanged.
func TestAnswersAppend(t *testing.T) {
	mustTable := func(rows int, cols ...process.Column) *process.Table {
		tab, err := process.NewTable(rows, cols...)
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}
	classifier := []process.ColumnSpec{{Name: "prediction(y)", Kind: process.Text}, {Name: "confidence(a)", Kind: process.Number}}
	parts := wire.Result{Parts: []*process.Table{
		mustTable(2, process.TextColumn("prediction(y)", []string{"a", ""}, []bool{false, true}), process.NumberColumn("confidence(a)", []float64{0.9, 0}, []bool{false, true})),
		mustTable(1, process.TextColumn("prediction(y)", []string{"a"}, nil), process.NumberColumn("confidence(a)", []float64{0.6}, nil)),
	}}
	a := shadowView(parts, classifier)
	if a == nil || !slices.Equal(a.labels, []string{"a", "", "a"}) || !slices.Equal(a.missing, []bool{false, true, false}) {
		t.Fatalf("classifier in parts: %+v", a)
	}
	if c := a.of("a"); c[0] != 0.9 || !math.IsNaN(c[1]) || c[2] != 0.6 {
		t.Errorf("confidence(a) %v, want 0.9, NaN, 0.6", c)
	}
	regressor := []process.ColumnSpec{{Name: "prediction(v)", Kind: process.Number}}
	r := wire.Result{Whole: mustTable(2, process.NumberColumn("prediction(v)", []float64{1.5, 0}, []bool{false, true}))}
	if a.appendResult(r, regressor) || len(a.missing) != 3 {
		t.Errorf("a classifier's answers took a regression's: %d rows", len(a.missing))
	}
	b := shadowView(r, regressor)
	if b == nil || b.numbers[0] != 1.5 || !math.IsNaN(b.numbers[1]) || !slices.Equal(b.missing, []bool{false, true}) {
		t.Fatalf("regressor: %+v", b)
	}
	if b.appendResult(parts, classifier) || len(b.missing) != 2 {
		t.Errorf("a regression's answers took a classifier's: %d rows", len(b.missing))
	}
	if shadowView(wire.Result{Whole: mustTable(1, process.NumberColumn("score", []float64{1}, nil))}, classifier) != nil {
		t.Error("a result without the label column has answers")
	}
}

// TestModelOutputs: the answers of a regressor's endpoint that adds the
// answeredBy and outlier columns are read from its prediction, not from
// the text columns its result holds only once they are added.
func TestModelOutputs(t *testing.T) {
	x := &execution{answeredBy: true, outliers: true}
	x.process.Output = []process.ColumnSpec{{Name: "prediction(v)", Kind: process.Number},
		{Name: registry.AnsweredByColumn, Kind: process.Text}, {Name: registry.OutlierColumn, Kind: process.Text}}
	if got := x.modelOutputs(); len(got) != 1 || got[0].Name != "prediction(v)" {
		t.Fatalf("model outputs %v, want prediction(v) alone", got)
	}
	tab, err := process.NewTable(1, process.NumberColumn("prediction(v)", []float64{2.5}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if a := shadowView(wire.Result{Whole: tab}, x.modelOutputs()); a == nil || a.numbers[0] != 2.5 {
		t.Errorf("answers %+v, want the prediction 2.5", a)
	}
	x.answeredBy, x.outliers = false, false
	if got := x.modelOutputs(); len(got) != 3 {
		t.Errorf("an endpoint that adds no columns: model outputs %v, want all 3", got)
	}
}
