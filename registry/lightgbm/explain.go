package lightgbm

import (
	"context"
	"slices"
	"sync"

	"github.com/scorehub/scorehub/internal/treeshap"
	"github.com/scorehub/scorehub/registry/process"
)

// explained is the Process of a model whose file holds the training
// counts of every split and leaf (internal_count, leaf_count), as
// LightGBM writes them: what LightGBM's predict_contrib weighs by.
type explained struct {
	process.Process
	m        *model
	features []string
	groups   []string
}

var _ process.Explainer = (*explained)(nil)

// Explain returns the contributions LightGBM's predict_contrib computes:
// path-dependent TreeSHAP over each tree, splits decided as scoring
// decides them, and as the bias the sum of every tree's expected value,
// its leaves weighted by their counts. The contributions of a random
// forest are, as LightGBM's, those of its raw score: the sum of its
// trees, before the average. A model of linear trees is refused, as
// LightGBM refuses it.
func (p *explained) Explain(ctx context.Context, in process.Input) (*process.Explanation, error) {
	if p.m.isLinear() {
		return nil, process.ModelErrorf(process.ErrModelInvalid,
			"the model has linear trees; LightGBM computes no contributions for them, and neither does this reader")
	}
	values, err := p.m.explain(ctx, in.Table)
	if err != nil {
		return nil, err
	}
	margins := make([][]float64, p.m.outputs)
	for k := range margins {
		margins[k] = make([]float64, in.Table.Rows())
	}
	err = p.m.rawScores(ctx, in.Table, func(first int, out []float64) {
		for i, v := range out {
			margins[i%p.m.outputs][first+i/p.m.outputs] = v
		}
	})
	if err != nil {
		return nil, err
	}
	return &process.Explanation{Features: slices.Clone(p.features), Groups: slices.Clone(p.groups), Values: values, Margins: margins}, nil
}

// isLinear reports whether a tree of the model has linear leaves.
func (m *model) isLinear() bool {
	for i := range m.trees {
		if m.trees[i].linear != nil {
			return true
		}
	}
	return false
}

// explainable says whether every tree of more than one leaf holds its
// counts, every split's positive.
func (m *model) explainable() bool {
	for i := range m.trees {
		t := &m.trees[i]
		if len(t.nodes) == 0 {
			continue
		}
		if t.internalCount == nil || t.leafCount == nil {
			return false
		}
		for _, c := range t.internalCount {
			if !(c > 0) {
				return false
			}
		}
	}
	return true
}

// shapTrees are a model's trees as treeshap walks them, splits first and
// then leaves, and each output's expected raw score, built on a model's
// first explanation.
type shapTrees struct {
	once  sync.Once
	trees []treeshap.Tree
	bias  []float64 // by output
}

func (m *model) shapModel() *shapTrees {
	s := &m.shap
	s.once.Do(func() {
		s.bias = make([]float64, m.outputs)
		s.trees = make([]treeshap.Tree, len(m.trees))
		for ti := range m.trees {
			t := &m.trees[ti]
			s.bias[ti%m.outputs] += t.expected()
			splits := len(t.nodes)
			if splits == 0 {
				continue
			}
			n := splits + len(t.leaves)
			st := treeshap.Tree{
				Left: make([]int32, n), Right: make([]int32, n), Feature: make([]int32, n),
				Cover: make([]float64, n), Value: make([]float64, n), Depth: t.depth,
			}
			for k, nd := range t.nodes {
				st.Left[k], st.Right[k] = t.shapIndex(nd.left), t.shapIndex(nd.right)
				st.Feature[k], st.Cover[k] = nd.feat, t.internalCount[k]
			}
			for l, v := range t.leaves {
				k := splits + l
				st.Left[k], st.Right[k] = -1, -1
				st.Cover[k], st.Value[k] = t.leafCount[l], v
			}
			s.trees[ti] = st
		}
	})
	return s
}

// expected is the tree's expected output as LightGBM's ExpectedValue
// computes it: each leaf's value times its share of the root's count.
func (t *tree) expected() float64 {
	if len(t.nodes) == 0 {
		return t.leaves[0]
	}
	total := t.internalCount[0]
	v := 0.0
	for l, out := range t.leaves {
		v += (t.leafCount[l] / total) * out
	}
	return v
}

// shapIndex is the index in the tree's treeshap form of child c, a split
// or ^leaf.
func (t *tree) shapIndex(c int32) int32 {
	if c >= 0 {
		return c
	}
	return int32(len(t.nodes)) + ^c
}

// next is the child of split i that x takes, decided as leaf decides it.
func (t *tree) next(i int32, x []float64) int32 {
	nd := &t.nodes[i]
	v := x[nd.feat]
	if nd.cat >= 0 {
		if t.inCategories(nd.cat, v) {
			return nd.left
		}
		return nd.right
	}
	switch {
	case v != v:
		return nd.nan
	case v == 0 && nd.zero != noZero:
		return nd.zero
	case v <= nd.threshold:
		return nd.left
	}
	return nd.right
}

// explain computes the contributions of every row of t, by output.
func (m *model) explain(ctx context.Context, t *process.Table) ([][]float64, error) {
	nf := len(m.feats)
	cols := make([]*process.Column, nf)
	if err := m.columns(t, cols); err != nil {
		return nil, err
	}
	rows, width := t.Rows(), nf+1
	values := make([][]float64, m.outputs)
	for k := range values {
		values[k] = make([]float64, rows*width)
	}
	s := m.shapModel()
	x := make([]float64, nf)
	var (
		w   treeshap.Walker
		cur *tree
	)
	hot := func(i int32) int32 { return cur.shapIndex(cur.next(i, x)) }
	for r := range rows {
		if r%(blockRows*ctxEvery) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for f, c := range cols {
			x[f] = m.value(f, c, r)
		}
		for k := range values {
			values[k][r*width+nf] = s.bias[k]
		}
		for ti := range s.trees {
			if len(s.trees[ti].Left) == 0 {
				continue
			}
			cur = &m.trees[ti]
			w.Add(&s.trees[ti], hot, 1, values[ti%m.outputs][r*width:r*width+nf])
		}
	}
	return values, nil
}
