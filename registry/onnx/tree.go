package onnx

import (
	"fmt"
	"math"
)

// Node modes of the tree ensemble operators.
const (
	modeLEQ uint8 = iota
	modeLT
	modeGTE
	modeGT
	modeEQ
	modeNEQ
	modeLeaf
)

var modeNames = map[string]uint8{"BRANCH_LEQ": modeLEQ, "BRANCH_LT": modeLT, "BRANCH_GTE": modeGTE,
	"BRANCH_GT": modeGT, "BRANCH_EQ": modeEQ, "BRANCH_NEQ": modeNEQ, "LEAF": modeLeaf}

// number is the type thresholds, weights and sums are computed in: float32
// for float (and integer) inputs, float64 for double ones, as ONNX Runtime
// does.
type number interface{ float32 | float64 }

// tnode is a tree node flattened for walking. A branch's children are
// node indexes; a leaf's t is its first weight and f how many it has.
type tnode[T number] struct {
	thr      T
	feature  int32
	t, f     int32
	mode     uint8
	missTrue bool
}

type weight[T number] struct {
	target int32
	v      T
}

// ensemble is the compiled form of a TreeEnsembleRegressor or
// TreeEnsembleClassifier.
type ensemble[T number] struct {
	nodes   []tnode[T]
	roots   []int32
	weights []weight[T]
	base    []T
	targets int
	post    postTransform
	// leq is set when every branch is BRANCH_LEQ without
	// missing_value_tracks_true, as scikit-learn's trees are: fast then
	// holds the trees for walking several rows at once without branches.
	leq    bool
	fast   []fnode[T]
	depths []int // of each tree
}

// fnode is a node of a tree of BRANCH_LEQ nodes: x[feature] ≤ thr leads
// to next[0], anything else (NaN too) to next[1]; a leaf leads to itself.
type fnode[T number] struct {
	thr     T
	feature int32
	next    [2]int32
}

// lockstepDepth is the deepest tree walked rows-at-once: every row takes
// as many steps as the tree is deep, a leaf stepping onto itself.
const lockstepDepth = 24

// leaves finds the leaf of tree ti for rows [b, end) of xs (f values a
// row), writing node indexes to out[0:end-b].
func (e *ensemble[T]) leaves(ti int, xs []T, f, b, end int, out []int32) {
	root := e.roots[ti]
	r := b
	if e.leq && e.depths[ti] <= lockstepDepth {
		nodes, depth := e.fast, e.depths[ti]
		for ; r+8 <= end; r += 8 {
			x0, x1, x2, x3 := xs[r*f:(r+1)*f], xs[(r+1)*f:(r+2)*f], xs[(r+2)*f:(r+3)*f], xs[(r+3)*f:(r+4)*f]
			x4, x5, x6, x7 := xs[(r+4)*f:(r+5)*f], xs[(r+5)*f:(r+6)*f], xs[(r+6)*f:(r+7)*f], xs[(r+7)*f:(r+8)*f]
			n0, n1, n2, n3, n4, n5, n6, n7 := root, root, root, root, root, root, root, root
			for range depth {
				a, b, c, d := &nodes[n0], &nodes[n1], &nodes[n2], &nodes[n3]
				n0 = a.next[above(x0[a.feature], a.thr)&1]
				n1 = b.next[above(x1[b.feature], b.thr)&1]
				n2 = c.next[above(x2[c.feature], c.thr)&1]
				n3 = d.next[above(x3[d.feature], d.thr)&1]
				a, b, c, d = &nodes[n4], &nodes[n5], &nodes[n6], &nodes[n7]
				n4 = a.next[above(x4[a.feature], a.thr)&1]
				n5 = b.next[above(x5[b.feature], b.thr)&1]
				n6 = c.next[above(x6[c.feature], c.thr)&1]
				n7 = d.next[above(x7[d.feature], d.thr)&1]
			}
			o := out[r-b : r-b+8]
			o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7] = n0, n1, n2, n3, n4, n5, n6, n7
		}
		for ; r+4 <= end; r += 4 {
			x0, x1, x2, x3 := xs[r*f:(r+1)*f], xs[(r+1)*f:(r+2)*f], xs[(r+2)*f:(r+3)*f], xs[(r+3)*f:(r+4)*f]
			n0, n1, n2, n3 := root, root, root, root
			for range depth {
				a, b, c, d := &nodes[n0], &nodes[n1], &nodes[n2], &nodes[n3]
				n0 = a.next[above(x0[a.feature], a.thr)&1]
				n1 = b.next[above(x1[b.feature], b.thr)&1]
				n2 = c.next[above(x2[c.feature], c.thr)&1]
				n3 = d.next[above(x3[d.feature], d.thr)&1]
			}
			o := out[r-b : r-b+4]
			o[0], o[1], o[2], o[3] = n0, n1, n2, n3
		}
	}
	for ; r < end; r++ {
		out[r-b] = e.leaf(root, xs[r*f:(r+1)*f])
	}
}

// above is 0 when v ≤ thr, else 1 (NaN included).
func above[T number](v, thr T) int {
	if v <= thr {
		return 0
	}
	return 1
}

