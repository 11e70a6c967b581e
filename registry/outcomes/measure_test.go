package outcomes

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/testenv"
)

// sklearnScript reads cases of predictions and outcomes and writes what
// scikit-learn's metrics make of them, the figures Measure computes.
const sklearnScript = `
import json, sys
from sklearn import metrics
out = []
for c in json.load(sys.stdin):
    if c["kind"] == "classes":
        y, labels, probs, classes = c["actual"], c["labels"], c["probs"], c["classes"]
        f = {"accuracy": metrics.accuracy_score(y, labels),
             "logLoss": metrics.log_loss(y, probs, labels=classes)}
        if len(classes) == 2:
            pos = [1 if v == classes[1] else 0 for v in y]
            f["brier"] = metrics.brier_score_loss(pos, [p[1] for p in probs])
            f["auc"] = metrics.roc_auc_score(pos, [p[1] for p in probs])
    else:
        y, pred = c["actual"], c["values"]
        f = {"mae": metrics.mean_absolute_error(y, pred),
             "rmse": metrics.mean_squared_error(y, pred) ** 0.5,
             "r2": metrics.r2_score(y, pred)}
    out.append(f)
json.dump(out, sys.stdout)
`

// TestMeasureAgreesWithScikitLearn: the figures of binary, three-class
// and regression rows, confidences rounded so that the binary ones tie,
// equal scikit-learn's accuracy_score, log_loss, brier_score_loss,
// roc_auc_score, mean_absolute_error, mean_squared_error and r2_score
// within 1e-12.
func TestMeasureAgreesWithScikitLearn(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import sklearn").Run(); err != nil {
		testenv.SkipOrFail(t, "%s cannot import sklearn: install python3-sklearn to check the figures against scikit-learn", python)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	type kase struct {
		Kind    string      `json:"kind"`
		Classes []string    `json:"classes,omitempty"`
		Actual  any         `json:"actual"`
		Labels  []string    `json:"labels,omitempty"`
		Probs   [][]float64 `json:"probs,omitempty"`
		Values  []float64   `json:"values,omitempty"`
	}
	var cases []kase
	var joined [][]Joined
	for _, classes := range [][]string{{"no", "yes"}, {"setosa", "versicolor", "virginica"}} {
		c := kase{Kind: "classes", Classes: classes}
		var actual []string
		var js []Joined
		for i := range 200 {
			probs := make([]float64, len(classes))
			sum := 0.0
			for k := range probs {
				probs[k] = math.Round(rng.Float64()*10) + 0.5 // a few values, so that ranks tie
				sum += probs[k]
			}
			best := 0
			for k := range probs {
				probs[k] /= sum
				if probs[k] > probs[best] {
					best = k
				}
			}
			y := classes[rng.IntN(len(classes))]
			if rng.Float64() < 0.6 {
				y = classes[best] // a model better than chance
			}
			actual = append(actual, y)
			c.Labels, c.Probs = append(c.Labels, classes[best]), append(c.Probs, probs)
			js = append(js, Joined{Prediction: Prediction{RowID: string(rune('a' + i%26)), Label: classes[best], Classes: classes, Confidences: probs},
				Actual: Outcome{IsLabel: true, Label: y}})
		}
		c.Actual = actual
		cases, joined = append(cases, c), append(joined, js)
	}
	reg := kase{Kind: "values"}
	var ys []float64
	var js []Joined
	for range 300 {
		y := rng.NormFloat64() * 10
		p := y + rng.NormFloat64()*3
		ys, reg.Values = append(ys, y), append(reg.Values, p)
		js = append(js, Joined{Prediction: Prediction{Value: p}, Actual: Outcome{Value: y}})
	}
	reg.Actual = ys
	cases, joined = append(cases, reg), append(joined, js)

	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-c", sklearnScript)
	cmd.Stdin = strings.NewReader(string(in))
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("scikit-learn: %v", err)
	}
	var want []map[string]float64
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for i, js := range joined {
		got := Measure(js)
		if got.Rows != len(js) {
			t.Errorf("case %d: %d rows measured, want %d", i, got.Rows, len(js))
		}
		for name, w := range want[i] {
			v := map[string]*float64{"accuracy": got.Accuracy, "logLoss": got.LogLoss, "brier": got.Brier, "auc": got.AUC,
				"mae": got.MAE, "rmse": got.RMSE, "r2": got.R2}[name]
			if v == nil || math.Abs(*v-w) > 1e-12*max(1, math.Abs(w)) {
				t.Errorf("case %d: %s = %v, scikit-learn's %v", i, name, deref(v), w)
			}
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestMeasureLeavesOutWhatRowsDoNotDetermine: no rows, outcomes of one
// class, or equal outcomes give no figure that needs more.
func TestMeasureLeavesOutWhatRowsDoNotDetermine(t *testing.T) {
	if f := Measure(nil); f.Rows != 0 || f.Accuracy != nil || f.MAE != nil {
		t.Errorf("no rows: %+v", f)
	}
	one := []Joined{{Prediction: Prediction{Label: "yes", Classes: []string{"no", "yes"}, Confidences: []float64{0.2, 0.8}}, Actual: Outcome{IsLabel: true, Label: "yes"}}}
	if f := Measure(one); f.AUC != nil || f.Accuracy == nil || *f.Accuracy != 1 {
		t.Errorf("rows of one class: %+v, want accuracy 1 and no AUC", f)
	}
	same := []Joined{{Prediction: Prediction{Value: 1}, Actual: Outcome{Value: 2}}, {Prediction: Prediction{Value: 3}, Actual: Outcome{Value: 2}}}
	if f := Measure(same); f.R2 != nil || f.MAE == nil || *f.MAE != 1 {
		t.Errorf("equal outcomes: %+v, want MAE 1 and no R²", f)
	}
	unseen := []Joined{{Prediction: Prediction{Label: "no", Classes: []string{"no", "yes"}, Confidences: []float64{1, 0}}, Actual: Outcome{IsLabel: true, Label: "maybe"}}}
	if f := Measure(unseen); f.LogLoss == nil || math.Abs(*f.LogLoss+math.Log(minConfidence)) > 1e-9 {
		t.Errorf("an outcome of no class: %+v, want the log loss of confidence 1e-15", f)
	}
}
