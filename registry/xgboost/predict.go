package xgboost

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/scorehub/scorehub/registry/process"
)

// blockRows is how many rows are scored together: their features are
// gathered into one block, and every tree walks all of them before the
// next tree, so that a tree's nodes stay in cache.
const blockRows = 64

// ctxEvery is how many blocks are scored between checks of the context.
const ctxEvery = 32

// scratch is the memory one Score call works in, pooled.
type scratch struct {
	cols []*process.Column // a feature's column; nil when absent
	x    []float32         // blockRows rows of features, row-major
	out  []float32         // margins of the rows of a block, row-major
}

func (m *model) getScratch() *scratch {
	s, _ := m.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{
			cols: make([]*process.Column, m.nFeat),
			x:    make([]float32, blockRows*m.nFeat),
			out:  make([]float32, blockRows*m.groups),
		}
	}
	return s
}

// columns finds the column of every feature in t.
func (m *model) columns(t *process.Table, cols []*process.Column) error {
	for f := range cols {
		cols[f] = nil
		i := t.Index(m.inputs[f].Name)
		if i < 0 {
			continue
		}
		c := t.Column(i)
		if c.Kind != process.Number {
			return fmt.Errorf("xgboost: column %q holds text; the model's features are numbers", c.Name)
		}
		cols[f] = c
	}
	return nil
}

// margins scores every row of t and calls emit with each block's margins
// (rows × groups, row-major) and the index of its first row. Missing
// values, absent columns and NaN take each split's default branch.
func (m *model) margins(ctx context.Context, t *process.Table, emit func(first int, out []float32)) error {
	s := m.getScratch()
	defer func() {
		clear(s.cols) // the pool must not keep the caller's table alive
		m.scratch.Put(s)
	}()
	if err := m.columns(t, s.cols); err != nil {
		return err
	}
	rows, nf, g := t.Rows(), m.nFeat, m.groups
	nan := float32(math.NaN())
	for first, b := 0, 0; first < rows; first, b = first+blockRows, b+1 {
		if b%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		n := min(blockRows, rows-first)
		x := s.x[:n*nf]
		for f, c := range s.cols {
			if c == nil {
				for r := range n {
					x[r*nf+f] = nan
				}
				continue
			}
			vals := c.Numbers[first : first+n]
			for r, v := range vals {
				x[r*nf+f] = float32(v)
			}
			if c.Missing != nil {
				for r, miss := range c.Missing[first : first+n] {
					if miss {
						x[r*nf+f] = nan
					}
				}
			}
		}
		out := s.out[:n*g]
		for r := range n {
			copy(out[r*g:(r+1)*g], m.base)
		}
		if m.weights != nil {
			m.addLinear(x, out, n)
		} else {
			m.addTrees(x, out, n)
		}
		emit(first, out)
	}
	return nil
}

// lanes is how many rows walk a tree together: their steps are
// independent, so the processor overlaps them.
const lanes = 8

// lockstepDepth is the deepest tree walked in lockstep: the lockstep walk
// takes as many steps as the tree is deep for every row, which wastes
// work on a deep tree whose paths are mostly short.
const lockstepDepth = 16

// addTrees adds every tree's leaf for n rows of x to out, in tree order
// and in float32, as XGBoost accumulates. Rows in groups of lanes walk
// each tree together; the rows left over (a request of one row, say)
// walk lanes trees at a time instead.
func (m *model) addTrees(x, out []float32, n int) {
	nf, g := m.nFeat, m.groups
	full := n - n%lanes
	var leaf [lanes]float32
	for ti := 0; full > 0 && ti < len(m.trees); ti++ {
		t := &m.trees[ti]
		o := out[t.group:]
		r := 0
		if t.catOf == nil && t.depth <= lockstepDepth {
			for ; r < full; r += lanes {
				t.walk(x[r*nf:(r+lanes)*nf], nf, &leaf)
				if m.dart {
					for k, v := range leaf {
						o[(r+k)*g] += float32(v * t.w)
					}
					continue
				}
				for k, v := range leaf {
					o[(r+k)*g] += v
				}
			}
		}
		for ; r < full; r++ {
			o[r*g] += m.weigh(t, t.leaf(x[r*nf:(r+1)*nf]))
		}
	}
	for r := full; r < n; r++ {
		m.addRow(x[r*nf:(r+1)*nf], out[r*g:(r+1)*g])
	}
}

// addRow adds every tree's leaf for one row x to its margins out, walking
// lanes trees at a time where they allow it.
func (m *model) addRow(x, out []float32) {
	var leaf [lanes]float32
	ti := 0
	for _, c := range m.chunks {
		for ; ti < c.start; ti++ {
			t := &m.trees[ti]
			out[t.group] += m.weigh(t, t.leaf(x))
		}
		ts := m.trees[c.start : c.start+lanes]
		walkTrees(ts, c.depth, x, &leaf)
		for k := range ts {
			out[ts[k].group] += m.weigh(&ts[k], leaf[k])
		}
		ti = c.start + lanes
	}
	for ; ti < len(m.trees); ti++ {
		t := &m.trees[ti]
		out[t.group] += m.weigh(t, t.leaf(x))
	}
}

