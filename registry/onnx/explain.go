package onnx

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/scorehub/scorehub/internal/treeshap"
	"github.com/scorehub/scorehub/registry/process"
)

// explained is the Process of a model whose answer is the scores of one
// tree ensemble that reads the model's inputs as they are and whose
// nodes_hitrates are covers. It is safe for concurrent use: an
// explanation's walk and tensors are its own, the trees are only read.
type explained struct {
	process.Process
	p        *plan
	features []string
	groups   []string
}

var _ process.Explainer = (*explained)(nil)

// Explain returns, for every row, each input's contribution to the
// ensemble's raw scores and the bias: path-dependent TreeSHAP over every
// tree, each split decided as scoring decides it (its branch mode in the
// ensemble's float or double, a missing value as
// nodes_missing_value_tracks_true says), weighted by the nodes' hitrates.
// The bias is the base values plus each tree's mean by its leaves'
// hitrates, times its share of the score (1, or 1/trees for AVERAGE).
// The margins are the scores the ensemble computed for the rows as
// scoring computes them, before the post-transform: one per class for a
// classifier of more than two, else the one the second class's
// confidence is computed from (see [classifierTrees]). A row the graph
// cannot score has no margin and no contributions (NaN).
func (p *explained) Explain(ctx context.Context, in process.Input) (*process.Explanation, error) {
	x := p.p.shap
	rows, width := in.Table.Rows(), len(p.features)+1
	values, margins := make([][]float64, len(p.groups)), make([][]float64, len(p.groups))
	for g := range values {
		values[g] = make([]float64, rows*width)
		margins[g] = make([]float64, rows)
	}
	err := p.p.evaluate(ctx, in.Table, x.steps, x.tn, func(first int, s *state) error {
		return x.tn.shap.explain(ctx, s, first, values, margins)
	})
	if err != nil {
		return nil, fmt.Errorf("onnx: explaining stopped: %w", err)
	}
	return &process.Explanation{Features: slices.Clone(p.features), Groups: slices.Clone(p.groups), Values: values, Margins: margins}, nil
}

// planShap is how a plan explains its answer: the tree ensemble whose
// scores it is, and the steps that compute them.
type planShap struct {
	tn    *treeNode
	steps []step
}

// treeNode is a tree ensemble node of the graph as explanations see it.
type treeNode struct {
	node int    // its index in the graph
	in   *value // the [N,F] value it reads
	out  *value // its scores
	// groups counts the margins its scores make.
	groups int
	// why says, in a sentence, why its trees cannot be explained; "" when
	// they can, through shap.
	why  string
	shap shapSource
}

// shapSource explains the rows of one evaluated chunk: it writes, for
// each of s's rows, row first+r of values and of margins, by group.
type shapSource interface {
	explain(ctx context.Context, s *state, first int, values, margins [][]float64) error
}

// rawScores are a tree ensemble's scores before its post-transform, kept
// for an explanation: scores[r*k+t] is row r's of target (or class) t.
type rawScores struct {
	node   int
	scores []float64
}

// keepRaw returns where the tree ensemble of node is to write its k raw
// scores a row; nil unless an explanation asked for that ensemble's.
func (s *state) keepRaw(node, k int) []float64 {
	if s.raw == nil || s.raw.node != node {
		return nil
	}
	s.raw.scores = make([]float64, s.rows*k)
	return s.raw.scores
}

// movesValues names the operators whose every output value is one of
// their inputs' values (Cast converting a number's type, as the trees
// then read it): a tree reading their output reads a model input.
var movesValues = map[string]bool{"Identity": true, "Cast": true, "Concat": true, "Reshape": true,
	"Flatten": true, "ArrayFeatureExtractor": true}

// copiesScores names the operators that answer their input's scores
// unchanged (Cast to float or double only).
var copiesScores = map[string]bool{"Identity": true, "Cast": true, "Reshape": true, "Flatten": true, "ZipMap": true}

// treeOps are the tree ensemble operators.
var treeOps = map[string]bool{"TreeEnsembleClassifier": true, "TreeEnsembleRegressor": true, "TreeEnsemble": true}