// leaf walks the tree at root for the row x and returns its leaf's index.
func (e *ensemble[T]) leaf(root int32, x []T) int32 {
	nodes := e.nodes
	i := root
	for nodes[i].mode != modeLeaf {
		i = nodes[i].child(x)
	}
	return i
}

// child returns the node the branch n sends the row x to, as ONNX Runtime
// decides it: its comparison in T, and a missing value (NaN) to the true
// branch where missing_value_tracks_true says so. Scoring and explaining
// both decide by it.
func (n *tnode[T]) child(x []T) int32 {
	v := x[n.feature]
	var c bool
	switch n.mode {
	case modeLEQ:
		c = v <= n.thr
	case modeLT:
		c = v < n.thr
	case modeGTE:
		c = v >= n.thr
	case modeGT:
		c = v > n.thr
	case modeEQ:
		c = v == n.thr
	default:
		c = v != n.thr
	}
	if c || n.missTrue && v != v {
		return n.t
	}
	return n.f
}

// treeAttrs are the attributes both tree ensemble operators share, read
// once whatever T is.
type treeAttrs struct {
	treeIDs, nodeIDs, features, trueIDs, falseIDs, missing []int64
	modes                                                  []string
	values                                                 []float32
	valuesT                                                *constant
	base                                                   []float32
	baseT                                                  *constant
	post                                                   postTransform
	// The leaf weights: targets (class ids), their tree and node ids.
	wTargets, wTrees, wNodes []int64
	weights                  []float32
	weightsT                 *constant
	// hitrates are nodes_hitrates (or nodes_hitrates_as_tensor), by node;
	// nil when the file gives none that can be read, noHitrates saying
	// why. Scoring ignores them, as ONNX Runtime does; explanations take
	// them as covers where they are ([coversOf]).
	hitrates   []float64
	noHitrates string
}

func readTreeAttrs(x *nodeCtx, prefix string) (*treeAttrs, error) {
	a := &treeAttrs{}
	var err error
	ints := func(name string, dst *[]int64) {
		if err == nil {
			*dst, err = x.intsAttr(name)
		}
	}
	ints("nodes_treeids", &a.treeIDs)
	ints("nodes_nodeids", &a.nodeIDs)
	ints("nodes_featureids", &a.features)
	ints("nodes_truenodeids", &a.trueIDs)
	ints("nodes_falsenodeids", &a.falseIDs)
	ints("nodes_missing_value_tracks_true", &a.missing)
	ints(prefix+"_ids", &a.wTargets)
	ints(prefix+"_treeids", &a.wTrees)
	ints(prefix+"_nodeids", &a.wNodes)
	if err != nil {
		return nil, err
	}
	if a.modes, err = x.stringsAttr("nodes_modes"); err != nil {
		return nil, err
	}
	if a.values, err = x.floatsAttr("nodes_values"); err != nil {
		return nil, err
	}
	if a.valuesT, err = x.tensorAttr("nodes_values_as_tensor"); err != nil {
		return nil, err
	}
	if a.base, err = x.floatsAttr("base_values"); err != nil {
		return nil, err
	}
	if a.baseT, err = x.tensorAttr("base_values_as_tensor"); err != nil {
		return nil, err
	}
	if a.weights, err = x.floatsAttr(prefix + "_weights"); err != nil {
		return nil, err
	}
	if a.weightsT, err = x.tensorAttr(prefix + "_weights_as_tensor"); err != nil {
		return nil, err
	}
	if a.post, err = parsePostTransform(x); err != nil {
		return nil, err
	}
	n := len(a.treeIDs)
	if n == 0 {
		return nil, x.errorf("it has no tree nodes")
	}
	if n > x.c.lim.MaxTreeNodes {
		return nil, x.limitf("it has %d tree nodes, more than the limit of %d", n, x.c.lim.MaxTreeNodes)
	}
	for _, l := range []struct {
		name string
		n    int
	}{{"nodes_nodeids", len(a.nodeIDs)}, {"nodes_featureids", len(a.features)}, {"nodes_truenodeids", len(a.trueIDs)},
		{"nodes_falsenodeids", len(a.falseIDs)}, {"nodes_modes", len(a.modes)}} {
		if l.n != n {
			return nil, x.errorf("%s has %d entries for %d nodes", l.name, l.n, n)
		}
	}
	if len(a.missing) != 0 && len(a.missing) != n {
		return nil, x.errorf("nodes_missing_value_tracks_true has %d entries for %d nodes", len(a.missing), n)
	}
	if (len(a.values) > 0) == (a.valuesT != nil) {
		return nil, x.errorf("it needs exactly one of nodes_values and nodes_values_as_tensor")
	}
	if a.valuesT != nil && a.valuesT.size() != n || a.valuesT == nil && len(a.values) != n {
		return nil, x.errorf("it has a threshold count different from its %d nodes", n)
	}
	if len(a.base) > 0 && a.baseT != nil || (a.weightsT != nil) == (len(a.weights) > 0) && len(a.wTargets) > 0 {
		return nil, x.errorf("it gives values both as floats and as a tensor, or none")
	}
	m := len(a.wTargets)
	wn := len(a.weights)
	if a.weightsT != nil {
		wn = a.weightsT.size()
	}
	if len(a.wTrees) != m || len(a.wNodes) != m || wn != m {
		return nil, x.errorf("its %s ids, tree ids, node ids and weights differ in count", prefix)
	}
	a.hitrates, a.noHitrates = readHitrates(x, n)
	return a, nil
}

