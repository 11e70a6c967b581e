package registry_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry"
)

// fixedProbs returns a PredictFunc that copies p into the probabilities.
func fixedProbs(p ...float64) registry.PredictFunc {
	return func(_ context.Context, _ registry.Input, probs []float64) error {
		copy(probs, p)
		return nil
	}
}

func TestClassifierScores(t *testing.T) {
	nan := math.NaN()
	classes := []string{"no", "yes", "maybe"}
	p, err := registry.Classifier("churn", classes, fixedProbs(
		0.1, 0.7, 0.2, // yes
		0.4, 0.4, 0.2, // tie: the first class wins
		nan, nan, nan, // no prediction
		nan, 0.3, 0.6, // NaN is skipped
		0.2, 0.2, 0.6, // last class
	))
	if err != nil {
		t.Fatal(err)
	}
	in := registry.MustTable(5, registry.NumberColumn("x", make([]float64, 5), nil))
	out, err := p.Score(context.Background(), registry.Input{Table: in})
	if err != nil {
		t.Fatal(err)
	}
	if out.Rows() != 5 {
		t.Fatalf("rows = %d, want 5", out.Rows())
	}

	type col struct {
		Name   string
		Kind   registry.Kind
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
		{"prediction(churn)", registry.Text, []any{"yes", "no", nil, "maybe", "maybe"}},
		{"confidence(no)", registry.Number, []any{0.1, 0.4, nil, nil, 0.2}},
		{"confidence(yes)", registry.Number, []any{0.7, 0.4, nil, 0.3, 0.2}},
		{"confidence(maybe)", registry.Number, []any{0.2, 0.2, nil, 0.6, 0.6}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result columns (-want +got):\n%s", diff)
	}
}

func TestClassifierPassesInputAndErrors(t *testing.T) {
	boom := errors.New("model file missing")
	var sawRows, sawLen int
	p, err := registry.Classifier("y", []string{"a", "b"}, func(_ context.Context, in registry.Input, probs []float64) error {
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
	in := registry.MustTable(3, registry.TextColumn("x", []string{"a", "b", "c"}, nil))
	if _, err := p.Score(context.Background(), registry.Input{Table: in}); !errors.Is(err, boom) {
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
		predict registry.PredictFunc
		want    string
	}{
		{"no label", "", []string{"a"}, ok, "label"},
		{"no classes", "y", nil, ok, "at least one class"},
		{"repeated class", "y", []string{"a", "b", "a"}, ok, `class "a" appears twice`},
		{"no predict function", "y", []string{"a"}, nil, "predict function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := registry.Classifier(tt.label, tt.classes, tt.predict)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestClassifierKeepsItsClasses(t *testing.T) {
	classes := []string{"a", "b"}
	p, err := registry.Classifier("y", classes, fixedProbs(0.9, 0.1))
	if err != nil {
		t.Fatal(err)
	}
	classes[0] = "changed"
	out, err := p.Score(context.Background(), registry.Input{Table: registry.MustTable(1, registry.NumberColumn("x", []float64{1}, nil))})
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
