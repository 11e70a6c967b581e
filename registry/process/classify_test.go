package process_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// fixedProbs returns a PredictFunc that copies p into the probabilities.
func fixedProbs(p ...float64) process.PredictFunc {
	return func(_ context.Context, _ process.Input, probs []float64) error {
		copy(probs, p)
		return nil
	}
}

func TestClassifierScores(t *testing.T) {
	nan := math.NaN()
	classes := []string{"no", "yes", "maybe"}
	p, err := process.Classifier("churn", classes, fixedProbs(
		0.1, 0.7, 0.2, // yes
		0.4, 0.4, 0.2, // tie: the first class wins
		nan, nan, nan, // no prediction
		nan, 0.3, 0.6, // NaN is skipped
		0.2, 0.2, 0.6, // last class
	))
	if err != nil {
		t.Fatal(err)
	}
	in := tabletest.Must(5, process.NumberColumn("x", make([]float64, 5), nil))
	out, err := p.Score(context.Background(), process.Input{Table: in})
	if err != nil {
		t.Fatal(err)
	}
	if out.Rows() != 5 {
		t.Fatalf("rows = %d, want 5", out.Rows())
	}

	type col struct {
		Name   string
		Kind   process.Kind
		Values []any
	}
	var got []col
	for i := range out.NumColumns() {
		c := out.Column(i)
		vals := make([]any, out.Rows())
		for r := range vals {
			vals[r], _ = out.Row(r).Value(c.Name)
		}
		got = append(got, col{c.Name, c.Kind, vals})
	}
	want := []col{
		{"prediction(churn)", process.Text, []any{"yes", "no", nil, "maybe", "maybe"}},
		{"confidence(no)", process.Number, []any{0.1, 0.4, nil, nil, 0.2}},
		{"confidence(yes)", process.Number, []any{0.7, 0.4, nil, 0.3, 0.2}},
		{"confidence(maybe)", process.Number, []any{0.2, 0.2, nil, 0.6, 0.6}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result columns (-want +got):\n%s", diff)
	}
}

func TestClassifierPassesInputAndErrors(t *testing.T) {
	boom := errors.New("model file missing")
	var sawRows, sawLen int
	p, err := process.Classifier("y", []string{"a", "b"}, func(_ context.Context, in process.Input, probs []float64) error {
		sawRows, sawLen = in.Table.Rows(), len(probs)
		for _, v := range probs {
			if v != 0 {
				return errors.New("probabilities do not arrive zeroed")
			}
		}
		return boom
	})
	if err != nil {
		t.Fatal(err)
	}
	in := tabletest.Must(3, process.TextColumn("x", []string{"a", "b", "c"}, nil))
	if _, err := p.Score(context.Background(), process.Input{Table: in}); !errors.Is(err, boom) {
		t.Errorf("Score error = %v, want the predict error", err)
	}
	if sawRows != 3 || sawLen != 6 {
		t.Errorf("predict saw %d rows and %d probabilities, want 3 and 6", sawRows, sawLen)
	}
}

func TestClassifierValidation(t *testing.T) {
	ok := fixedProbs()
	tests := []struct {
		name    string
		label   string
		classes []string
		predict process.PredictFunc
		want    string
	}{
		{"no label", "", []string{"a"}, ok, "label"},
		{"no classes", "y", nil, ok, "at least one class"},
		{"repeated class", "y", []string{"a", "b", "a"}, ok, `class "a" appears twice`},
		{"no predict function", "y", []string{"a"}, nil, "predict function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := process.Classifier(tt.label, tt.classes, tt.predict)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestClassifierKeepsItsClasses(t *testing.T) {
	classes := []string{"a", "b"}
	p, err := process.Classifier("y", classes, fixedProbs(0.9, 0.1))
	if err != nil {
		t.Fatal(err)
	}
	classes[0] = "changed"
	out, err := p.Score(context.Background(), process.Input{Table: tabletest.Must(1, process.NumberColumn("x", []float64{1}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := out.Row(0).Text("prediction(y)"); v != "a" {
		t.Errorf("prediction = %q after the caller changed its slice, want %q", v, "a")
	}
	if _, ok := out.Lookup("confidence(a)"); !ok {
		t.Error(`column "confidence(a)" is gone after the caller changed its slice`)
	}
}

// TestClassifierScratchArrivesZeroed scores twice with a predict function
// that fills every probability the first time and only the first row's the
// second time: the second result must not show the first call's values.
func TestClassifierScratchArrivesZeroed(t *testing.T) {
	calls := 0
	p, err := process.Classifier("y", []string{"a", "b"}, func(_ context.Context, _ process.Input, probs []float64) error {
		calls++
		if calls == 1 {
			for i := range probs {
				probs[i] = 0.5
			}
			return nil
		}
		probs[0], probs[1] = 0.9, 0.1
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	in := process.Input{Table: tabletest.Must(3, process.NumberColumn("x", make([]float64, 3), nil))}
	if _, err := p.Score(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	out, err := p.Score(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	conf, _ := out.Lookup("confidence(a)")
	if diff := cmp.Diff([]float64{0.9, 0, 0}, conf.Numbers); diff != "" {
		t.Errorf("confidence(a) (-want +got):\n%s", diff)
	}
}

// TestClassifierOneRowAndManyClasses covers the two shapes Score builds
// differently: one row (predict writes into the result) and more classes
// than a table keeps without a by-name index.
func TestClassifierOneRowAndManyClasses(t *testing.T) {
	classes := make([]string, 20)
	probs := make([]float64, 20)
	for k := range classes {
		classes[k] = "c" + strings.Repeat("x", k)
		probs[k] = float64(k) / 190
	}
	p, err := process.Classifier("label", classes, fixedProbs(probs...))
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Score(context.Background(), process.Input{Table: tabletest.Must(1, process.NumberColumn("x", []float64{1}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out.NumColumns(), 21; got != want {
		t.Fatalf("%d columns, want %d", got, want)
	}
	if got, _ := out.Row(0).Text("prediction(label)"); got != classes[19] {
		t.Errorf("prediction = %q, want %q", got, classes[19])
	}
	for k, c := range classes {
		got, ok := out.Row(0).Number("confidence(" + c + ")")
		if !ok || got != probs[k] {
			t.Errorf("confidence(%s) = %v, %v; want %v", c, got, ok, probs[k])
		}
	}
	if i := out.Index("confidence(" + classes[3] + ")"); i != 4 {
		t.Errorf("Index = %d, want 4", i)
	}
}

// TestClassifierOneRow covers the one-row result, built in one piece: the
// prediction, a row without one, and the predict function's error.
func TestClassifierOneRow(t *testing.T) {
	nan := math.NaN()
	fail := errors.New("model unavailable")
	tests := []struct {
		name    string
		predict process.PredictFunc
		label   any // nil: missing
		conf    []float64
		err     error
	}{
		{name: "predicted", predict: fixedProbs(0.2, 0.5, 0.3), label: "b", conf: []float64{0.2, 0.5, 0.3}},
		{name: "no prediction", predict: fixedProbs(nan, nan, nan), label: nil, conf: []float64{nan, nan, nan}},
		{name: "error", predict: func(context.Context, process.Input, []float64) error { return fail }, err: fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := process.Classifier("y", []string{"a", "b", "c"}, tt.predict)
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.Score(context.Background(), process.Input{Table: tabletest.Must(1, process.NumberColumn("x", []float64{1}, nil))})
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if tt.err != nil {
				return
			}
			row := out.Row(0)
			if got, _ := row.Value("prediction(y)"); got != tt.label {
				t.Errorf("prediction = %v, want %v", got, tt.label)
			}
			var conf []float64
			for _, c := range []string{"a", "b", "c"} {
				col, ok := out.Lookup("confidence(" + c + ")")
				if !ok {
					t.Fatalf("no confidence(%s) column", c)
				}
				conf = append(conf, col.Numbers[0])
			}
			if diff := cmp.Diff(tt.conf, conf, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("confidences (-want +got):\n%s", diff)
			}
			if out.NumColumns() != 4 || out.Rows() != 1 {
				t.Errorf("shape %d×%d, want 1×4", out.Rows(), out.NumColumns())
			}
		})
	}
}

// TestClassifierOutputs: the columns a format states for a classifier are
// the ones the Classifier answers, names, kinds and order.
func TestClassifierOutputs(t *testing.T) {
	classes := []string{"setosa", "versicolor"}
	p, err := process.Classifier("species", classes, func(ctx context.Context, in process.Input, probs []float64) error {
		probs[0], probs[1] = 0.25, 0.75
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	in, err := process.NewTable(1, process.NumberColumn("x", []float64{1}, nil))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Score(context.Background(), process.Input{Table: in})
	if err != nil {
		t.Fatal(err)
	}
	var got []process.ColumnSpec
	for i := range res.NumColumns() {
		c := res.Column(i)
		got = append(got, process.ColumnSpec{Name: c.Name, Kind: c.Kind})
	}
	want := []process.ColumnSpec{
		{Name: "prediction(species)", Kind: process.Text},
		{Name: "confidence(setosa)", Kind: process.Number},
		{Name: "confidence(versicolor)", Kind: process.Number},
	}
	if diff := cmp.Diff(want, process.ClassifierOutputs("species", classes)); diff != "" {
		t.Errorf("ClassifierOutputs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the Classifier answered other columns (-want +got):\n%s", diff)
	}
}

// TestConfidenceClass reads back the class of each confidence column
// ClassifierOutputs names, and no other column.
func TestConfidenceClass(t *testing.T) {
	classes := []string{"no", "yes (renewed)", "0"}
	for i, o := range process.ClassifierOutputs("label", classes) {
		cls, ok := process.ConfidenceClass(o.Name)
		switch {
		case i == 0 && ok:
			t.Errorf("%s reads as the confidence of %q", o.Name, cls)
		case i > 0 && (!ok || cls != classes[i-1]):
			t.Errorf("%s reads as %q, %v; want %q", o.Name, cls, ok, classes[i-1])
		}
	}
	for _, name := range []string{"confidence()", "confidence(x", "Confidence(x)", "x"} {
		if cls, ok := process.ConfidenceClass(name); ok {
			t.Errorf("%q reads as the confidence of %q", name, cls)
		}
	}
}