// readHitrates reads the nodes' hitrates of a tree ensemble of n nodes,
// or says why it has none to explain with. A file whose hitrates cannot
// be read still loads: they change no prediction.
func readHitrates(x *nodeCtx, n int) ([]float64, string) {
	floats, errF := x.floatsAttr("nodes_hitrates")
	tensor, errT := x.tensorAttr("nodes_hitrates_as_tensor")
	var h []float64
	switch {
	case errF != nil || errT != nil:
		return nil, "its tree ensemble's nodes_hitrates cannot be read" + coversFix
	case floats != nil && tensor != nil:
		return nil, "its tree ensemble gives nodes_hitrates both as floats and as a tensor" + coversFix
	case tensor != nil && tensor.dt != dtFloat && tensor.dt != dtDouble:
		return nil, fmt.Sprintf("its tree ensemble's nodes_hitrates_as_tensor holds %s values, not numbers", tensor.dt) + coversFix
	case tensor != nil:
		h = tensor.asFloat64s()
	case floats != nil:
		h = make([]float64, len(floats))
		for i, v := range floats {
			h[i] = float64(v)
		}
	default:
		return nil, "its tree ensemble has no nodes_hitrates, the covers (how much training data reached each node) TreeSHAP weighs by" + coversFix
	}
	if len(h) != n {
		return nil, fmt.Sprintf("its tree ensemble's nodes_hitrates has %d entries for %d nodes", len(h), n) + coversFix
	}
	return h, ""
}

// checkTensorType checks that a *_as_tensor attribute holds T's type.
func checkTensorType[T number](x *nodeCtx, name string, c *constant) error {
	if c == nil {
		return nil
	}
	var zero T
	want := dtFloat
	if _, ok := any(zero).(float64); ok {
		want = dtDouble
	}
	if c.dt != want {
		return x.errorf("%s holds %s values, but a %s input reads %s ones", name, c.dt, map[dtype]string{dtFloat: "float", dtDouble: "double"}[want], want)
	}
	return nil
}

func floatsAs[T number](fs []float32, c *constant) []T {
	if c != nil {
		out := make([]T, c.size())
		for i := range out {
			if c.dt == dtDouble {
				out[i] = T(c.f64[i])
			} else {
				out[i] = T(c.f32[i])
			}
		}
		return out
	}
	out := make([]T, len(fs))
	for i, v := range fs {
		out[i] = T(v)
	}
	return out
}