// explainable decides whether the plan's answer can be explained: it must
// be the scores of one tree ensemble, copied but not transformed, whose
// input is the model's inputs (read, cast, concatenated, reshaped or
// picked, never computed from), and whose trees explain (see
// [regressorTrees], [classifierTrees]). It sets p.shap, or p.unexplained
// to say why not for a graph of tree ensembles; a graph of none is a kind
// of model that never explains.
func (p *plan) explainable(c *compiler, g *graphProto) {
	tn := p.output.scores
	if tn == nil {
		p.unexplained = transformedScores(c, g, p.steps, p.output)
		return
	}
	if tn.in.origin == nil {
		p.unexplained = computedInput(c, g, tn.in)
		return
	}
	if tn.why != "" {
		p.unexplained = tn.why
		return
	}
	p.shap = &planShap{tn: tn, steps: needed(c.steps, g, c.values, tn.out)}
}

// transformedScores says how an answer that is not a tree ensemble's
// scores is computed from them; "" when no tree ensemble computes it.
func transformedScores(c *compiler, g *graphProto, steps []step, out *value) string {
	trees := false
	for _, st := range steps {
		trees = trees || treeOps[g.nodes[st.node].opType]
	}
	if !trees {
		return ""
	}
	// The node that takes the scores out of the ensemble's hands: the
	// last one back from the answer, through the nodes that copy values,
	// before the ensemble, or the first that does not copy.
	v, last := out, -1
	for v != nil && v.node >= 0 {
		n := &g.nodes[v.node]
		if treeOps[n.opType] {
			break
		}
		last = v.node
		if !copiesScores[n.opType] || len(n.inputs) == 0 {
			break
		}
		v = c.values[n.inputs[0]]
	}
	if last < 0 {
		return "its answer is not its tree ensemble's scores, and only an ensemble's own scores can be explained"
	}
	return fmt.Sprintf("its answer is computed from its tree ensemble's scores by node %s, and only an ensemble's own scores can be explained",
		nodeName(&g.nodes[last], last))
}

// computedInput says what computes the values a tree ensemble reads, in
// (which has no origin), from the model's inputs.
func computedInput(c *compiler, g *graphProto, in *value) string {
	const only = "; contributions go to inputs the trees read as they are, through Identity, Cast, Concat, Reshape, Flatten or ArrayFeatureExtractor only"
	v := in
	for {
		if v.node < 0 {
			return fmt.Sprintf("its tree ensemble reads numbers the graph parses from the text input %q", v.name) + only
		}
		n := &g.nodes[v.node]
		var next *value
		if movesValues[n.opType] {
			for _, name := range n.inputs {
				if w := c.values[name]; w != nil && w.konst == nil && w.origin == nil {
					next = w
					break
				}
			}
		}
		if next == nil {
			return fmt.Sprintf("its tree ensemble reads what node %s computes from the model's inputs, not the inputs themselves", nodeName(n, v.node)) + only
		}
		v = next
	}
}

// withExplanations returns proc, the process of the plan's model of
// classes (nil for a regressor), as one that explains its predictions
// when the plan can; else proc and why it cannot.
func (p *plan) withExplanations(proc process.Process, classes []string) (process.Process, string) {
	if p.shap == nil {
		return proc, p.unexplained
	}
	groups := []string{""}
	if len(classes) > 2 {
		groups = slices.Clone(classes)
	}
	if len(groups) != p.shap.tn.groups {
		// The scores of a classifier are its classes', so this cannot be.
		return proc, fmt.Sprintf("its tree ensemble computes %d margins for %d classes", p.shap.tn.groups, len(classes))
	}
	features := make([]string, len(p.columns))
	for i, c := range p.columns {
		features[i] = c.Name
	}
	return &explained{Process: proc, p: p, features: features, groups: groups}, ""
}

// coverTolerance bounds how far, relatively, a split's hitrate may be from
// the sum of its children's for the hitrates to be covers. nodes_hitrates
// holds float32s, each rounded by at most 2^-24 (6e-8) of itself: a
// cover summed exactly and then rounded (XGBoost's sum of hessians,
// LightGBM's count) leaves a split within 2e-7 of its children's sum,
// and one summed in float32 over a thousand steps within 1e-4. What
// converters write, 1.0 for every node, misses by 100%, and hit rates
// relative to the parent miss by as much below the root.
const coverTolerance = 1e-3

