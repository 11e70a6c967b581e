package registry

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// PredictFunc computes class probabilities for every row of in.Table. probs
// has in.Table.Rows()*len(classes) elements in row-major order:
// probs[row*len(classes)+k] is the confidence of classes[k] for row. It
// arrives zeroed. A row whose probabilities are all NaN has no prediction.
type PredictFunc func(ctx context.Context, in Input, probs []float64) error

// Classifier returns a Process that turns a classifier's probabilities into
// the columns AI Hub clients read: "prediction(<label>)" (text, the most
// probable class, the first one on a tie) followed by one
// "confidence(<class>)" (number) per class, in the order of classes.
//
// label must not be empty; classes must be non-empty and distinct.
func Classifier(label string, classes []string, predict PredictFunc) (Process, error) {
	if label == "" {
		return nil, errors.New("registry: classifier needs a label name")
	}
	if len(classes) == 0 {
		return nil, errors.New("registry: classifier needs at least one class")
	}
	if predict == nil {
		return nil, errors.New("registry: classifier needs a predict function")
	}
	seen := make(map[string]bool, len(classes))
	for _, c := range classes {
		if seen[c] {
			return nil, fmt.Errorf("registry: class %q appears twice", c)
		}
		seen[c] = true
	}
	names := make([]string, len(classes)+1)
	names[0] = "prediction(" + label + ")"
	for k, c := range classes {
		names[k+1] = "confidence(" + c + ")"
	}
	return &classifier{classes: append([]string(nil), classes...), names: names, predict: predict}, nil
}

type classifier struct {
	classes []string
	names   []string
	predict PredictFunc
}

func (c *classifier) Score(ctx context.Context, in Input) (*Table, error) {
	rows, k := in.Table.Rows(), len(c.classes)
	probs := make([]float64, rows*k)
	if err := c.predict(ctx, in, probs); err != nil {
		return nil, err
	}
	labels := make([]string, rows)
	missing := make([]bool, rows)
	cols := make([]Column, k+1)
	conf := make([]float64, rows*k) // one backing array for every confidence column
	for j := range k {
		cols[j+1] = NumberColumn(c.names[j+1], conf[j*rows:(j+1)*rows:(j+1)*rows], nil)
	}
	for i := range rows {
		p := probs[i*k : (i+1)*k]
		best := -1
		for j, v := range p {
			conf[j*rows+i] = v
			if !math.IsNaN(v) && (best < 0 || v > p[best]) {
				best = j
			}
		}
		if best < 0 {
			missing[i] = true
			continue
		}
		labels[i] = c.classes[best]
	}
	cols[0] = TextColumn(c.names[0], labels, missing)
	return NewTable(rows, cols...)
}