// buildEnsemble flattens a's trees, checking every reference, and
// returns the ensemble with targets outputs (classes or targets).
func buildEnsemble[T number](x *nodeCtx, a *treeAttrs, targets, features int) (*ensemble[T], error) {
	for _, c := range []struct {
		name string
		c    *constant
	}{{"nodes_values_as_tensor", a.valuesT}, {"base_values_as_tensor", a.baseT}, {"weights_as_tensor", a.weightsT}} {
		if err := checkTensorType[T](x, c.name, c.c); err != nil {
			return nil, err
		}
	}
	n := len(a.treeIDs)
	thr := floatsAs[T](a.values, a.valuesT)
	e := &ensemble[T]{nodes: make([]tnode[T], n), targets: targets, post: a.post, base: floatsAs[T](a.base, a.baseT)}
	type key struct{ tree, node int64 }
	index := make(map[key]int32, n)
	seenTree := make(map[int64]bool)
	for i := range n {
		k := key{a.treeIDs[i], a.nodeIDs[i]}
		if _, dup := index[k]; dup {
			return nil, x.errorf("node %d of tree %d appears twice", k.node, k.tree)
		}
		index[k] = int32(i)
		if i == 0 || a.treeIDs[i] != a.treeIDs[i-1] {
			if seenTree[a.treeIDs[i]] {
				return nil, x.errorf("the nodes of tree %d are not listed together", a.treeIDs[i])
			}
			seenTree[a.treeIDs[i]] = true
			e.roots = append(e.roots, int32(i))
			if len(e.roots) > x.c.lim.MaxTrees {
				return nil, x.limitf("it has more than %d trees", x.c.lim.MaxTrees)
			}
		}
		mode, ok := modeNames[a.modes[i]]
		if !ok {
			return nil, x.errorf("node mode %q is not supported", a.modes[i])
		}
		nd := &e.nodes[i]
		nd.mode, nd.thr = mode, thr[i]
		nd.missTrue = len(a.missing) > 0 && a.missing[i] == 1
		if mode == modeLeaf {
			continue
		}
		if f := a.features[i]; f < 0 || f >= int64(features) {
			return nil, x.errorf("node %d of tree %d reads feature %d, but the input has %d", k.node, k.tree, f, features)
		}
		nd.feature = int32(a.features[i])
	}
	for i := range n {
		nd := &e.nodes[i]
		if nd.mode == modeLeaf {
			continue
		}
		for _, c := range []struct {
			id  int64
			dst *int32
		}{{a.trueIDs[i], &nd.t}, {a.falseIDs[i], &nd.f}} {
			j, ok := index[key{a.treeIDs[i], c.id}]
			if !ok {
				return nil, x.errorf("node %d of tree %d leads to node %d, which the tree does not have", a.nodeIDs[i], a.treeIDs[i], c.id)
			}
			*c.dst = j
		}
	}
	// The leaves' weights, in the order of (tree, node, position), as
	// ONNX Runtime sorts them.
	perNode := make([][]int, n)
	wv := floatsAs[T](a.weights, a.weightsT)
	for i := range a.wTargets {
		j, ok := index[key{a.wTrees[i], a.wNodes[i]}]
		if !ok {
			return nil, x.errorf("a weight is for node %d of tree %d, which does not exist", a.wNodes[i], a.wTrees[i])
		}
		if t := a.wTargets[i]; t < 0 || t >= int64(targets) {
			return nil, x.errorf("a weight is for target or class %d, but there are %d", t, targets)
		}
		if e.nodes[j].mode != modeLeaf {
			continue // ONNX Runtime ignores weights on branches
		}
		perNode[j] = append(perNode[j], i)
	}
	for i := range n {
		nd := &e.nodes[i]
		if nd.mode != modeLeaf {
			continue
		}
		if len(perNode[i]) == 0 {
			return nil, x.errorf("leaf %d of tree %d has no weight", a.nodeIDs[i], a.treeIDs[i])
		}
		nd.t, nd.f = int32(len(e.weights)), int32(len(perNode[i]))
		for _, w := range perNode[i] {
			e.weights = append(e.weights, weight[T]{target: int32(a.wTargets[w]), v: wv[w]})
		}
	}
	// Every tree must be a tree: walk each from its root, bounding depth,
	// so that a cycle or a shared node is refused rather than looped on.
	visited := make([]bool, n)
	type item struct {
		node  int32
		depth int
	}
	var stack []item
	e.depths = make([]int, len(e.roots))
	for ti, r := range e.roots {
		stack = append(stack[:0], item{r, 0})
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			e.depths[ti] = max(e.depths[ti], it.depth)
			if visited[it.node] {
				return nil, x.errorf("a tree reaches node %d twice (a cycle or a shared node)", a.nodeIDs[it.node])
			}
			visited[it.node] = true
			if it.depth > x.c.lim.MaxDepth {
				return nil, x.limitf("a tree is deeper than the limit of %d", x.c.lim.MaxDepth)
			}
			nd := &e.nodes[it.node]
			if nd.mode != modeLeaf {
				if a.treeIDs[nd.t] != a.treeIDs[it.node] || a.treeIDs[nd.f] != a.treeIDs[it.node] {
					return nil, x.errorf("a node leads out of its tree")
				}
				stack = append(stack, item{nd.t, it.depth + 1}, item{nd.f, it.depth + 1})
			}
		}
	}
	e.leq = true
	for i := range e.nodes {
		if nd := &e.nodes[i]; nd.mode != modeLeaf && (nd.mode != modeLEQ || nd.missTrue) {
			e.leq = false
		}
	}
	if e.leq {
		e.fast = make([]fnode[T], n)
		for i := range e.nodes {
			nd, fn := &e.nodes[i], &e.fast[i]
			if nd.mode == modeLeaf {
				fn.next = [2]int32{int32(i), int32(i)}
				continue
			}
			fn.thr, fn.feature, fn.next = nd.thr, nd.feature, [2]int32{nd.t, nd.f}
		}
	}
	x.c.trees += len(e.roots)
	return e, nil
}

// rowsAs returns the input's values as T, converting when needed.
func rowsAs[T number](dt dtype, t *tensor, n int) []T {
	var zero T
	switch any(zero).(type) {
	case float32:
		if dt == dtFloat {
			return any(t.f32[:n]).([]T)
		}
	case float64:
		if dt == dtDouble {
			return any(t.f64[:n]).([]T)
		}
	}
	out := make([]T, n)
	for i := range out {
		switch dt {
		case dtFloat:
			out[i] = T(t.f32[i])
		case dtDouble:
			out[i] = T(t.f64[i])
		default:
			out[i] = T(t.i64[i])
		}
	}
	return out
}

// blockRows is how many rows are scored together, tree by tree.
const blockRows = 128

func compileTreeRegressor(x *nodeCtx) (kernel, error) {
	in, f, err := rowInput(x, dtFloat, dtDouble, dtInt64, dtInt32)
	if err != nil {
		return nil, err
	}
	a, err := readTreeAttrs(x, "target")
	if err != nil {
		return nil, err
	}
	targets, err := x.intAttr("n_targets", 0)
	if err != nil {
		return nil, err
	}
	if targets < 1 || targets > int64(x.c.lim.MaxFeatures) {
		return nil, x.errorf("n_targets is %d", targets)
	}
	agg, err := x.stringAttr("aggregate_function", "SUM")
	if err != nil {
		return nil, err
	}
	if agg != "SUM" && agg != "AVERAGE" && agg != "MIN" && agg != "MAX" {
		return nil, x.errorf("aggregate_function %q is not supported", agg)
	}
	out, err := x.out(0, dtFloat, []int{int(targets)})
	if err != nil {
		return nil, err
	}
	if in.dt == dtDouble {
		e, err := buildEnsemble[float64](x, a, int(targets), f)
		if err != nil {
			return nil, err
		}
		regressorTrees(x, e, a, in, out, agg)
		return regressorKernel(e, in, out, f, agg, x.idx), nil
	}
	e, err := buildEnsemble[float32](x, a, int(targets), f)
	if err != nil {
		return nil, err
	}
	regressorTrees(x, e, a, in, out, agg)
	return regressorKernel(e, in, out, f, agg, x.idx), nil
}