// coversFix ends the sentences that say why a file's hitrates are not
// covers.
const coversFix = "; writing each node's cover (XGBoost's cover, LightGBM's count) into nodes_hitrates makes it explainable"

// walk calls visit with the index of every node of tree ti that a row can
// reach, a branch before its children.
func (e *ensemble[T]) walk(ti int, visit func(i int32)) {
	stack := []int32{e.roots[ti]}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		visit(i)
		if nd := &e.nodes[i]; nd.mode != modeLeaf {
			stack = append(stack, nd.f, nd.t)
		}
	}
}

// coversOf returns a's hitrates when they are covers: every node's a row
// reaches positive and finite, every branch's the sum of its children's
// within coverTolerance. Otherwise it says why they are not.
func coversOf[T number](e *ensemble[T], a *treeAttrs) ([]float64, string) {
	if a.hitrates == nil {
		return nil, a.noHitrates
	}
	h := a.hitrates
	why := ""
	for ti := range e.roots {
		e.walk(ti, func(i int32) {
			if why != "" {
				return
			}
			v := h[i]
			if !(v > 0) || math.IsInf(v, 0) {
				why = fmt.Sprintf("its tree ensemble's nodes_hitrates are not covers: node %d of tree %d has %.7g, and a cover is a positive amount of training data",
					a.nodeIDs[i], a.treeIDs[i], v)
				return
			}
			nd := &e.nodes[i]
			if nd.mode == modeLeaf {
				return
			}
			if l, r := h[nd.t], h[nd.f]; !(math.Abs(v-(l+r)) <= coverTolerance*v) {
				why = fmt.Sprintf("its tree ensemble's nodes_hitrates are not covers: node %d of tree %d has %.7g, its children %.7g and %.7g, "+
					"where a cover is the sum of its children's (converters write 1.0 for every node)", a.nodeIDs[i], a.treeIDs[i], v, l, r)
			}
		})
		if why != "" {
			return nil, why + coversFix
		}
	}
	return h, ""
}

// coef is a target's (or class's) coefficient in a margin.
type coef struct {
	target int
	w      float64
}

// regressorTrees makes the scores of a TreeEnsembleRegressor (or a
// TreeEnsemble) explainable where they can be: one target, its trees
// summed (SUM) or averaged (AVERAGE), their hitrates covers. The margin
// is the target's value before the post-transform.
func regressorTrees[T number](x *nodeCtx, e *ensemble[T], a *treeAttrs, in, out *value, agg string) {
	if out == nil {
		return
	}
	tn := &treeNode{node: x.idx, in: in, out: out, groups: 1}
	out.scores = tn
	switch {
	case e.targets != 1:
		tn.why = fmt.Sprintf("its tree ensemble answers %d targets, and only a regressor of one target explains", e.targets)
		return
	case agg != "SUM" && agg != "AVERAGE":
		tn.why = fmt.Sprintf("its trees are aggregated by %s, and TreeSHAP attributes only their sum (SUM) or average (AVERAGE)", agg)
		return
	}
	covers, why := coversOf(e, a)
	if why != "" {
		tn.why = why
		return
	}
	base := []float64{0}
	if len(e.base) == 1 {
		base[0] = float64(e.base[0]) // as regressorKernel adds it to one target
	}
	scale := 1.0
	if agg == "AVERAGE" {
		scale = 1 / float64(len(e.roots))
	}
	tn.shap = &shapEnsemble[T]{e: e, in: in, features: x.c.columns, covers: covers,
		margins: [][]coef{{{0, 1}}}, base: base, scale: scale, first: true}
}

