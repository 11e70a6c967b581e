package pmml

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/scorehub/scorehub/internal/treeshap"
	"github.com/scorehub/scorehub/registry/process"
)

// explained is the Process of a model whose margin is a sum of regression
// trees that carry every node's recordCount. It is safe for concurrent
// use: a walk's memory is its own, the trees are only read.
type explained struct {
	process.Process
	sc *scorer
	x  *shapModel
}

var _ process.Explainer = (*explained)(nil)

// shapTerm is one tree of a margin as treeshap walks it. A PMML node of
// more than two children is a chain of binary splits on its feature, the
// first child to the left of each, the rest to the right; the chain's
// covers are those of the children it leads to, so that TreeSHAP weighs
// each child by its share of the records as it would a multi-way split.
type shapTerm struct {
	t     *tree
	st    treeshap.Tree
	group int
	// scale is what the tree's leaves are multiplied by in the margin:
	// weightedSum weights and Targets rescaleFactors.
	scale float64
	// split is, for each treeshap split, the PMML node whose children it
	// chooses among, and left the PMML child its Left leads to.
	split, left []int32
	// parent is each treeshap node's parent split; -1 at the root.
	parent []int32
}

// shapModel is what a model explains its predictions with.
type shapModel struct {
	features []string
	groups   []string
	terms    []shapTerm
	bias     []float64 // by group
	// margins are the models that compute each group's margin.
	margins []model
	// scopes are prepared, in this order, before the trees decide.
	scopes []*scope
}

// explainable returns how sc's model explains its predictions, or nil
// when it cannot: its margin must be a sum of regression trees with every
// node's recordCount, each split reading one input. The margin of a
// regression TreeModel is its prediction; of a MiningModel of sum or
// weightedSum, the weighted sum of its segments' margins; Targets that
// rescale (rescaleFactor, rescaleConstant) are part of it, bounds or
// rounding are not explained. The margin of a modelChain is the sums the
// RegressionModel ending it reads as they are, before its normalization:
// one margin for a regression or two classes, one per class for softmax.
// A classification TreeModel answers probabilities from its leaves, not a
// margin they are a transform of, so it is not explained.
func explainable(sc *scorer, top model, classes []string) *shapModel {
	x := &shapModel{}
	slotOf := make(map[int]int, len(sc.inputs))
	for i, in := range sc.inputs {
		slotOf[in.slot] = i
		x.features = append(x.features, in.name)
	}
	b := shapBuilder{x: x, inputs: slotOf}
	if m, ok := top.(*mining); ok && m.method == "modelChain" {
		if !b.chain(m, classes) {
			return nil
		}
	} else {
		x.groups, x.bias, x.margins = []string{""}, []float64{0}, []model{top}
		if !b.add(top, 0, 1) {
			return nil
		}
	}
	for i := range x.terms {
		t := &x.terms[i]
		x.bias[t.group] += t.scale * t.st.Mean()
	}
	return x
}

// shapBuilder gathers a model's trees into a shapModel.
type shapBuilder struct {
	x      *shapModel
	inputs map[int]int // input slot to feature
}

