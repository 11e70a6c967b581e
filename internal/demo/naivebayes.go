package demo

import (
	"errors"
	"fmt"
	"math"
)

// NaiveBayes is a Gaussian naive Bayes classifier: per class, a prior and an
// independent normal distribution per feature. It is immutable once trained
// and safe for concurrent use.
type NaiveBayes struct {
	classes  []string
	features []string
	logPrior []float64   // per class
	mean     [][]float64 // [class][feature]
	variance [][]float64 // [class][feature]
	logNorm  [][]float64 // [class][feature]: log(2π·variance), computed once
}

// varSmoothing is added, scaled by the largest feature variance, to every
// variance so that a feature constant within a class does not give zero
// variance (the same rule as scikit-learn's GaussianNB).
const varSmoothing = 1e-9

// TrainNaiveBayes fits a model to rows x (one value per feature) labelled y
// (an index into classes). Every class needs at least one row.
func TrainNaiveBayes(features, classes []string, x [][]float64, y []int) (*NaiveBayes, error) {
	if len(x) != len(y) {
		return nil, fmt.Errorf("demo: %d rows but %d labels", len(x), len(y))
	}
	nf, nc := len(features), len(classes)
	if nf == 0 || nc == 0 {
		return nil, errors.New("demo: a model needs features and classes")
	}
	m := &NaiveBayes{
		classes: append([]string(nil), classes...), features: append([]string(nil), features...),
		logPrior: make([]float64, nc), mean: make([][]float64, nc), variance: make([][]float64, nc),
		logNorm: make([][]float64, nc),
	}
	count := make([]int, nc)
	for c := range nc {
		m.mean[c] = make([]float64, nf)
		m.variance[c] = make([]float64, nf)
	}
	for i, row := range x {
		if len(row) != nf {
			return nil, fmt.Errorf("demo: row %d has %d values, want %d", i, len(row), nf)
		}
		c := y[i]
		if c < 0 || c >= nc {
			return nil, fmt.Errorf("demo: row %d has label %d of %d classes", i, c, nc)
		}
		count[c]++
		for f, v := range row {
			m.mean[c][f] += v
		}
	}
	for c := range nc {
		if count[c] == 0 {
			return nil, fmt.Errorf("demo: class %q has no rows", classes[c])
		}
		for f := range nf {
			m.mean[c][f] /= float64(count[c])
		}
		m.logPrior[c] = math.Log(float64(count[c]) / float64(len(x)))
	}
	for i, row := range x {
		c := y[i]
		for f, v := range row {
			d := v - m.mean[c][f]
			m.variance[c][f] += d * d
		}
	}
	maxVar := 0.0
	for f := range nf {
		mean, ss := 0.0, 0.0
		for _, row := range x {
			mean += row[f]
		}
		mean /= float64(len(x))
		for _, row := range x {
			ss += (row[f] - mean) * (row[f] - mean)
		}
		maxVar = math.Max(maxVar, ss/float64(len(x)))
	}
	eps := varSmoothing * maxVar
	for c := range nc {
		m.logNorm[c] = make([]float64, nf)
		for f := range nf {
			m.variance[c][f] = m.variance[c][f]/float64(count[c]) + eps
			m.logNorm[c][f] = math.Log(2 * math.Pi * m.variance[c][f])
		}
	}
	return m, nil
}

// Classes returns the class names in model order.
func (m *NaiveBayes) Classes() []string { return append([]string(nil), m.classes...) }

// Features returns the feature names in model order.
func (m *NaiveBayes) Features() []string { return append([]string(nil), m.features...) }

// Predict writes into probs (one per class) the posterior probability of
// each class for the feature values x. A NaN in x is a missing value: that
// feature is left out, as naive Bayes allows, so a row with every value
// missing gets the class priors.
func (m *NaiveBayes) Predict(x []float64, probs []float64) {
	// No log-probability is NaN (a huge value makes one -Inf at worst),
	// so a plain comparison finds the largest.
	best, top := math.Inf(-1), 0
	for c := range m.classes {
		lp := m.logPrior[c]
		mean, variance, logNorm := m.mean[c], m.variance[c], m.logNorm[c]
		for f, v := range x {
			if math.IsNaN(v) {
				continue
			}
			d := v - mean[f]
			lp -= 0.5 * (logNorm[f] + d*d/variance[f])
		}
		probs[c] = lp
		if lp > best {
			best, top = lp, c
		}
	}
	// Normalise in log space first so that exp cannot underflow to 0/0;
	// the most likely class's term is exp(0), exactly 1.
	sum := 0.0
	for c := range probs {
		if c == top && probs[c] == best {
			probs[c] = 1
		} else {
			probs[c] = math.Exp(probs[c] - best)
		}
		sum += probs[c]
	}
	for c := range probs {
		probs[c] /= sum
	}
}