// regressorKernel computes a tree ensemble's targets, and keeps their raw
// values (before the post-transform) where the state asks for node's.
func regressorKernel[T number](e *ensemble[T], in, out *value, f int, agg string, node int) kernel {
	if out == nil {
		return func(*state) {}
	}
	k := e.targets
	var origin T
	if len(e.base) == 1 {
		origin = e.base[0]
	}
	useBase := len(e.base) == k
	ntrees := T(len(e.roots))
	return func(s *state) {
		xs := rowsAs[T](in.dt, &s.vals[in.slot], s.rows*f)
		dst := make([]float32, s.rows*k)
		var dst64 []float64 // a double output, as TreeEnsemble answers a double input
		if out.dt == dtDouble {
			dst64 = make([]float64, s.rows*k)
		}
		scores := make([]T, blockRows*k)
		has := make([]bool, blockRows*k)
		leaves := make([]int32, blockRows)
		row := make([]T, k)
		raw := s.keepRaw(node, k)
		for b := 0; b < s.rows; b += blockRows {
			end := min(s.rows, b+blockRows)
			clear(scores)
			clear(has)
			for ti := range e.roots {
				e.leaves(ti, xs, f, b, end, leaves)
				for r := b; r < end; r++ {
					leaf := &e.nodes[leaves[r-b]]
					sc, hs := scores[(r-b)*k:(r-b+1)*k], has[(r-b)*k:(r-b+1)*k]
					if k == 1 {
						// One target: ONNX Runtime reads a leaf's first weight.
						w := e.weights[leaf.t].v
						switch agg {
						case "SUM", "AVERAGE":
							sc[0] += w
						case "MIN":
							if !hs[0] || w < sc[0] {
								sc[0] = w
							}
						case "MAX":
							if !hs[0] || w > sc[0] {
								sc[0] = w
							}
						}
						hs[0] = true
						continue
					}
					for _, w := range e.weights[leaf.t : leaf.t+leaf.f] {
						t := w.target
						switch agg {
						case "SUM", "AVERAGE":
							sc[t] += w.v
						case "MIN":
							if !hs[t] || w.v < sc[t] {
								sc[t] = w.v
							}
						case "MAX":
							if !hs[t] || w.v > sc[t] {
								sc[t] = w.v
							}
						}
						hs[t] = true
					}
				}
			}
			for r := b; r < end; r++ {
				sc, hs := scores[(r-b)*k:(r-b+1)*k], has[(r-b)*k:(r-b+1)*k]
				if k == 1 {
					v := sc[0]
					switch agg {
					case "SUM":
						v += origin
					case "AVERAGE":
						v = v/ntrees + origin
					default:
						if hs[0] {
							v += origin
						} else {
							v = origin
						}
					}
					if raw != nil {
						raw[r] = float64(v)
					}
					o := float32(v)
					if e.post == postProbit {
						o = probit32(float32(v))
					}
					dst[r] = o
					if dst64 != nil {
						dst64[r] = float64(v)
						if e.post == postProbit {
							dst64[r] = float64(o)
						}
					}
					continue
				}
				for t := range k {
					v := sc[t]
					switch agg {
					case "SUM":
						if useBase {
							v += e.base[t]
						}
					case "AVERAGE":
						v /= ntrees
						if useBase {
							v += e.base[t]
						}
					default:
						if !hs[t] {
							v = 0
						}
						if useBase {
							v = e.base[t] + v
						}
					}
					row[t] = v
					if raw != nil {
						raw[r*k+t] = float64(v)
					}
				}
				o := dst[r*k : (r+1)*k]
				for t, v := range row {
					o[t] = float32(v)
				}
				applyTransform(e.post, o)
				if dst64 != nil {
					// The transforms compute in float; NONE keeps the sums.
					for t := range k {
						if e.post == postNone {
							dst64[r*k+t] = float64(row[t])
						} else {
							dst64[r*k+t] = float64(o[t])
						}
					}
				}
			}
		}
		if dst64 != nil {
			s.vals[out.slot] = tensor{f64: dst64}
			return
		}
		s.vals[out.slot] = tensor{f32: dst}
	}
}

