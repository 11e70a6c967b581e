package onnx

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/internal/treeshap"
	"github.com/scorehub/scorehub/registry/process"
)

// exactTolerance is how far a contribution may be from treeshap.Exact's,
// relatively to 1 plus its size: both sum the same float64 products in
// other orders.
const exactTolerance = 1e-9

// answerTolerance is how far an answer may be from what the margins say
// it is: ONNX Runtime's post-transforms compute in float32.
const answerTolerance = 1e-5

// xNode is a node of a tree the brute-force test writes as ONNX: node
// i has ONNX node id i, the root first.
type xNode struct {
	leaf     bool
	feature  int // of the ensemble's input
	mode     string
	thr      float64 // as the file holds it
	t, f     int
	missTrue bool
	cover    float64 // as the file holds it
	weights  []xWeight
}

type xWeight struct {
	target int
	v      float64 // as the file holds it
}

// exactCase is an ensemble the brute-force test draws at random, and what
// its margins are by the ONNX operators' definition.
type exactCase struct {
	name    string
	double  bool   // a double input, thresholds and weights; else float
	classes int    // 0 for a regressor
	agg     string // a regressor's aggregate_function
	post    string
	base    []float64
	// graph is "tensor" (the ensemble reads the [N,F] graph input) or
	// "columns" (one double [N,1] input per column, concatenated, cast to
	// the ensemble's type and picked: ensemble feature j reads column
	// pick[j]).
	graph   string
	columns int
	pick    []int
	// weighs returns the classes a leaf weighs, in order; a regressor's
	// leaves weigh target 0, sometimes twice.
	weighs func(rng *rand.Rand) []int
	// margins are the margins by the operators' definition: each a sum of
	// targets' raw scores (effective base plus scale times the trees')
	// times coefficients; effective is what a raw score adds to its trees.
	margins   [][]coef
	effective []float64
	// answer returns what the model answers for a row of margins m: the
	// prediction, or each class's confidence (NaN where a margin does not
	// tell).
	answer func(m []float64) []float64
}