// chain adds the segments of a modelChain the RegressionModel ending it
// reads, each a margin group.
func (b *shapBuilder) chain(m *mining, classes []string) bool {
	last := len(m.segs) - 1
	r, ok := m.segs[last].m.(*regression)
	if !ok || !m.segs[last].always || r.s.rescale != nil || r.ordinal {
		return false
	}
	// The segment whose predicted value each slot holds.
	segOf := make(map[int]int)
	for i, sg := range m.segs[:last] {
		if !sg.always {
			return false
		}
		for _, o := range sg.outputs {
			if o.feature == "predictedValue" {
				segOf[o.slot] = i
			}
		}
	}
	// margin returns the segment table t reads as it is, or -1 for a table
	// of nothing (0); ok is false for any other table.
	margin := func(t *compiledTable) (int, bool) {
		if t.intercept != 0 || len(t.categorical) > 0 || len(t.terms) > 1 {
			return 0, false
		}
		if len(t.terms) == 0 {
			return -1, true
		}
		tm := &t.terms[0]
		if tm.coef != 1 || tm.exponent != 1 || len(tm.slots) != 1 {
			return 0, false
		}
		i, ok := segOf[tm.slots[0]]
		return i, ok
	}
	x := b.x
	var segs []int // by group
	switch {
	case r.classes == nil && len(r.tables) == 1:
		i, ok := margin(&r.tables[0])
		if !ok || i < 0 {
			return false
		}
		x.groups, segs = []string{""}, []int{i}
	case r.classes != nil && len(r.tables) == 2 && r.norm != normSimplemax && r.norm != normNone:
		// One margin: the log-odds (or another link's) of the second
		// class, the first's table being nothing.
		for t := range r.tables {
			i, ok := margin(&r.tables[t])
			if !ok || (r.classes[t] == 1) != (i >= 0) {
				return false
			}
			if i >= 0 {
				segs = []int{i}
			}
		}
		x.groups = []string{""}
	case r.classes != nil && r.norm == normSoftmax && len(classes) == len(r.tables):
		segs = make([]int, len(classes))
		for t := range r.tables {
			i, ok := margin(&r.tables[t])
			if !ok || i < 0 {
				return false
			}
			segs[r.classes[t]] = i
		}
		x.groups = slices.Clone(classes)
	default:
		return false
	}
	x.bias = make([]float64, len(x.groups))
	x.scopes = append(x.scopes, m.s)
	for g, i := range segs {
		x.margins = append(x.margins, m.segs[i].m)
		if !b.add(m.segs[i].m, g, 1) {
			return false
		}
	}
	return true
}

// add adds the trees of the margin of m, times scale, to group g.
func (b *shapBuilder) add(m model, g int, scale float64) bool {
	x := b.x
	var s *scope
	switch m := m.(type) {
	case *tree:
		s = m.s
	case *mining:
		s = m.s
	default:
		return false
	}
	if s.function != "regression" || (s.rescale != nil && !s.affine) {
		return false
	}
	x.scopes = append(x.scopes, s)
	if s.rescale != nil {
		x.bias[g] += scale * s.constant
		scale *= s.factor
	}
	switch m := m.(type) {
	case *tree:
		st, ok := b.tree(m)
		if !ok {
			return false
		}
		st.group, st.scale = g, scale
		x.terms = append(x.terms, st)
		return true
	case *mining:
		if m.method != "sum" && m.method != "weightedSum" {
			return false
		}
		for _, sg := range m.segs {
			w := 1.0
			if m.method == "weightedSum" {
				w = sg.weight
			}
			if !sg.always || !b.add(sg.m, g, scale*w) {
				return false
			}
		}
		return true
	}
	return false
}

// feature returns the input slot reads, resolving derived fields to the
// inputs they read, or false when that is not one input.
func (b *shapBuilder) feature(reads []int, fs *fieldSet) (int, bool) {
	f := -1
	seen := make(map[int]bool)
	var visit func(slot int) bool
	visit = func(slot int) bool {
		if seen[slot] {
			return true
		}
		seen[slot] = true
		if i, ok := b.inputs[slot]; ok {
			if f >= 0 && f != i {
				return false
			}
			f = i
			return true
		}
		deps, ok := fs.reads[slot]
		if !ok {
			return false // neither an input nor computed from inputs
		}
		for _, d := range deps {
			if !visit(d) {
				return false
			}
		}
		return true
	}
	for _, slot := range reads {
		if !visit(slot) {
			return 0, false
		}
	}
	return f, f >= 0
}

