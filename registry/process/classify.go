package process

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
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
	outputs := ClassifierOutputs(label, classes)
	names := make([]string, len(outputs))
	for i, o := range outputs {
		names[i] = o.Name
	}
	c := &classifier{classes: append([]string(nil), classes...), names: names, predict: predict}
	if len(names) > indexThreshold {
		// Every result table shares the one index: tables are read-only.
		c.index = make(map[string]int, len(names))
		for i, n := range names {
			if _, dup := c.index[n]; dup {
				return nil, fmt.Errorf("registry: classifier result column %q appears twice", n)
			}
			c.index[n] = i
		}
	}
	return c, nil
}

// ClassifierOutputs returns the result columns a [Classifier] of label and
// classes answers, in its order: "prediction(<label>)" (text), then one
// "confidence(<class>)" (number) per class. A model format or a catalog
// entry states its outputs with it.
func ClassifierOutputs(label string, classes []string) []ColumnSpec {
	out := make([]ColumnSpec, 0, len(classes)+1)
	out = append(out, ColumnSpec{Name: "prediction(" + label + ")", Kind: Text})
	for _, c := range classes {
		out = append(out, ColumnSpec{Name: "confidence(" + c + ")", Kind: Number})
	}
	return out
}

// ConfidenceClass returns the class of a column named as
// [ClassifierOutputs] names a class's confidence, "confidence(<class>)",
// and whether name is one.
func ConfidenceClass(name string) (string, bool) {
	const pre = "confidence("
	if len(name) > len(pre)+1 && name[:len(pre)] == pre && name[len(name)-1] == ')' {
		return name[len(pre) : len(name)-1], true
	}
	return "", false
}

// classifier is the Process Classifier returns. Score allocates only what
// its result keeps: the confidences, the labels, the columns and the table;
// probabilities of several rows and classes are computed in pooled scratch.
type classifier struct {
	classes []string
	names   []string
	index   map[string]int // by-name index of wide result tables; nil for narrow ones
	predict PredictFunc
	scratch sync.Pool // *[]float64, row-major probabilities
}

// maxScratch is the largest probability buffer (in values) kept for reuse.
const maxScratch = 1 << 16

func (c *classifier) Score(ctx context.Context, in Input) (*Table, error) {
	rows, k := in.Table.Rows(), len(c.classes)
	if rows == 1 && k < smallClasses {
		return c.scoreOne(ctx, in)
	}
	n := rows * k
	// The confidence columns, one after another. With one class that is
	// also the row-major layout predict fills, so predict writes straight
	// into them.
	conf := make([]float64, n)
	probs := conf
	if k > 1 {
		bp, _ := c.scratch.Get().(*[]float64)
		if bp == nil || cap(*bp) < n {
			bp = new([]float64)
			*bp = make([]float64, n)
		}
		probs = (*bp)[:n]
		clear(probs)
		if n <= maxScratch {
			defer c.scratch.Put(bp)
		}
	}
	if err := c.predict(ctx, in, probs); err != nil {
		return nil, err
	}
	labels := make([]string, rows)
	var missing []bool
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
			if missing == nil {
				missing = make([]bool, rows)
			}
			missing[i] = true
			continue
		}
		labels[i] = c.classes[best]
	}
	cols := make([]Column, k+1)
	cols[0] = TextColumn(c.names[0], labels, missing)
	for j := range k {
		cols[j+1] = NumberColumn(c.names[j+1], conf[j*rows:(j+1)*rows:(j+1)*rows], nil)
	}
	// Valid by construction: distinct names checked in Classifier, every
	// column rows long.
	return &Table{rows: rows, cols: cols, byName: c.index}, nil
}

// smallClasses bounds the classes of the one-allocation result of a
// one-row request. Four columns cover the models most often met, with two
// or three classes, in under 512 bytes; room for more would make every
// one-row answer pay for the largest (8 columns take 896 bytes, zeroed on
// each request), and models with more classes take the general path.
const smallClasses = 4

// oneRow is the whole result of scoring one row with fewer than
// smallClasses classes: one allocation instead of four, on the path
// single-row clients take.
type oneRow struct {
	t      Table
	cols   [smallClasses]Column
	label  [1]string
	probs  [smallClasses - 1]float64
	absent [1]bool
}

// scoreOne is Score for one row and fewer than smallClasses classes.
func (c *classifier) scoreOne(ctx context.Context, in Input) (*Table, error) {
	k := len(c.classes)
	r := new(oneRow)
	probs := r.probs[:k:k]
	if err := c.predict(ctx, in, probs); err != nil {
		return nil, err
	}
	best := -1
	for j, v := range probs {
		if !math.IsNaN(v) && (best < 0 || v > probs[best]) {
			best = j
		}
	}
	var missing []bool
	if best < 0 {
		r.absent[0] = true
		missing = r.absent[:]
	} else {
		r.label[0] = c.classes[best]
	}
	r.cols[0] = TextColumn(c.names[0], r.label[:], missing)
	for j := range k {
		r.cols[j+1] = NumberColumn(c.names[j+1], probs[j:j+1:j+1], nil)
	}
	r.t = Table{rows: 1, cols: r.cols[: k+1 : k+1], byName: c.index}
	return &r.t, nil
}