func logistic(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

func softmax(m []float64) []float64 {
	top := slices.Max(m)
	out := make([]float64, len(m))
	sum := 0.0
	for i, v := range m {
		out[i] = math.Exp(v - top)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

var nan = math.NaN()

var exactCases = []exactCase{
	{name: "regressor SUM float", agg: "SUM", post: "NONE", base: []float64{0.25}, graph: "tensor", columns: 6,
		pick: []int{0, 1, 2, 3, 4, 5}, margins: [][]coef{{{0, 1}}}, effective: []float64{0.25},
		answer: func(m []float64) []float64 { return m }},
	{name: "regressor AVERAGE double through Concat, Cast and ArrayFeatureExtractor", double: true, agg: "AVERAGE", post: "NONE",
		base: []float64{-1.5}, graph: "columns", columns: 7, pick: []int{3, 0, 6, 3, 1},
		margins: [][]coef{{{0, 1}}}, effective: []float64{-1.5}, answer: func(m []float64) []float64 { return m }},
	{name: "classifier of 3 classes SOFTMAX float through Concat, Cast and ArrayFeatureExtractor", classes: 3, post: "SOFTMAX",
		base: []float64{0.1, -0.2, 0.3}, graph: "columns", columns: 8, pick: []int{7, 2, 2, 5, 0, 1},
		weighs:  someClasses(3),
		margins: [][]coef{{{0, 1}}, {{1, 1}}, {{2, 1}}}, effective: []float64{0.1, -0.2, 0.3}, answer: softmax},
	{name: "classifier of 4 classes NONE double", double: true, classes: 4, post: "NONE", graph: "tensor", columns: 5,
		pick: []int{0, 1, 2, 3, 4}, weighs: someClasses(4),
		margins: [][]coef{{{0, 1}}, {{1, 1}}, {{2, 1}}, {{3, 1}}}, effective: []float64{0, 0, 0, 0},
		answer: func(m []float64) []float64 { return m }},
	{name: "classifier of one score LOGISTIC float", classes: 2, post: "LOGISTIC", base: []float64{-0.4}, graph: "tensor", columns: 9,
		pick: []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, weighs: func(*rand.Rand) []int { return []int{0} },
		margins: [][]coef{{{0, 1}}}, effective: []float64{-0.4, 0},
		answer: func(m []float64) []float64 { return []float64{logistic(-m[0]), logistic(m[0])} }},
	{name: "classifier of two scores SOFTMAX double", double: true, classes: 2, post: "SOFTMAX", base: []float64{0.3}, graph: "columns",
		columns: 4, pick: []int{2, 0, 3, 1}, weighs: func(*rand.Rand) []int { return []int{0, 1} },
		margins: [][]coef{{{1, 1}, {0, -1}}}, effective: []float64{0.3, 0},
		answer: func(m []float64) []float64 { return []float64{1 - logistic(m[0]), logistic(m[0])} }},
	{name: "classifier of two scores NONE float", classes: 2, post: "NONE", graph: "tensor", columns: 10,
		pick: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, weighs: func(*rand.Rand) []int { return []int{1, 0} },
		margins: [][]coef{{{1, 1}}}, effective: []float64{0, 0},
		answer: func(m []float64) []float64 { return []float64{nan, m[0]} }},
	{name: "classifier of two scores LOGISTIC, the first class on some leaves", classes: 2, post: "LOGISTIC", graph: "tensor", columns: 3,
		pick: []int{0, 1, 2}, weighs: func(rng *rand.Rand) []int {
			if rng.IntN(2) == 0 {
				return []int{1}
			}
			return []int{0, 1}
		},
		margins: [][]coef{{{1, 1}}}, effective: []float64{0, 0},
		answer: func(m []float64) []float64 { return []float64{nan, logistic(m[0])} }},
}

// someClasses weighs a leaf for a random non-empty set of k classes.
func someClasses(k int) func(rng *rand.Rand) []int {
	return func(rng *rand.Rand) []int {
		var out []int
		for c := range k {
			if rng.IntN(2) == 0 {
				out = append(out, c)
			}
		}
		if out == nil {
			out = []int{rng.IntN(k)}
		}
		return out
	}
}

// stored is v as the file holds it: rounded to float32 unless double.
func (c *exactCase) stored(v float64) float64 {
	if c.double {
		return v
	}
	return float64(float32(v))
}

// grow draws a tree of at most depth splits on a path over the
// ensemble's features, thresholds from grid, every mode, covers that add
// up (as the file holds them), and each leaf's weights.
func (c *exactCase) grow(rng *rand.Rand, depth int, grid []float64) []xNode {
	modes := []string{"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"}
	var nodes []xNode
	var add func(d int) int
	add = func(d int) int {
		i := len(nodes)
		nodes = append(nodes, xNode{})
		if d == depth || (d > 0 && rng.IntN(3) == 0) {
			n := xNode{leaf: true, cover: c.stored(1 + float64(rng.IntN(40)) + rng.Float64())}
			targets := []int{0}
			if c.classes > 0 {
				targets = c.weighs(rng)
			} else if rng.IntN(3) == 0 {
				targets = []int{0, 0} // the kernel reads the first only
			}
			for _, k := range targets {
				n.weights = append(n.weights, xWeight{k, c.stored(rng.NormFloat64())})
			}
			nodes[i] = n
			return i
		}
		n := xNode{feature: rng.IntN(len(c.pick)), mode: modes[rng.IntN(len(modes))], missTrue: rng.IntN(2) == 0}
		n.thr = c.stored(grid[rng.IntN(len(grid))])
		n.t = add(d + 1)
		n.f = add(d + 1)
		n.cover = c.stored(nodes[n.t].cover + nodes[n.f].cover)
		nodes[i] = n
		return i
	}
	add(0)
	return nodes
}

// model writes the case's trees as an ONNX graph.
func (c *exactCase) model(trees [][]xNode) tModel {
	var treeIDs, nodeIDs, features, trueIDs, falseIDs, missing, wTrees, wNodes, wTargets []int64
	var modes []string
	var thr, hit, w []float64
	for ti, nodes := range trees {
		for i, n := range nodes {
			treeIDs, nodeIDs = append(treeIDs, int64(ti)), append(nodeIDs, int64(i))
			mode, feat, tr, fa, miss := "LEAF", 0, 0, 0, 0
			if !n.leaf {
				mode, feat, tr, fa = n.mode, n.feature, n.t, n.f
				if n.missTrue {
					miss = 1
				}
			}
			modes = append(modes, mode)
			features, trueIDs, falseIDs = append(features, int64(feat)), append(trueIDs, int64(tr)), append(falseIDs, int64(fa))
			missing = append(missing, int64(miss))
			thr, hit = append(thr, n.thr), append(hit, n.cover)
			for _, wt := range n.weights {
				wTrees, wNodes, wTargets = append(wTrees, int64(ti)), append(wNodes, int64(i)), append(wTargets, int64(wt.target))
				w = append(w, wt.v)
			}
		}
	}
	reals := func(name string, v []float64) tAttr {
		if c.double {
			return aTensor(name+"_as_tensor", tTensor{dt: onnxDouble, dims: []int64{int64(len(v))}, doubles: v})
		}
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		return aFloats(name, f...)
	}
	prefix := "target"
	if c.classes > 0 {
		prefix = "class"
	}
	attrs := []tAttr{aInts("nodes_treeids", treeIDs...), aInts("nodes_nodeids", nodeIDs...), aInts("nodes_featureids", features...),
		aStrings("nodes_modes", modes...), reals("nodes_values", thr), aInts("nodes_truenodeids", trueIDs...),
		aInts("nodes_falsenodeids", falseIDs...), aInts("nodes_missing_value_tracks_true", missing...), reals("nodes_hitrates", hit),
		aInts(prefix+"_treeids", wTrees...), aInts(prefix+"_nodeids", wNodes...), aInts(prefix+"_ids", wTargets...),
		reals(prefix+"_weights", w), aString("post_transform", c.post)}
	if c.base != nil {
		attrs = append(attrs, reals("base_values", c.base))
	}
	elem := int64(onnxFloat)
	if c.double {
		elem = onnxDouble
	}
	m := tModel{}
	in := "X"
	switch c.graph {
	case "tensor":
		m.inputs = []tValue{{name: "X", elem: elem, dims: []int64{-1, int64(c.columns)}}}
	case "columns":
		var names []string
		for j := range c.columns {
			name := fmt.Sprintf("c%d", j)
			names = append(names, name)
			m.inputs = append(m.inputs, tValue{name: name, elem: onnxDouble, dims: []int64{-1, 1}})
		}
		pick := make([]int64, len(c.pick))
		for j, p := range c.pick {
			pick[j] = int64(p)
		}
		m.inits = []tTensor{{name: "pick", dt: onnxInt64, dims: []int64{int64(len(pick))}, ints: pick}}
		m.nodes = []tNode{std("Concat", names, []string{"joined"}, aInt("axis", 1)),
			std("Cast", []string{"joined"}, []string{"cast"}, aInt("to", elem)),
			ml("ArrayFeatureExtractor", []string{"cast", "pick"}, []string{"picked"})}
		in = "picked"
	}
	if c.classes > 0 {
		labels := make([]int64, c.classes)
		for k := range labels {
			labels[k] = int64(k)
		}
		attrs = append(attrs, aInts("classlabels_int64s", labels...))
		m.nodes = append(m.nodes, ml("TreeEnsembleClassifier", []string{in}, []string{"label", "probabilities"}, attrs...))
		m.outputs = []tValue{{name: "label", elem: onnxInt64, dims: []int64{-1}},
			{name: "probabilities", elem: onnxFloat, dims: []int64{-1, int64(c.classes)}}}
		return m
	}
	attrs = append(attrs, aInt("n_targets", 1), aString("aggregate_function", c.agg))
	m.nodes = append(m.nodes, ml("TreeEnsembleRegressor", []string{in}, []string{"variable"}, attrs...))
	m.outputs = []tValue{{name: "variable", elem: onnxFloat, dims: []int64{-1, 1}}}
	return m
}

// columnNames are the request columns of the case's model.
func (c *exactCase) columnNames() []string {
	names := make([]string, c.columns)
	for j := range names {
		names[j] = fmt.Sprintf("f%d", j)
		if c.graph == "columns" {
			names[j] = fmt.Sprintf("c%d", j)
		}
	}
	return names
}

// decide is the child of split n a row of the ensemble's features x
// takes, by the ONNX operators' definition in the ensemble's type.
func (c *exactCase) decide(n *xNode, x []float64) int {
	v, t := x[n.feature], n.thr
	if !c.double {
		v, t = float64(float32(v)), float64(float32(t))
	}
	var yes bool
	switch n.mode {
	case "BRANCH_LEQ":
		yes = v <= t
	case "BRANCH_LT":
		yes = v < t
	case "BRANCH_GTE":
		yes = v >= t
	case "BRANCH_GT":
		yes = v > t
	case "BRANCH_EQ":
		yes = v == t
	case "BRANCH_NEQ":
		yes = v != t
	}
	if yes || math.IsNaN(v) && n.missTrue {
		return n.t
	}
	return n.f
}

// leafValue is what leaf n adds to target k's raw score: a classifier's
// weights for the class, a regressor's first weight.
func (c *exactCase) leafValue(n *xNode, k int) float64 {
	if !n.leaf {
		return 0
	}
	if c.classes == 0 {
		return n.weights[0].v
	}
	v := 0.0
	for _, w := range n.weights {
		if w.target == k {
			v += w.v
		}
	}
	return v
}

// want returns the contributions, by group, of a row of the request's
// columns row: Exact's over every tree and target of a margin, the
// trees' splits read as the columns their features pick; the bias last.
// It also returns the row's margins.
func (c *exactCase) want(trees [][]xNode, row []float64) (contribs [][]float64, margins []float64) {
	x := make([]float64, len(c.pick)) // the ensemble's features
	for j, p := range c.pick {
		x[j] = row[p]
	}
	scale := 1.0
	if c.agg == "AVERAGE" {
		scale = 1 / float64(len(trees))
	}
	contribs = make([][]float64, len(c.margins))
	margins = make([]float64, len(c.margins))
	for g, cs := range c.margins {
		contribs[g] = make([]float64, c.columns+1)
		for _, cf := range cs {
			base := c.stored(c.effective[cf.target])
			contribs[g][c.columns] += cf.w * base
			margins[g] += cf.w * base
			for _, nodes := range trees {
				st := treeshap.Tree{}
				var depth func(i, d int) int
				depth = func(i, d int) int {
					if nodes[i].leaf {
						return d
					}
					return max(depth(nodes[i].t, d+1), depth(nodes[i].f, d+1))
				}
				st.Depth = depth(0, 0)
				for i := range nodes {
					n := &nodes[i]
					l, r, f := int32(-1), int32(-1), int32(0)
					if !n.leaf {
						l, r, f = int32(n.t), int32(n.f), int32(c.pick[n.feature])
					}
					st.Left, st.Right, st.Feature = append(st.Left, l), append(st.Right, r), append(st.Feature, f)
					st.Cover, st.Value = append(st.Cover, n.cover), append(st.Value, c.leafValue(n, cf.target))
				}
				hot := func(i int32) int32 { return int32(c.decide(&nodes[i], x)) }
				for j, v := range treeshap.Exact(&st, hot, c.columns) {
					contribs[g][j] += cf.w * scale * v
				}
				contribs[g][c.columns] += cf.w * scale * st.Mean()
				leaf := 0
				for !nodes[leaf].leaf {
					leaf = c.decide(&nodes[leaf], x)
				}
				margins[g] += cf.w * scale * c.leafValue(&nodes[leaf], cf.target)
			}
		}
	}
	return contribs, margins
}

// TestExplainExact: ONNX tree ensembles drawn at random — regressors of
// SUM and AVERAGE, classifiers of one score, of two and of several
// classes, float and double, every branch mode, missing values sent by
// nodes_missing_value_tracks_true, features read through Concat, Cast and
// ArrayFeatureExtractor (one column read by two features) — explain every
// row with the Shapley values by their definition (treeshap.Exact over
// the trees as this test describes them, with their hitrates as covers),
// within exactTolerance; the contributions add up to the margins scoring
// computes (Explanation.Check), which are the margins by the operators'
// definition and what the model's answer is computed from.
func TestExplainExact(t *testing.T) {
	for ci := range exactCases {
		c := &exactCases[ci]
		for seed := range 4 {
			t.Run(fmt.Sprintf("%s/%d", c.name, seed), func(t *testing.T) {
				t.Parallel()
				checkExact(t, c, rand.New(rand.NewPCG(uint64(ci), uint64(seed))))
			})
		}
	}
}

func checkExact(t *testing.T, c *exactCase, rng *rand.Rand) {
	grid := []float64{-1.5, -0.25, 0, 0.3, 1, 2.75}
	var trees [][]xNode
	for range 2 + rng.IntN(4) {
		trees = append(trees, c.grow(rng, 1+rng.IntN(4), grid))
	}
	if c.classes == 2 && c.post == "LOGISTIC" && len(c.margins[0]) == 1 && c.margins[0][0].target == 0 {
		// A negative weight, so that ONNX Runtime answers a logistic of
		// the score rather than the score as a probability.
		trees[0][len(trees[0])-1].weights[0].v = -0.5
	}
	lm := load(t, c.model(trees), process.ModelMetadata{})
	ex, ok := lm.Process.(process.Explainer)
	if !ok {
		t.Fatalf("the model does not explain: %s", lm.Schema.Unexplained)
	}
	// Rows of values at the thresholds and between them, and missing.
	const rows = 24
	values := make([][]float64, c.columns)
	var cols []process.Column
	for j, name := range c.columnNames() {
		values[j] = make([]float64, rows)
		missing := make([]bool, rows)
		for r := range rows {
			switch k := rng.IntN(8); {
			case k == 0:
				values[j][r], missing[r] = nan, true
			case k < 5:
				values[j][r] = c.stored(grid[rng.IntN(len(grid))])
			default:
				values[j][r] = 4*rng.Float64() - 2
			}
		}
		cols = append(cols, process.NumberColumn(name, values[j], missing))
	}
	tab := tabletest.Must(rows, cols...)
	e, err := ex.Explain(context.Background(), process.Input{Table: tab})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Check(rows); err != nil {
		t.Fatal(err)
	}
	if want := c.columnNames(); !slices.Equal(e.Features, want) {
		t.Fatalf("features %q, want %q", e.Features, want)
	}
	out, err := lm.Process.Score(context.Background(), process.Input{Table: tab})
	if err != nil {
		t.Fatal(err)
	}
	for r := range rows {
		row := make([]float64, c.columns)
		for j := range row {
			row[j] = values[j][r]
		}
		want, margins := c.want(trees, row)
		for g := range want {
			for j, w := range want[g] {
				if got := e.Row(g, r)[j]; math.Abs(got-w) > exactTolerance*(1+math.Abs(w)) {
					t.Errorf("row %d group %d: contribution %d is %v, by definition %v", r, g, j, got, w)
				}
			}
			if got := e.Margins[g][r]; math.Abs(got-margins[g]) > answerTolerance*math.Max(1, math.Abs(margins[g])) {
				t.Errorf("row %d group %d: margin %v, by definition %v", r, g, got, margins[g])
			}
		}
		for k, w := range c.answer(marginsOf(e, r)) {
			if math.IsNaN(w) {
				continue
			}
			col := out.Column(k)
			if c.classes > 0 {
				col = out.Column(k + 1) // after the predicted class
			}
			if got := col.Numbers[r]; math.Abs(got-w) > answerTolerance*math.Max(1, math.Abs(w)) {
				t.Errorf("row %d: %s is %v; the margins %v make it %v", r, col.Name, got, marginsOf(e, r), w)
			}
		}
	}
}

// marginsOf returns row r's margins in e, by group.
func marginsOf(e *process.Explanation, r int) []float64 {
	m := make([]float64, len(e.Margins))
	for g := range m {
		m[g] = e.Margins[g][r]
	}
	return m
}
