package demo

import (
	"context"
	"math"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

func TestIrisTrainingAccuracy(t *testing.T) {
	model, err := TrainIris()
	if err != nil {
		t.Fatal(err)
	}
	x, y, _, err := IrisData()
	if err != nil {
		t.Fatal(err)
	}
	if len(x) != 150 {
		t.Fatalf("iris has %d rows, want 150", len(x))
	}
	probs := make([]float64, 3)
	right := 0
	for i, row := range x {
		model.Predict(row, probs)
		best := 0
		for c := range probs {
			if probs[c] > probs[best] {
				best = c
			}
		}
		if best == y[i] {
			right++
		}
	}
	// Gaussian naive Bayes is known to classify about 96% of iris correctly.
	if acc := float64(right) / float64(len(x)); acc < 0.94 {
		t.Errorf("training accuracy %.3f, want ≥ 0.94", acc)
	}
}

func TestIrisProcess(t *testing.T) {
	info, err := Iris()
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	in := tabletest.Must(4,
		process.NumberColumn("sepal_length", []float64{5.1, 6.4, 6.3, nan}, nil),
		process.NumberColumn("sepal_width", []float64{3.5, 3.2, 3.3, nan}, nil),
		process.NumberColumn("petal_length", []float64{1.4, 4.5, 6.0, 6.0}, []bool{false, false, false, false}),
		process.NumberColumn("petal_width", []float64{0.2, 1.5, 2.5, 0}, []bool{false, false, false, true}),
	)
	out, err := info.Process.Score(context.Background(), process.Input{Table: in})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range out.NumColumns() {
		names = append(names, out.Column(i).Name)
	}
	want := []string{"prediction(species)", "confidence(setosa)", "confidence(versicolor)", "confidence(virginica)"}
	if len(names) != len(want) {
		t.Fatalf("result columns %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("result columns %q, want %q", names, want)
		}
	}
	pred, _ := out.Lookup("prediction(species)")
	// The last row has only petal_length = 6.0, which alone says virginica.
	for i, species := range []string{"setosa", "versicolor", "virginica", "virginica"} {
		got, ok := pred.Text(i)
		if !ok || got != species {
			t.Errorf("row %d: prediction %q (present %v), want %q", i, got, ok, species)
		}
		sum := 0.0
		for _, c := range []string{"setosa", "versicolor", "virginica"} {
			col, _ := out.Lookup("confidence(" + c + ")")
			v, ok := col.Number(i)
			if !ok || v < 0 || v > 1 {
				t.Errorf("row %d: confidence(%s) = %v (present %v), want a probability", i, c, v, ok)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("row %d: confidences sum to %v, want 1", i, sum)
		}
	}
}

func TestPredictAllMissingGivesPriors(t *testing.T) {
	model, err := TrainIris()
	if err != nil {
		t.Fatal(err)
	}
	probs := make([]float64, 3)
	model.Predict([]float64{math.NaN(), math.NaN(), math.NaN(), math.NaN()}, probs)
	for c, p := range probs {
		if math.Abs(p-1.0/3) > 1e-12 {
			t.Errorf("class %d: %v, want the prior 1/3", c, p)
		}
	}
}

func TestTrainNaiveBayesRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		x    [][]float64
		y    []int
	}{
		{"labels and rows differ", [][]float64{{1}}, []int{0, 1}},
		{"label out of range", [][]float64{{1}, {2}}, []int{0, 2}},
		{"class without rows", [][]float64{{1}, {2}}, []int{0, 0}},
		{"ragged row", [][]float64{{1}, {2, 3}}, []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := TrainNaiveBayes([]string{"f"}, []string{"a", "b"}, tt.x, tt.y); err == nil {
				t.Error("TrainNaiveBayes succeeded, want an error")
			}
		})
	}
}

// TestIrisRowWise: the iris process, scored in row ranges at once,
// answers each range as it answers the whole table, which is what its
// RowWise promise lets the scoring engine do with a large request.
func TestIrisRowWise(t *testing.T) {
	p, err := Iris()
	if err != nil {
		t.Fatal(err)
	}
	if !p.RowWise {
		t.Error("the iris process is not RowWise")
	}
	x, _, _, err := IrisData()
	if err != nil {
		t.Fatal(err)
	}
	const rows = 6000
	cols := make([]process.Column, len(irisFeatures))
	for f, name := range irisFeatures {
		vals, missing := make([]float64, rows), make([]bool, rows)
		for r := range vals {
			vals[r] = x[r%len(x)][f] + float64(r%7)/10
			missing[r] = (r+f)%11 == 0
		}
		cols[f] = process.NumberColumn(name, vals, missing)
	}
	modeltest.CheckRowWise(t, p.Process, tabletest.Must(rows, cols...), 7)
}

// TestPredictKeepsItsAnswers: the demo answers what it always has, to the
// last bit, whatever is done to make it faster; a value so large that
// every class is impossible gives no probability at all.
func TestPredictKeepsItsAnswers(t *testing.T) {
	model, err := TrainIris()
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	tests := []struct {
		x, want []float64
	}{
		{[]float64{6.3, 2.8, 5.1, 1.5}, []float64{2.197986490597147e-130, 0.7126451442263502, 0.2873548557736499}},
		{[]float64{5.1, 3.5, 1.4, 0.2}, []float64{1, 1.3849610273850705e-18, 7.254890249100175e-26}},
		{[]float64{7.7, 2.6, 6.9, 2.3}, []float64{4.69548985670276e-310, 6.474068605154187e-13, 0.9999999999993525}},
		{[]float64{6, nan, 4.5, nan}, []float64{1.0599141184269536e-69, 0.9254298556813277, 0.07457014431867223}},
		{[]float64{1e200, 3, 4, 1}, []float64{nan, nan, nan}},
	}
	for _, tt := range tests {
		got := make([]float64, 3)
		model.Predict(tt.x, got)
		for c := range got {
			if math.Float64bits(got[c]) != math.Float64bits(tt.want[c]) && !(math.IsNaN(got[c]) && math.IsNaN(tt.want[c])) {
				t.Errorf("Predict(%v) = %v, want %v", tt.x, got, tt.want)
				break
			}
		}
	}
}