func compileTreeClassifier(x *nodeCtx) (kernel, error) {
	in, f, err := rowInput(x, dtFloat, dtDouble, dtInt64, dtInt32)
	if err != nil {
		return nil, err
	}
	a, err := readTreeAttrs(x, "class")
	if err != nil {
		return nil, err
	}
	cl, err := readClassLabels(x, "classlabels_int64s")
	if err != nil {
		return nil, err
	}
	c := len(cl.labels)
	if c < 2 {
		return nil, x.errorf("it has a single class")
	}
	nb := len(a.base)
	if a.baseT != nil {
		nb = a.baseT.size()
	}
	if nb != 0 && nb != c && !(c == 2 && nb == 1) {
		return nil, x.errorf("it has %d base values for %d classes", nb, c)
	}
	if err := cl.outputs(x); err != nil {
		return nil, err
	}
	if in.dt == dtDouble {
		e, err := buildEnsemble[float64](x, a, c, f)
		if err != nil {
			return nil, err
		}
		classifierTrees(x, e, a, in, cl)
		return classifierKernel(e, a, in, f, cl, x.idx), nil
	}
	e, err := buildEnsemble[float32](x, a, c, f)
	if err != nil {
		return nil, err
	}
	classifierTrees(x, e, a, in, cl)
	return classifierKernel(e, a, in, f, cl, x.idx), nil
}

// classifierKernel computes a tree ensemble's class scores and labels, and
// keeps the scores before the post-transform where the state asks for
// node's.
func classifierKernel[T number](e *ensemble[T], a *treeAttrs, in *value, f int, cl *classifier, node int) kernel {
	c := e.targets
	classes := make(map[int64]bool)
	allPositive := true
	for i, id := range a.wTargets {
		classes[id] = true
		var w float64
		if a.weightsT != nil {
			w = a.weightsT.asFloat64s()[i]
		} else {
			w = float64(a.weights[i])
		}
		if w < 0 {
			allPositive = false
		}
	}
	binary := c == 2 && len(classes) == 1
	return func(s *state) {
		xs := rowsAs[T](in.dt, &s.vals[in.slot], s.rows*f)
		z := make([]float32, s.rows*c)
		scores := make([]T, blockRows*c)
		has := make([]bool, blockRows*c)
		leaves := make([]int32, blockRows)
		raw := s.keepRaw(node, c)
		for b := 0; b < s.rows; b += blockRows {
			end := min(s.rows, b+blockRows)
			clear(scores)
			clear(has)
			for ti := range e.roots {
				e.leaves(ti, xs, f, b, end, leaves)
				for r := b; r < end; r++ {
					leaf := &e.nodes[leaves[r-b]]
					sc, hs := scores[(r-b)*c:(r-b+1)*c], has[(r-b)*c:(r-b+1)*c]
					for _, w := range e.weights[leaf.t : leaf.t+leaf.f] {
						sc[w.target] += w.v
						hs[w.target] = true
					}
				}
			}
			for r := b; r < end; r++ {
				var rr []float64
				if raw != nil {
					rr = raw[r*c : (r+1)*c]
				}
				finishClass(e, scores[(r-b)*c:(r-b+1)*c], has[(r-b)*c:(r-b+1)*c], z[r*c:(r+1)*c], rr, binary, allPositive)
			}
		}
		if cl.zv != nil {
			s.vals[cl.zv.slot] = tensor{f32: z}
		}
		cl.writeLabels(s, func(r int) int { return argmax(z[r*c : (r+1)*c]) })
	}
}

// finishClass turns one row's summed class scores into its output
// scores z, following ONNX Runtime's TreeEnsembleClassifier: base values,
// the two-class special cases and the post-transform. raw, when not nil,
// receives the scores the post-transform is applied to.
func finishClass[T number](e *ensemble[T], sc []T, hs []bool, z []float32, raw []float64, binary, allPositive bool) {
	c := len(sc)
	if c > 2 {
		for k, b := range e.base {
			sc[k] += b
		}
		for k, v := range sc {
			z[k] = float32(v)
			if raw != nil {
				raw[k] = float64(v)
			}
		}
		applyTransform(e.post, z)
		return
	}
	size := 2
	extra := -1
	switch len(e.base) {
	case 2:
		if hs[1] {
			sc[1] = e.base[1] + sc[0]
			sc[0] = -sc[1]
			hs[1] = true
		} else {
			sc[1] += e.base[1]
			sc[0] += e.base[0]
		}
	case 1:
		sc[0] += e.base[0]
		if !hs[1] {
			size = 1
		}
	case 0:
		extra = 3
		if !hs[1] {
			size = 1
		}
	}
	var pos T
	switch {
	case size == 2 && hs[1]:
		pos = sc[1]
	case hs[0]:
		pos = sc[0]
	}
	if binary {
		switch {
		case allPositive && pos > 0.5:
			extra = 0
		case allPositive:
			extra = 1
		case pos > 0:
			extra = 2
		default:
			extra = 3
		}
	}
	// ONNX Runtime reads a class no weight reached as 0, whatever was
	// added to its score.
	for k := range sc {
		if !hs[k] {
			sc[k] = 0
		}
		if raw != nil {
			raw[k] = float64(sc[k])
		}
	}
	if size == 2 {
		z[0], z[1] = float32(sc[0]), float32(sc[1])
		applyTransform(e.post, z)
		return
	}
	s0 := sc[0]
	switch {
	case e.post == postProbit:
		z[0], z[1] = probit32(float32(s0)), 0
	case extra == 0 || extra == 1:
		z[0], z[1] = float32(1-s0), float32(s0)
	case extra == 2 || extra == 3:
		if e.post == postLogistic {
			z[0], z[1] = logistic32(float32(-s0)), logistic32(float32(s0))
		} else {
			z[0], z[1] = float32(-s0), float32(s0)
		}
	default:
		z[0], z[1] = float32(s0), 0
	}
}

