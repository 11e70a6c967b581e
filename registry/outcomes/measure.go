package outcomes

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Figures are a model's live performance over some joined rows. A field
// that does not apply to the model's task, or that the rows do not
// determine (R² of rows whose outcomes are all equal, ROC AUC of rows of
// one class), is nil.
type Figures struct {
	// Rows counts the joined rows measured.
	Rows int `json:"rows"`
	// Accuracy is the share of rows whose predicted class is the outcome;
	// LogLoss the mean of -ln(the confidence of the outcome's class),
	// each confidence at least 1e-15 as scikit-learn clips it (an outcome
	// that is none of the model's classes has confidence 0); Brier, of a
	// model of two classes, the mean squared difference of the second
	// class's confidence and whether the outcome is that class; AUC, of
	// two classes, the area under the ROC curve of the second class's
	// confidence, ties counting half.
	Accuracy *float64 `json:"accuracy,omitempty"`
	LogLoss  *float64 `json:"logLoss,omitempty"`
	Brier    *float64 `json:"brier,omitempty"`
	AUC      *float64 `json:"auc,omitempty"`
	// MAE, RMSE and R2 are a regressor's mean absolute error, root mean
	// squared error and coefficient of determination (1 - SS_res/SS_tot).
	MAE  *float64 `json:"mae,omitempty"`
	RMSE *float64 `json:"rmse,omitempty"`
	R2   *float64 `json:"r2,omitempty"`
}

// minConfidence is the smallest confidence log loss takes the log of.
const minConfidence = 1e-15

// Measure returns the figures of rows, all predictions of one model:
// a classifier's when their predictions have classes, else a
// regressor's. Rows whose prediction or outcome is missing, or whose
// outcome is of the other kind, are not measured.
func Measure(rows []Joined) Figures {
	var classes []string
	for _, j := range rows {
		if j.Classes != nil {
			classes = j.Classes
			break
		}
	}
	if classes != nil {
		return measureClasses(rows, classes)
	}
	return measureValues(rows)
}

func measureClasses(rows []Joined, classes []string) Figures {
	var f Figures
	var right, loss, brier float64
	type scored struct {
		p        float64
		positive bool
	}
	var ranked []scored
	binary := len(classes) == 2
	for _, j := range rows {
		if !j.Actual.IsLabel || j.Label == "" || !slices.Equal(j.Classes, classes) || len(j.Confidences) != len(classes) {
			continue
		}
		f.Rows++
		if j.Label == j.Actual.Label {
			right++
		}
		p := 0.0
		if k := slices.Index(classes, j.Actual.Label); k >= 0 {
			p = j.Confidences[k]
		}
		loss -= math.Log(max(p, minConfidence))
		if binary {
			y := 0.0
			if j.Actual.Label == classes[1] {
				y = 1
			}
			d := j.Confidences[1] - y
			brier += d * d
			ranked = append(ranked, scored{j.Confidences[1], y == 1})
		}
	}
	if f.Rows == 0 {
		return f
	}
	n := float64(f.Rows)
	f.Accuracy, f.LogLoss = ptr(right/n), ptr(loss/n)
	if binary {
		f.Brier = ptr(brier / n)
		slices.SortFunc(ranked, func(a, b scored) int {
			switch {
			case a.p < b.p:
				return -1
			case a.p > b.p:
				return 1
			}
			return 0
		})
		// Mann-Whitney: the sum of the positives' ranks, ties given the
		// mean of their ranks.
		var pos, rankSum float64
		for i := 0; i < len(ranked); {
			k := i
			for k < len(ranked) && ranked[k].p == ranked[i].p {
				k++
			}
			mean := float64(i+k+1) / 2 // ranks i+1 … k
			for _, s := range ranked[i:k] {
				if s.positive {
					pos++
					rankSum += mean
				}
			}
			i = k
		}
		if neg := n - pos; pos > 0 && neg > 0 {
			f.AUC = ptr((rankSum - pos*(pos+1)/2) / (pos * neg))
		}
	}
	return f
}

func measureValues(rows []Joined) Figures {
	var f Figures
	var abs, sq, sum float64
	for _, j := range rows {
		if j.Actual.IsLabel || math.IsNaN(j.Value) || math.IsNaN(j.Actual.Value) {
			continue
		}
		f.Rows++
		d := j.Value - j.Actual.Value
		abs += math.Abs(d)
		sq += d * d
		sum += j.Actual.Value
	}
	if f.Rows == 0 {
		return f
	}
	n := float64(f.Rows)
	f.MAE, f.RMSE = ptr(abs/n), ptr(math.Sqrt(sq/n))
	mean := sum / n
	var tot float64
	for _, j := range rows {
		if !j.Actual.IsLabel && !math.IsNaN(j.Value) && !math.IsNaN(j.Actual.Value) {
			d := j.Actual.Value - mean
			tot += d * d
		}
	}
	if tot > 0 {
		f.R2 = ptr(1 - sq/tot)
	}
	return f
}

func ptr(v float64) *float64 { return &v }

// ModelFigures are one model's figures on an endpoint: over the rows fed
// back within a window and in total, and for a challenger the champion's
// on the rows the challenger predicted too, so that the two compare on
// the same rows.
type ModelFigures struct {
	Model              string   `json:"model"`
	Role               string   `json:"role"`
	Window             Figures  `json:"window"`
	Total              Figures  `json:"total"`
	ChampionOnSameRows *Figures `json:"championOnSameRows,omitzero"`
}

// RoleChampion is the Role of the predictions of an endpoint's own model.
const RoleChampion = "champion"

// ByModel returns the figures of each model of joined, one endpoint's
// rows: the champions first, then by model; the window is the rows fed
// back since. It also returns how many rows joined holds.
func ByModel(joined []Joined, since time.Time) ([]ModelFigures, int) {
	type key struct{ model, role string }
	byModel := map[key][]Joined{}
	var order []key
	champion := map[string]Joined{} // the champion's prediction of each row
	rows := map[string]bool{}
	for _, j := range joined {
		k := key{j.Model, j.Role}
		if _, ok := byModel[k]; !ok {
			order = append(order, k)
		}
		byModel[k] = append(byModel[k], j)
		rows[j.RowID] = true
		if j.Role == RoleChampion {
			champion[j.RowID] = j
		}
	}
	slices.SortStableFunc(order, func(a, b key) int {
		if (a.role == RoleChampion) != (b.role == RoleChampion) {
			if a.role == RoleChampion {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.model, b.model), cmp.Compare(a.role, b.role))
	})
	out := make([]ModelFigures, 0, len(order))
	for _, k := range order {
		js := byModel[k]
		var recent []Joined
		for _, j := range js {
			if !j.FedAt.Before(since) {
				recent = append(recent, j)
			}
		}
		m := ModelFigures{Model: k.model, Role: k.role, Window: Measure(recent), Total: Measure(js)}
		if k.role != RoleChampion {
			var same []Joined
			for _, j := range js {
				if c, ok := champion[j.RowID]; ok {
					same = append(same, c)
				}
			}
			f := Measure(same)
			m.ChampionOnSameRows = &f
		}
		out = append(out, m)
	}
	return out, len(rows)
}