// classifierTrees makes the scores of a TreeEnsembleClassifier
// explainable where they can be: its hitrates covers, and its scores
// before the post-transform margins that its rows share. A classifier of
// more than two classes has one margin per class, the class's score. Of
// two classes, the one margin is what the second class's confidence is
// computed from, as ONNX Runtime computes it: the one score a model of
// weights for the first class alone has (what converters write for
// boosting), the second class's score for a model of two (the second's
// less the first's with SOFTMAX). What ONNX Runtime answers otherwise
// for two classes (two base values, PROBIT of one score, rows that reach
// a weight of the second class and rows that do not) has no such margin.
func classifierTrees[T number](x *nodeCtx, e *ensemble[T], a *treeAttrs, in *value, cl *classifier) {
	if cl.zv == nil {
		return
	}
	c := e.targets
	tn := &treeNode{node: x.idx, in: in, out: cl.zv, groups: 1}
	cl.zv.scores = tn
	base := make([]float64, c)
	var margins [][]coef
	if c > 2 {
		tn.groups = c
		for k, b := range e.base {
			base[k] = float64(b)
		}
		for k := range c {
			margins = append(margins, []coef{{k, 1}})
		}
	} else if margins, tn.why = binaryMargins(e, a, base); tn.why != "" {
		return
	}
	covers, why := coversOf(e, a)
	if why != "" {
		tn.why = why
		return
	}
	tn.shap = &shapEnsemble[T]{e: e, in: in, features: x.c.columns, covers: covers, margins: margins, base: base, scale: 1}
}

// binaryMargins returns the margin of a two-class ensemble and sets base
// to what its classes' scores add to their trees, or says why it has no
// margin (see [classifierTrees]); finishClass is what it follows.
func binaryMargins[T number](e *ensemble[T], a *treeAttrs, base []float64) ([][]coef, string) {
	if len(e.base) == 2 {
		return nil, "it has a base value for each of its two classes, which ONNX Runtime does not add to the classes' scores " +
			"(it makes the second class's score from the first's), so no margin sums its trees; one base value, the first class's, would explain"
	}
	first := 0.0
	if len(e.base) == 1 {
		first = float64(e.base[0])
	}
	// Whether some leaf, and whether every leaf of some tree, a row
	// reaches weighs each class: for the second, whether a row's scores
	// are one or two; for both, whether a class's score is ever read as
	// 0 for want of a weight.
	var some, every [2]bool
	for ti := range e.roots {
		all := [2]bool{true, true}
		e.walk(ti, func(i int32) {
			nd := &e.nodes[i]
			if nd.mode != modeLeaf {
				return
			}
			var has [2]bool
			for _, w := range e.weights[nd.t : nd.t+nd.f] {
				has[w.target] = true
			}
			for k := range has {
				some[k] = some[k] || has[k]
				all[k] = all[k] && has[k]
			}
		})
		for k := range all {
			every[k] = every[k] || all[k]
		}
	}
	onlyFirst := true
	for _, t := range a.wTargets {
		onlyFirst = onlyFirst && t == 0
	}
	switch {
	case onlyFirst && e.post == postProbit:
		return nil, "its one score for two classes goes through PROBIT, which ONNX Runtime answers as the first class's confidence alone"
	case onlyFirst:
		base[0] = first
		return [][]coef{{{0, 1}}}, ""
	case !every[1]:
		return nil, "rows that reach no weight of its second class are answered by ONNX Runtime from the first class's score alone, " +
			"and rows that reach one from both, so they have no margin in common"
	case some[0] && !every[0] && first != 0:
		return nil, "rows that reach no weight of its first class have that class's score read as 0 by ONNX Runtime, without its base value, " +
			"and other rows with it, so they have no margin in common"
	case e.post == postSoftmaxZero:
		return nil, "its two class scores go through SOFTMAX_ZERO, which keeps a score of 0 at 0 and so answers no function of one margin"
	}
	if every[0] {
		base[0] = first // else the first class's score is 0 or its trees' alone
	}
	if e.post == postSoftmax {
		return [][]coef{{{1, 1}, {0, -1}}}, "" // the log-odds of the second class
	}
	return [][]coef{{{1, 1}}}, ""
}

// shapEnsemble is a tree ensemble whose hitrates are covers, as TreeSHAP
// explains it: each target's raw score is base plus scale times its
// trees' leaves, each margin a sum of targets' scores times coefficients.
type shapEnsemble[T number] struct {
	e        *ensemble[T]
	in       *value // what it reads, whose origin names the columns
	features int    // the request columns the model reads
	covers   []float64
	margins  [][]coef  // by group
	base     []float64 // by target
	scale    float64
	// first says that a leaf's value is its first weight, whatever the
	// target, as regressorKernel reads a regressor of one target.
	first bool

	once  sync.Once
	terms []shapTerm
	bias  []float64 // by group
}