// compileTreeEnsemble compiles the TreeEnsemble of ai.onnx.ml opset 5 the
// way ONNX Runtime runs it: rewritten into the form of
// TreeEnsembleRegressor (a BRANCH_MEMBER node unrolled into a chain of
// BRANCH_EQ nodes), computed in the input's type, answering that type.
func compileTreeEnsemble(x *nodeCtx) (kernel, error) {
	if x.version < 5 {
		return nil, x.errorf("TreeEnsemble needs opset 5 of ai.onnx.ml, the model imports %d", x.version)
	}
	in, f, err := rowInput(x, dtFloat, dtDouble)
	if err != nil {
		return nil, err
	}
	x.ignore("nodes_hitrates")
	var ints = map[string][]int64{}
	for _, name := range []string{"leaf_targetids", "nodes_falseleafs", "nodes_falsenodeids", "nodes_featureids",
		"nodes_missing_value_tracks_true", "nodes_trueleafs", "nodes_truenodeids", "tree_roots"} {
		if ints[name], err = x.intsAttr(name); err != nil {
			return nil, err
		}
	}
	agg, err := x.intAttr("aggregate_function", 1)
	if err != nil {
		return nil, err
	}
	post, err := x.intAttr("post_transform", 0)
	if err != nil {
		return nil, err
	}
	targets, err := x.intAttr("n_targets", 0)
	if err != nil {
		return nil, err
	}
	tensors := map[string]*constant{}
	for _, name := range []string{"leaf_weights", "membership_values", "nodes_modes", "nodes_splits"} {
		if tensors[name], err = x.tensorAttr(name); err != nil {
			return nil, err
		}
	}
	aggs := []string{"AVERAGE", "SUM", "MIN", "MAX"}
	if agg < 0 || agg >= int64(len(aggs)) {
		return nil, x.errorf("aggregate_function %d is not supported", agg)
	}
	posts := []postTransform{postNone, postSoftmax, postLogistic, postSoftmaxZero, postProbit}
	if post < 0 || post >= int64(len(posts)) {
		return nil, x.errorf("post_transform %d is not supported", post)
	}
	if targets < 1 || targets > int64(x.c.lim.MaxFeatures) {
		return nil, x.errorf("n_targets is %d", targets)
	}
	modes, splits, weights := tensors["nodes_modes"], tensors["nodes_splits"], tensors["leaf_weights"]
	if modes == nil || splits == nil || weights == nil {
		return nil, x.errorf("it needs nodes_modes, nodes_splits and leaf_weights")
	}
	for _, t := range []*constant{splits, weights, tensors["membership_values"]} {
		if t != nil && t.dt != in.dt {
			return nil, x.errorf("its tensor %q holds %s values for a %s input", t.name, t.dt, in.dt)
		}
	}
	if modes.dt != dtInt32 && modes.dt != dtInt64 && !(modes.dt == dtBool) {
		return nil, x.errorf("nodes_modes must hold uint8 values")
	}
	n := len(ints["nodes_featureids"])
	for _, name := range []string{"nodes_falseleafs", "nodes_falsenodeids", "nodes_trueleafs", "nodes_truenodeids"} {
		if len(ints[name]) != n {
			return nil, x.errorf("%s has %d entries for %d nodes", name, len(ints[name]), n)
		}
	}
	if modes.size() != n || splits.size() != n || (len(ints["nodes_missing_value_tracks_true"]) != 0 && len(ints["nodes_missing_value_tracks_true"]) != n) {
		return nil, x.errorf("its node attributes differ in length")
	}
	if len(ints["leaf_targetids"]) != weights.size() {
		return nil, x.errorf("it has %d leaf targets and %d leaf weights", len(ints["leaf_targetids"]), weights.size())
	}
	v5 := &treeV5{x: x, ints: ints, modes: modes.i64, splits: splits.asFloat64s(), weights: weights.asFloat64s(),
		nleaves: weights.size(), a: &treeAttrs{post: posts[post]}}
	if m := tensors["membership_values"]; m != nil {
		v5.members = v5.membership(m.asFloat64s())
	}
	for t, root := range ints["tree_roots"] {
		if root < 0 || root >= int64(n) {
			return nil, x.errorf("tree root %d is not a node", root)
		}
		isLeaf := ints["nodes_falsenodeids"][root] == ints["nodes_truenodeids"][root]
		if _, err := v5.add(int(root), int64(t), 0, 0, isLeaf, 0); err != nil {
			return nil, err
		}
	}
	if len(v5.a.treeIDs) == 0 {
		return nil, x.errorf("it has no trees")
	}
	v5.a.valuesT = &constant{dt: in.dt, dims: []int{len(v5.thr)}}
	v5.a.weightsT = &constant{dt: in.dt, dims: []int{len(v5.w)}}
	out, err := x.out(0, in.dt, []int{int(targets)})
	if err != nil {
		return nil, err
	}
	if out != nil {
		// Its nodes_hitrates are its branches' alone: a leaf has none.
		out.scores = &treeNode{node: x.idx, in: in, out: out, groups: 1, why: "it is a TreeEnsemble of ai.onnx.ml 5, " +
			"whose nodes_hitrates give its branches' covers but not its leaves', which TreeSHAP weighs by too"}
	}
	if in.dt == dtDouble {
		v5.a.valuesT.f64, v5.a.weightsT.f64 = v5.thr, v5.w
		e, err := buildEnsemble[float64](x, v5.a, int(targets), f)
		if err != nil {
			return nil, err
		}
		return regressorKernel(e, in, out, f, aggs[agg], x.idx), nil
	}
	v5.a.valuesT.f32, v5.a.weightsT.f32 = toFloat32s(v5.thr), toFloat32s(v5.w)
	e, err := buildEnsemble[float32](x, v5.a, int(targets), f)
	if err != nil {
		return nil, err
	}
	return regressorKernel(e, in, out, f, aggs[agg], x.idx), nil
}