// tree returns t as treeshap walks it, or false when TreeSHAP cannot
// explain it: a node without a recordCount, a leaf without a numeric
// score, a root whose predicate is not True, a node of one child or a
// split whose children's predicates read no input or more than one (a
// split on several features has no single feature to attribute to).
func (b *shapBuilder) tree(t *tree) (shapTerm, bool) {
	if t.classify || t.nodes[0].op != opTrue {
		return shapTerm{}, false
	}
	cover := make([]float64, len(t.nodes))
	for i := len(t.nodes) - 1; i >= 0; i-- {
		n := &t.nodes[i]
		if c := t.counts[i]; !(c >= 0 && !math.IsInf(c, 0)) {
			return shapTerm{}, false
		}
		if n.count == 0 {
			if n.out < 0 || t.outs[n.out].score.kind != number {
				return shapTerm{}, false
			}
			cover[i] = t.counts[i]
			continue
		}
		// A split's cover is its children's, so that the expected value
		// is the leaves' means weighted by their records.
		for c := n.first; c < n.first+n.count; c++ {
			cover[i] += cover[c]
		}
		if n.count < 2 || !(cover[i] > 0) {
			return shapTerm{}, false
		}
	}
	st := shapTerm{t: t}
	s := &st.st
	var build func(i int32, depth int) (int32, bool)
	// chainNode appends a split choosing among the children of PMML node
	// i from the k-th on.
	var chainNode func(i int32, k int32, feat int32, depth int) (int32, bool)
	build = func(i int32, depth int) (int32, bool) {
		n := &t.nodes[i]
		if n.count == 0 {
			j := int32(len(s.Left))
			s.Left, s.Right, s.Feature = append(s.Left, -1), append(s.Right, -1), append(s.Feature, -1)
			s.Cover, s.Value = append(s.Cover, cover[i]), append(s.Value, t.outs[n.out].score.num)
			st.split, st.left = append(st.split, -1), append(st.left, -1)
			s.Depth = max(s.Depth, depth)
			return j, true
		}
		var reads []int
		for c := n.first; c < n.first+n.count; c++ {
			for _, slot := range t.reads[c] {
				if !slices.Contains(reads, slot) {
					reads = append(reads, slot)
				}
			}
		}
		f, ok := b.feature(reads, t.s.fs)
		if !ok {
			return 0, false
		}
		return chainNode(i, 0, int32(f), depth)
	}
	chainNode = func(i int32, k int32, feat int32, depth int) (int32, bool) {
		n := &t.nodes[i]
		j := int32(len(s.Left))
		c := 0.0
		for ci := n.first + k; ci < n.first+n.count; ci++ {
			c += cover[ci]
		}
		s.Left, s.Right, s.Feature = append(s.Left, 0), append(s.Right, 0), append(s.Feature, feat)
		s.Cover, s.Value = append(s.Cover, c), append(s.Value, 0)
		st.split, st.left = append(st.split, i), append(st.left, n.first+k)
		l, ok := build(n.first+k, depth+1)
		if !ok {
			return 0, false
		}
		var r int32
		if k+2 < n.count {
			r, ok = chainNode(i, k+1, feat, depth+1)
		} else {
			r, ok = build(n.first+k+1, depth+1)
		}
		if !ok {
			return 0, false
		}
		s.Left[j], s.Right[j] = l, r
		return j, true
	}
	if _, ok := build(0, 0); !ok {
		return shapTerm{}, false
	}
	st.parent = make([]int32, len(s.Left))
	st.parent[0] = -1
	for j, l := range s.Left {
		if l >= 0 {
			st.parent[l], st.parent[s.Right[j]] = int32(j), int32(j)
		}
	}
	return st, true
}