// weigh is a tree's output v as it adds to the margin: times dart's weight.
func (m *model) weigh(t *tree, v float32) float32 {
	if m.dart {
		return float32(v * t.w)
	}
	return v
}

// chunk is lanes consecutive trees that one row can walk together: none
// has a categorical split or is deeper than lockstepDepth.
type chunk struct {
	start int // the first tree
	depth int // the deepest tree's depth
}

// chunksOf finds the chunks of trees.
func chunksOf(trees []tree) []chunk {
	var out []chunk
	for start := 0; start+lanes <= len(trees); {
		c := chunk{start: start}
		ok := true
		for k := range lanes {
			t := &trees[start+k]
			if t.catOf != nil || t.depth > lockstepDepth {
				ok = false
				start += k + 1
				break
			}
			c.depth = max(c.depth, t.depth)
		}
		if ok {
			out = append(out, c)
			start += lanes
		}
	}
	return out
}

// walkTrees finds the leaf one row x reaches in each of lanes trees,
// taking depth steps in all of them together.
func walkTrees(ts []tree, depth int, x []float32, leaf *[lanes]float32) {
	ts = ts[:lanes]
	var at [lanes]int32
	for range depth {
		for k := range at {
			nd := &ts[k].nodes[at[k]]
			v := x[nd.feat]
			next := nd.left
			if v >= nd.cond {
				next = nd.left + 1
			}
			if v != v {
				next = nd.left + nd.right
			}
			at[k] = next
		}
	}
	for k, i := range at {
		leaf[k] = ts[k].values[i]
	}
}

// addLinear adds a gblinear model's output for n rows of x to out as
// XGBoost does: the bias first, then each present feature times its
// weight, in feature order, in float32.
func (m *model) addLinear(x, out []float32, n int) {
	nf, g := m.nFeat, m.groups
	bias := m.weights[nf*g:]
	for r := range n {
		row := x[r*nf : (r+1)*nf]
		for k := range g {
			sum := bias[k] + out[r*g+k]
			for f, v := range row {
				if v == v {
					sum += float32(v * m.weights[f*g+k])
				}
			}
			out[r*g+k] = sum
		}
	}
}

// walk finds the leaves of lanes rows of x (nf features each) in a tree
// without categorical splits, taking the same steps for every row.
func (t *tree) walk(x []float32, nf int, leaf *[lanes]float32) {
	nodes := t.nodes
	var at [lanes]int32
	for range t.depth {
		for k := range at {
			nd := &nodes[at[k]]
			v := x[k*nf+int(nd.feat)]
			next := nd.left
			if v >= nd.cond {
				next = nd.left + 1
			}
			if v != v {
				next = nd.left + nd.right
			}
			at[k] = next
		}
	}
	for k, i := range at {
		leaf[k] = t.values[i]
	}
}

// leaf walks a tree to the leaf x reaches. A categorical split sends a
// category it lists right and any other value left, a negative or too
// large one included, reading the value's integer part as the category, as
// XGBoost 1.7 does.
func (t *tree) leaf(x []float32) float32 {
	nodes := t.nodes
	i := int32(0)
	for {
		nd := &nodes[i]
		if nd.left == i {
			return t.values[i]
		}
		v := x[nd.feat]
		switch {
		case v != v:
			i = nd.left + nd.right
		case t.catOf != nil && t.catOf[i] >= 0:
			cats := t.cats[t.catOf[i]]
			i = nd.left
			if v >= 0 && v < maxCategory {
				if _, found := slices.BinarySearch(cats, int32(v)); found {
					i++
				}
			}
		case v >= nd.cond:
			i = nd.left + 1
		default:
			i = nd.left
		}
	}
}

// predictProbs is the classifier's [process.PredictFunc].
func (m *model) predictProbs(ctx context.Context, in process.Input, probs []float64) error {
	k := m.classCount()
	return m.margins(ctx, in.Table, func(first int, out []float32) {
		if m.obj.multi {
			for r := 0; r*k < len(out); r++ {
				p := out[r*k : (r+1)*k]
				softmax(p)
				for j, v := range p {
					probs[(first+r)*k+j] = float64(v)
				}
			}
			return
		}
		for r, v := range out {
			p := m.transform(v)
			probs[(first+r)*2] = float64(1 - p)
			probs[(first+r)*2+1] = float64(p)
		}
	})
}

// transform turns the margin of a one-output model into its prediction.
func (m *model) transform(v float32) float32 {
	switch m.obj.out {
	case outSigmoid:
		return sigmoid(v)
	case outExp:
		return expf(v)
	case outHinge:
		if v > 0 {
			return 1
		}
		return 0
	}
	return v
}

// regressor is the Process of a regression model.
type regressor struct {
	m    *model
	name string
}

func (p *regressor) Score(ctx context.Context, in process.Input) (*process.Table, error) {
	vals := make([]float64, in.Table.Rows())
	err := p.m.margins(ctx, in.Table, func(first int, out []float32) {
		for r, v := range out {
			vals[first+r] = float64(p.m.transform(v))
		}
	})
	if err != nil {
		return nil, err
	}
	return process.NewTable(len(vals), process.NumberColumn(p.name, vals, nil))
}
