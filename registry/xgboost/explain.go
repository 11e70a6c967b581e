package xgboost

import (
	"context"
	"math"
	"slices"
	"sync"

	"github.com/scorehub/scorehub/internal/treeshap"
	"github.com/scorehub/scorehub/registry/process"
)

// explained is the Process of a model that can explain its predictions:
// a gblinear model, or trees whose file holds every node's cover
// (sum_hessian), as XGBoost writes it.
type explained struct {
	process.Process
	m        *model
	features []string
	groups   []string
}

var _ process.Explainer = (*explained)(nil)

// Explain returns the contributions XGBoost's pred_contribs computes: for
// trees, path-dependent TreeSHAP with each split decided as scoring decides
// it (in float32, missing values to the default branch, categories by
// their integer part), dart's trees times their weights; for gblinear, a
// present feature's value times its weight. The bias is the base margin
// plus every tree's cover-weighted mean, or gblinear's bias.
func (p *explained) Explain(ctx context.Context, in process.Input) (*process.Explanation, error) {
	values, err := p.m.explain(ctx, in.Table)
	if err != nil {
		return nil, err
	}
	margins, err := p.m.marginsByGroup(ctx, in.Table)
	if err != nil {
		return nil, err
	}
	return &process.Explanation{Features: slices.Clone(p.features), Groups: slices.Clone(p.groups), Values: values, Margins: margins}, nil
}

// marginsByGroup returns the margins scoring computes for every row of t,
// by group.
func (m *model) marginsByGroup(ctx context.Context, t *process.Table) ([][]float64, error) {
	margins := make([][]float64, m.groups)
	for g := range margins {
		margins[g] = make([]float64, t.Rows())
	}
	err := m.margins(ctx, t, func(first int, out []float32) {
		for i, v := range out {
			margins[i%m.groups][first+i/m.groups] = float64(v)
		}
	})
	return margins, err
}

// explainable says whether every tree holds the covers TreeSHAP weighs
// by, each split's positive.
func (m *model) explainable() bool {
	if m.weights != nil {
		return true
	}
	for i := range m.trees {
		t := &m.trees[i]
		if t.cover == nil {
			return false
		}
		for k, nd := range t.nodes {
			if c := t.cover[k]; nd.left != int32(k) && !(c > 0 && !math.IsInf(float64(c), 0)) {
				return false
			}
		}
	}
	return true
}

// shapTrees are a model's trees as treeshap walks them, and the margin
// each group is expected to have, built on a model's first explanation.
type shapTrees struct {
	once  sync.Once
	trees []treeshap.Tree
	bias  []float64 // by group
}

// shapModel returns the model's trees as treeshap walks them.
func (m *model) shapModel() *shapTrees {
	s := &m.shap
	s.once.Do(func() {
		s.bias = make([]float64, m.groups)
		for g, b := range m.base {
			s.bias[g] = float64(b)
		}
		s.trees = make([]treeshap.Tree, len(m.trees))
		for ti := range m.trees {
			t := &m.trees[ti]
			n := len(t.nodes)
			st := treeshap.Tree{
				Left: make([]int32, n), Right: make([]int32, n), Feature: make([]int32, n),
				Cover: make([]float64, n), Value: make([]float64, n), Depth: t.depth,
			}
			for k, nd := range t.nodes {
				st.Left[k], st.Right[k], st.Feature[k] = nd.left, nd.left+1, nd.feat
				if nd.left == int32(k) {
					st.Left[k], st.Right[k] = -1, -1
				}
				st.Cover[k] = float64(t.cover[k])
				st.Value[k] = float64(t.values[k])
			}
			s.trees[ti] = st
			s.bias[t.group] += float64(t.w) * st.Mean()
		}
	})
	return s
}

// next is the child of split i that x takes, decided as leaf decides it.
func (t *tree) next(i int32, x []float32) int32 {
	nd := &t.nodes[i]
	v := x[nd.feat]
	switch {
	case v != v:
		return nd.left + nd.right
	case t.catOf != nil && t.catOf[i] >= 0:
		if v >= 0 && v < maxCategory {
			if _, found := slices.BinarySearch(t.cats[t.catOf[i]], int32(v)); found {
				return nd.left + 1
			}
		}
		return nd.left
	case v >= nd.cond:
		return nd.left + 1
	}
	return nd.left
}

// explain computes the contributions of every row of t, by group.
func (m *model) explain(ctx context.Context, t *process.Table) ([][]float64, error) {
	cols := make([]*process.Column, m.nFeat)
	if err := m.columns(t, cols); err != nil {
		return nil, err
	}
	rows, nf := t.Rows(), m.nFeat
	width := nf + 1
	values := make([][]float64, m.groups)
	for g := range values {
		values[g] = make([]float64, rows*width)
	}
	var s *shapTrees
	if m.weights == nil {
		s = m.shapModel()
	}
	x := make([]float32, nf)
	var (
		w   treeshap.Walker
		cur *tree
	)
	hot := func(i int32) int32 { return cur.next(i, x) }
	for r := range rows {
		if r%(blockRows*ctxEvery) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for f, c := range cols {
			x[f] = float32(math.NaN())
			if c != nil && (c.Missing == nil || !c.Missing[r]) {
				x[f] = float32(c.Numbers[r])
			}
		}
		if m.weights != nil {
			m.explainLinear(x, values, r)
			continue
		}
		for g := range values {
			values[g][r*width+nf] = s.bias[g]
		}
		for ti := range s.trees {
			cur = &m.trees[ti]
			phi := values[cur.group][r*width : r*width+nf]
			w.Add(&s.trees[ti], hot, float64(cur.w), phi)
		}
	}
	return values, nil
}

// explainLinear writes a gblinear model's contributions to row r: each
// present feature's value times its weight, in float32 as XGBoost
// multiplies them, and the bias plus the base margin.
func (m *model) explainLinear(x []float32, values [][]float64, r int) {
	nf, g := m.nFeat, m.groups
	width := nf + 1
	for k := range g {
		out := values[k][r*width : (r+1)*width]
		for f, v := range x {
			if v == v {
				out[f] = float64(v * m.weights[f*g+k])
			}
		}
		out[nf] = float64(m.weights[nf*g+k] + m.base[k])
	}
}