func toFloat32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// treeV5 rewrites TreeEnsemble's trees into treeAttrs, node by node in
// the order ONNX Runtime numbers them: a node, its true subtree, then its
// false one.
type treeV5 struct {
	x       *nodeCtx
	ints    map[string][]int64
	modes   []int64
	splits  []float64
	weights []float64
	nleaves int
	members [][]float64 // a BRANCH_MEMBER node's values, by node
	a       *treeAttrs
	thr, w  []float64
}

// membership splits the NaN-separated membership values by node.
func (v *treeV5) membership(vals []float64) [][]float64 {
	out := make([][]float64, len(v.modes))
	k := 0
	for i, m := range v.modes {
		if m != 6 {
			continue
		}
		for k < len(vals) && !math.IsNaN(vals[k]) {
			out[i] = append(out[i], vals[k])
			k++
		}
		k++
	}
	return out
}

var v5Modes = []string{"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"}

// add writes node id (a leaf index when leaf) of tree as nodeID, with
// member the position in a BRANCH_MEMBER node's values, and returns the
// last node id its subtree used.
func (v *treeV5) add(id int, tree, nodeID int64, member int, leaf bool, depth int) (int64, error) {
	x := v.x
	if depth > x.c.lim.MaxDepth {
		return 0, x.limitf("a tree is deeper than the limit of %d", x.c.lim.MaxDepth)
	}
	if len(v.a.treeIDs) >= x.c.lim.MaxTreeNodes {
		return 0, x.limitf("it has more than %d tree nodes", x.c.lim.MaxTreeNodes)
	}
	a := v.a
	a.treeIDs = append(a.treeIDs, tree)
	a.nodeIDs = append(a.nodeIDs, nodeID)
	hasMissing := len(v.ints["nodes_missing_value_tracks_true"]) > 0
	if leaf {
		if id < 0 || id >= v.nleaves {
			return 0, x.errorf("leaf %d does not exist", id)
		}
		a.modes = append(a.modes, "LEAF")
		a.features, a.trueIDs, a.falseIDs = append(a.features, 0), append(a.trueIDs, 0), append(a.falseIDs, 0)
		if hasMissing {
			a.missing = append(a.missing, 0)
		}
		v.thr = append(v.thr, 0)
		a.wTargets = append(a.wTargets, v.ints["leaf_targetids"][id])
		a.wTrees, a.wNodes = append(a.wTrees, tree), append(a.wNodes, nodeID)
		v.w = append(v.w, v.weights[id])
		return nodeID, nil
	}
	if id < 0 || id >= len(v.modes) {
		return 0, x.errorf("node %d does not exist", id)
	}
	a.features = append(a.features, v.ints["nodes_featureids"][id])
	if hasMissing {
		a.missing = append(a.missing, v.ints["nodes_missing_value_tracks_true"][id])
	}
	mode := v.modes[id]
	switch {
	case mode == 6:
		if v.members == nil || member >= len(v.members[id]) {
			return 0, x.errorf("node %d is BRANCH_MEMBER without membership values", id)
		}
		a.modes = append(a.modes, "BRANCH_EQ")
		v.thr = append(v.thr, v.members[id][member])
	case mode >= 0 && mode < 6:
		a.modes = append(a.modes, v5Modes[mode])
		v.thr = append(v.thr, v.splits[id])
	default:
		return 0, x.errorf("node mode %d is not supported", mode)
	}
	at := len(a.falseIDs)
	a.falseIDs = append(a.falseIDs, 0)
	a.trueIDs = append(a.trueIDs, nodeID+1)
	last, err := v.add(int(v.ints["nodes_truenodeids"][id]), tree, nodeID+1, 0, v.ints["nodes_trueleafs"][id] != 0, depth+1)
	if err != nil {
		return 0, err
	}
	a.falseIDs[at] = last + 1
	if mode == 6 && member+1 < len(v.members[id]) {
		return v.add(id, tree, last+1, member+1, false, depth+1)
	}
	return v.add(int(v.ints["nodes_falsenodeids"][id]), tree, last+1, 0, v.ints["nodes_falseleafs"][id] != 0, depth+1)
}
