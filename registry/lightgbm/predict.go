package lightgbm

import (
	"context"
	"fmt"
	"math"

	"github.com/scorehub/scorehub/registry/process"
)

// blockRows is how many rows are scored together: their features are
// gathered into one block, and every tree walks all of them before the
// next tree, so that a tree stays in cache. Each row's scores are still
// summed tree by tree in file order, as LightGBM sums them.
const blockRows = 64

// ctxEvery is how many blocks are scored between checks of the context.
const ctxEvery = 32

// scratch is the memory one Score call works in, pooled.
type scratch struct {
	cols []*process.Column // a feature's column; nil when absent
	x    []float64         // blockRows rows of features, row-major
	out  []float64         // raw scores of the rows of a block, row-major
}

func (m *model) getScratch() *scratch {
	s, _ := m.scratch.Get().(*scratch)
	if s == nil {
		nf := len(m.feats)
		s = &scratch{
			cols: make([]*process.Column, nf),
			x:    make([]float64, blockRows*nf),
			out:  make([]float64, blockRows*m.outputs),
		}
	}
	return s
}

// columns finds the column of every feature in t.
func (m *model) columns(t *process.Table, cols []*process.Column) error {
	for f := range cols {
		cols[f] = nil
		i := t.Index(m.feats[f].name)
		if i < 0 {
			continue
		}
		c := t.Column(i)
		if c.Kind != process.Number && m.feats[f].names == nil {
			return fmt.Errorf("lightgbm: column %q holds text; the feature is a number", c.Name)
		}
		cols[f] = c
	}
	return nil
}

// value is feature f of row r as LightGBM's predictor reads it: NaN where
// missing; zero within kZeroThreshold of zero; a pandas category's code
// for its name, NaN for a name pandas did not know.
func (m *model) value(f int, c *process.Column, r int) float64 {
	if c == nil || c.Missing != nil && c.Missing[r] {
		return math.NaN()
	}
	if c.Kind == process.Text {
		code, ok := m.feats[f].names[c.Texts[r]]
		if !ok {
			return math.NaN()
		}
		return float64(code)
	}
	v := c.Numbers[r]
	if math.Abs(v) <= kZeroThreshold {
		return 0
	}
	return v
}

// rawScores scores every row of t and calls emit with each block's raw
// scores (rows × outputs, row-major) and the index of its first row: the
// sums of the trees, as LightGBM's raw scores are even for a random
// forest (see predictions).
func (m *model) rawScores(ctx context.Context, t *process.Table, emit func(first int, out []float64)) error {
	s := m.getScratch()
	defer func() {
		clear(s.cols) // the pool must not keep the caller's table alive
		m.scratch.Put(s)
	}()
	if err := m.columns(t, s.cols); err != nil {
		return err
	}
	rows, nf, k := t.Rows(), len(m.feats), m.outputs
	for first, b := 0, 0; first < rows; first, b = first+blockRows, b+1 {
		if b%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		n := min(blockRows, rows-first)
		x := s.x[:n*nf]
		for f, c := range s.cols {
			for r := range n {
				x[r*nf+f] = m.value(f, c, first+r)
			}
		}
		out := s.out[:n*k]
		clear(out)
		for i := range m.trees {
			t := &m.trees[i]
			g := i % k
			for r := range n {
				out[r*k+g] += t.predict(x[r*nf : (r+1)*nf])
			}
		}
		emit(first, out)
	}
	return nil
}

// predict is the tree's output for one row x, as LightGBM's Tree::Predict.
func (t *tree) predict(x []float64) float64 {
	leaf := int32(0)
	if len(t.nodes) > 0 {
		leaf = t.leaf(x)
	}
	if t.linear == nil {
		return t.leaves[leaf]
	}
	l := &t.linear[leaf]
	out := l.konst
	for i, f := range l.feats {
		v := x[f]
		if v != v {
			return t.leaves[leaf]
		}
		out += float64(l.coeffs[i] * v) // rounded before the sum, as LightGBM's build does (no fused multiply-add)
	}
	return out
}

// leaf walks the tree to the leaf x reaches, as LightGBM's GetLeaf: a
// value at most the threshold goes left, NaN and a missing zero where the
// node worked out from its decision type (see node), a categorical split
// as inCategories says.
func (t *tree) leaf(x []float64) int32 {
	nodes := t.nodes
	i := int32(0)
	if t.catSets == nil {
		// A tree of numerical splits only: LightGBM's GetLeaf without
		// categories, and the common case.
		for i >= 0 {
			nd := &nodes[i]
			v := x[nd.feat]
			next := nd.right
			if v <= nd.threshold {
				next = nd.left
			}
			if v != v {
				next = nd.nan
			} else if v == 0 && nd.zero != noZero {
				next = nd.zero
			}
			i = next
		}
		return ^i
	}
	for i >= 0 {
		nd := &nodes[i]
		v := x[nd.feat]
		if nd.cat >= 0 {
			i = nd.right
			if t.inCategories(nd.cat, v) {
				i = nd.left
			}
			continue
		}
		// The common case first, as a conditional move rather than a
		// jump the processor must guess; NaN and a missing zero, rare,
		// after it.
		next := nd.right
		if v <= nd.threshold {
			next = nd.left
		}
		if v != v {
			next = nd.nan
		} else if v == 0 && nd.zero != noZero {
			next = nd.zero
		}
		i = next
	}
	return ^i
}

// inCategories reports whether categorical split set cat sends v left:
// v's integer part (truncated, as C converts a double to int) is a
// category of the split's bitset. NaN, a negative code and one past the
// bitset go right; so does a value beyond int32, which x86 converts to
// the most negative int.
func (t *tree) inCategories(cat int32, v float64) bool {
	if v != v || !(v > -2147483649 && v < 2147483648) {
		return false
	}
	c := int64(v)
	if c < 0 {
		return false
	}
	set := t.catSets[cat]
	w := c / 32
	if w >= int64(set.hi-set.lo) {
		return false
	}
	return t.cats[int64(set.lo)+w]>>(c%32)&1 == 1
}

// predictions turns the raw scores of one row into predictions, in
// place: a random forest's averaged over its iterations, then the
// objective's transform.
func (m *model) predictions(v []float64) {
	if m.average {
		for i := range v {
			v[i] /= float64(m.iterations)
		}
	}
	m.obj.convert(v)
}

// predictProbs is the classifier's [process.PredictFunc].
func (m *model) predictProbs(ctx context.Context, in process.Input, probs []float64) error {
	k := m.outputs
	return m.rawScores(ctx, in.Table, func(first int, out []float64) {
		for r := 0; r*k < len(out); r++ {
			p := out[r*k : (r+1)*k]
			m.predictions(p)
			if k == 1 {
				probs[(first+r)*2] = 1 - p[0]
				probs[(first+r)*2+1] = p[0]
				continue
			}
			copy(probs[(first+r)*k:], p)
		}
	})
}

// regressor is the Process of a regression model.
type regressor struct {
	m    *model
	name string
}

func (p *regressor) Score(ctx context.Context, in process.Input) (*process.Table, error) {
	vals := make([]float64, in.Table.Rows())
	err := p.m.rawScores(ctx, in.Table, func(first int, out []float64) {
		for r := range out {
			p.m.predictions(out[r : r+1])
			vals[first+r] = out[r]
		}
	})
	if err != nil {
		return nil, err
	}
	return process.NewTable(len(vals), process.NumberColumn(p.name, vals, nil))
}