// Explain returns, for every row, each input's contribution to the
// model's margin and the bias: path-dependent TreeSHAP over every tree,
// each split decided as scoring decides it (its predicates, in the
// model's arithmetic, and its missing value strategy), weighted by the
// nodes' recordCounts. The bias is the constants of the margin (Targets'
// rescaleConstant) plus each tree's mean by its leaves' recordCounts.
// A row a split sends to no child (a missing value without defaultChild,
// or no true child) has no explanation, unless a split above it on the
// same feature sends the row elsewhere: Explain returns an error.
func (p *explained) Explain(ctx context.Context, in process.Input) (*process.Explanation, error) {
	sc, x := p.sc, p.x
	st := sc.begin(in.Table)
	defer sc.pool.Put(st)
	rows, nf := in.Table.Rows(), len(x.features)
	width := nf + 1
	values, margins := make([][]float64, len(x.groups)), make([][]float64, len(x.groups))
	for g := range values {
		values[g] = make([]float64, rows*width)
		margins[g] = make([]float64, rows)
	}
	var (
		pred   prediction
		w      treeshap.Walker
		cur    *shapTerm
		failed bool
	)
	hot := func(j int32) int32 {
		c := cur.child(j, st.in)
		if c < 0 {
			failed = failed || cur.matters(j, st.in)
			return cur.st.Left[j]
		}
		return c
	}
	for r := range rows {
		if r%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if err := x.prepare(sc, st, r); err != nil {
			return nil, fmt.Errorf("pmml: explain row %d: %w", r, err)
		}
		for g := range values {
			values[g][r*width+nf] = x.bias[g]
		}
		for i := range x.terms {
			cur = &x.terms[i]
			w.Add(&cur.st, hot, cur.scale, values[cur.group][r*width:r*width+nf])
			if failed {
				break
			}
		}
		if failed {
			// A split sends the row to no child: the model predicts
			// nothing for it, and nothing explains that, so every
			// contribution of the row is missing (NaN, answered null).
			for g := range values {
				for k := r * width; k < (r+1)*width; k++ {
					values[g][k] = math.NaN()
				}
			}
			failed = false
		}
		for g := range margins {
			m, err := x.margin(sc, st, r, g, &pred)
			if err != nil {
				return nil, fmt.Errorf("pmml: explain row %d: %w", r, err)
			}
			margins[g][r] = m
		}
	}
	return &process.Explanation{Features: slices.Clone(x.features), Groups: slices.Clone(x.groups), Values: values, Margins: margins}, nil
}

// margin returns the margin of group g that scoring computes for row r,
// NaN when it computes none.
func (x *shapModel) margin(sc *scorer, st *state, r, g int, pred *prediction) (float64, error) {
	if err := x.prepare(sc, st, r); err != nil {
		return 0, err
	}
	pred.reset()
	switch err := x.margins[g].predict(st.in, pred); err {
	case nil:
	case errInvalidRow:
		return math.NaN(), nil
	default:
		return 0, err
	}
	if m, ok := pred.value.asNumber(); ok {
		return m, nil
	}
	return math.NaN(), nil
}

// child returns the child of treeshap split j the row in takes, as the
// tree's walk decides it, or -1 when the walk goes to no child.
func (t *shapTerm) child(j int32, in []value) int32 {
	c := t.t.next(&t.t.nodes[t.split[j]], in)
	switch {
	case c < 0:
		return -1
	case c == t.left[j]:
		return t.st.Left[j]
	}
	return t.st.Right[j]
}

// matters reports whether the row's decision at split j counts, for a
// split that sends the row to no child: it does not when a split above j
// on the same feature sends the row away from j, since TreeSHAP then
// never follows the row to j (as R's trees split a species off and then
// split the other species, among which the first is not).
func (t *shapTerm) matters(j int32, in []value) bool {
	f := t.st.Feature[j]
	for c, a := j, t.parent[j]; a >= 0; c, a = a, t.parent[a] {
		if t.st.Feature[a] != f {
			continue
		}
		if h := t.child(a, in); h >= 0 && h != c {
			return false
		}
	}
	return true
}

// prepare reads row r into st.in and readies it as scoring the model
// does.
func (x *shapModel) prepare(sc *scorer, st *state, r int) error {
	clear(st.in)
	for j, in := range sc.inputs {
		st.in[in.slot] = readColumn(st.cols[j], r)
	}
	for _, s := range x.scopes {
		if err := s.prepare(st.in); err != nil {
			return err
		}
	}
	return nil
}