// shapTerm is one tree weighing one target, as treeshap walks it, in one
// group's margin.
type shapTerm struct {
	root  int32 // its root among the ensemble's nodes: treeshap's node i is root+i
	group int
	scale float64
	st    treeshap.Tree
}

// build makes the ensemble's trees the terms treeshap walks, once for
// each target of a margin their leaves weigh, and the bias of each group.
func (x *shapEnsemble[T]) build() {
	e := x.e
	x.bias = make([]float64, len(x.margins))
	var targets []int
	for g, cs := range x.margins {
		for _, c := range cs {
			x.bias[g] += c.w * x.base[c.target]
			if !slices.Contains(targets, c.target) {
				targets = append(targets, c.target)
			}
		}
	}
	for ti, root := range e.roots {
		end := int32(len(e.nodes))
		if ti+1 < len(e.roots) {
			end = e.roots[ti+1]
		}
		n := end - root
		st := treeshap.Tree{Left: make([]int32, n), Right: make([]int32, n), Feature: make([]int32, n),
			Cover: x.covers[root:end], Depth: e.depths[ti]}
		for i := range n {
			nd := &e.nodes[root+i]
			if nd.mode == modeLeaf {
				st.Left[i], st.Right[i] = -1, -1
				continue
			}
			st.Left[i], st.Right[i], st.Feature[i] = nd.t-root, nd.f-root, x.in.origin[nd.feature]
		}
		for _, k := range targets {
			values, weighs := x.leafValues(root, end, k)
			if !weighs {
				continue // a tree of no weight for the target adds nothing to it
			}
			st.Value = values
			mean := st.Mean()
			for g, cs := range x.margins {
				for _, c := range cs {
					if c.target == k {
						x.terms = append(x.terms, shapTerm{root: root, group: g, scale: c.w * x.scale, st: st})
						x.bias[g] += c.w * x.scale * mean
					}
				}
			}
		}
	}
}

// leafValues returns what each leaf of the tree of nodes [root, end)
// adds to target k, as the kernels sum it, and whether any leaf adds to
// it.
func (x *shapEnsemble[T]) leafValues(root, end int32, k int) ([]float64, bool) {
	e := x.e
	values := make([]float64, end-root)
	weighs := false
	for i := range values {
		nd := &e.nodes[root+int32(i)]
		if nd.mode != modeLeaf {
			continue
		}
		ws := e.weights[nd.t : nd.t+nd.f]
		if x.first {
			ws = ws[:1]
		}
		for _, w := range ws {
			if x.first || int(w.target) == k {
				values[i] += float64(w.v)
				weighs = true
			}
		}
	}
	return values, weighs
}

// ctxRows is how many rows an explanation explains between looks at its
// context: a row of a large ensemble takes a walk of every tree.
const ctxRows = 16

func (x *shapEnsemble[T]) explain(ctx context.Context, s *state, first int, values, margins [][]float64) error {
	x.once.Do(x.build)
	if s.raw == nil || s.raw.scores == nil {
		return errors.New("onnx: the tree ensemble kept no raw scores to explain")
	}
	e, in, nf := x.e, x.in, x.features
	f := in.width
	xs := rowsAs[T](in.dt, &s.vals[in.slot], s.rows*f)
	raw, k, width := s.raw.scores, e.targets, nf+1
	var (
		w   treeshap.Walker
		cur *shapTerm
		row []T
	)
	hot := func(i int32) int32 { return e.nodes[cur.root+i].child(row) - cur.root }
	for r := range s.rows {
		if r%ctxRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		at := first + r
		if s.bad != nil && s.bad[r] {
			for g := range values {
				for j := at * width; j < (at+1)*width; j++ {
					values[g][j] = math.NaN()
				}
				margins[g][at] = math.NaN()
			}
			continue
		}
		row = xs[r*f : (r+1)*f]
		for g := range values {
			values[g][at*width+nf] = x.bias[g]
		}
		for i := range x.terms {
			cur = &x.terms[i]
			w.Add(&cur.st, hot, cur.scale, values[cur.group][at*width:at*width+nf])
		}
		for g, cs := range x.margins {
			m := 0.0
			for _, c := range cs {
				m += c.w * raw[r*k+c.target]
			}
			margins[g][at] = m
		}
	}
	return nil
}
