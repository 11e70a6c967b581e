package xgboost

import (
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/scorehub/scorehub/registry/process"
)

// node is one node of a flattened tree. Trees are renumbered breadth first,
// so a split's right child always follows its left one. A leaf is a split
// that sends every value to itself: its threshold is NaN, so that no value
// is >= it, and its left child is itself. Walking a tree is then the same
// step, with no test for leaves, repeated as deep as the tree is.
type node struct {
	// cond is a split's threshold: a value >= cond goes right, a smaller
	// one left. NaN at a leaf.
	cond float32
	// feat is the feature a split reads; 0 at a leaf.
	feat int32
	// left is the left child; the right child is left+1. A leaf's own
	// index.
	left int32
	// right is 1 when a missing value goes right, else 0.
	right int32
}

// tree is one flattened tree.
type tree struct {
	nodes  []node
	values []float32 // leaf values, by node; 0 at a split
	depth  int       // the longest path from the root to a leaf, in splits
	group  int32     // the output group (class) the tree adds to
	w      float32   // dart's weight_drop; 1 for gbtree
	// catOf holds, per node, the index in cats of a categorical split's
	// categories, or -1; nil when the tree has no categorical split.
	catOf []int32
	// cats are the sorted category codes each categorical split sends
	// right.
	cats [][]int32
	// cover is each node's sum_hessian, what explanations weigh its
	// children by; nil when the file holds none.
	cover []float32
}

// model is a checked, flattened XGBoost model ready to score. It is
// immutable once built and safe for concurrent use.
type model struct {
	trees   []tree
	groups  int
	base    []float32 // the margin each group starts from
	obj     objective
	objName string
	nFeat   int
	inputs  []process.ColumnSpec // the features' columns, in the model's order
	dart    bool                 // trees are weighed by their w
	// weights are a gblinear model's: weights[f*groups+g] multiplies
	// feature f for group g, weights[nFeat*groups+g] is g's bias. Nil for
	// tree models.
	weights []float32
	chunks  []chunk   // the trees one row walks lanes at a time
	scratch sync.Pool // *scratch
	shap    shapTrees // the trees as explanations walk them, built on first use
}

// maxCategory is the first category code XGBoost treats as invalid (2^24,
// the first integer float32 cannot hold next to its neighbour).
const maxCategory = 1 << 24

// build checks a decoded file and flattens it.
func build(f *file, lim Limits) (*model, error) {
	if len(f.version) > 0 && (f.version[0] < 1 || f.version[0] > 3) {
		return nil, invalid("the file was written by %s; this reader knows the formats of XGBoost 1.0 to 3.x", producer(f.version))
	}
	switch f.booster {
	case "gbtree", "dart", "gblinear":
	case "":
		return nil, invalid("the file names no gradient_booster")
	default:
		return nil, invalid("gradient booster %q is not supported: only gbtree, dart and gblinear are read", f.booster)
	}
	if f.objective == "" {
		return nil, invalid("the file names no objective")
	}
	obj, ok := lookupObjective(f.objective)
	if !ok {
		return nil, invalid("%s", unsupportedObjective(f.objective))
	}
	if f.numTarget > 1 {
		return nil, invalid("the model has %d targets; multi-target models are not supported", f.numTarget)
	}
	switch {
	case f.numFeature < 1:
		return nil, invalid("learner_model_param.num_feature is %d; the model must read at least one feature", f.numFeature)
	case f.numFeature > int64(lim.MaxFeatures):
		return nil, process.ModelErrorf(process.ErrModelLimit,
			"the model has %d features, more than the limit of %d", f.numFeature, lim.MaxFeatures)
	}
	groups := 1
	if obj.multi {
		if f.numClass < 2 {
			return nil, invalid("objective %q needs num_class of at least 2, not %d", f.objective, f.numClass)
		}
		if f.numClass > int64(lim.MaxClasses) {
			return nil, process.ModelErrorf(process.ErrModelLimit,
				"the model has %d classes, more than the limit of %d", f.numClass, lim.MaxClasses)
		}
		groups = int(f.numClass)
	} else if f.numClass > 1 {
		return nil, invalid("objective %q has one output, but num_class is %d", f.objective, f.numClass)
	}
	if f.booster == "gblinear" {
		return linear(f, obj, groups)
	}
	if !f.haveTrees {
		return nil, invalid("the gradient booster holds no trees")
	}
	if len(f.treeInfo) != len(f.trees) {
		return nil, invalid("tree_info has %d entries for %d trees", len(f.treeInfo), len(f.trees))
	}
	if f.numParallel < 1 {
		return nil, invalid("num_parallel_tree is %d; it must be at least 1", f.numParallel)
	}
	if f.indptr != nil {
		if err := checkIndptr(f.indptr, len(f.trees)); err != nil {
			return nil, err
		}
	}
	// A dart booster weighs its trees; since XGBoost 3.3 a gbtree may
	// hold dart's weights too.
	m := &model{groups: groups, obj: obj, objName: f.objective, nFeat: int(f.numFeature),
		dart: f.booster == "dart" || len(f.weightDrop) > 0}
	if m.dart && len(f.weightDrop) != len(f.trees) {
		return nil, invalid("weight_drop has %d weights for %d trees", len(f.weightDrop), len(f.trees))
	}
	base, err := baseMargins(f, obj, groups)
	if err != nil {
		return nil, err
	}
	m.base = base
	m.trees = make([]tree, len(f.trees))
	for i := range f.trees {
		g := f.treeInfo[i]
		if g < 0 || g >= int64(groups) {
			return nil, invalid("tree_info gives tree %d the output group %d; the model has %d", i, g, groups)
		}
		t, err := flatten(i, &f.trees[i], m.nFeat, lim)
		if err != nil {
			return nil, err
		}
		t.group, t.w = int32(g), 1
		if m.dart {
			t.w = f.weightDrop[i]
		}
		m.trees[i] = t
		f.trees[i] = rawTree{} // let the arrays go as soon as they are flattened
	}
	m.chunks = chunksOf(m.trees)
	return m, nil
}

// linear builds a gblinear model: a weight per feature and output group,
// then a bias per group.
func linear(f *file, obj objective, groups int) (*model, error) {
	nf := int(f.numFeature)
	if len(f.weights) != (nf+1)*groups {
		return nil, invalid("gblinear holds %d weights; %d features and %d outputs need %d", len(f.weights), nf, groups, (nf+1)*groups)
	}
	base, err := baseMargins(f, obj, groups)
	if err != nil {
		return nil, err
	}
	return &model{groups: groups, obj: obj, objName: f.objective, nFeat: nf, base: base, weights: f.weights}, nil
}

// checkIndptr checks iteration_indptr: where each boosting round's trees
// start, from 0 to the number of trees.
func checkIndptr(p []int64, trees int) error {
	if len(p) == 0 || p[0] != 0 || p[len(p)-1] != int64(trees) {
		return invalid("iteration_indptr does not run from 0 to the %d trees", trees)
	}
	for i := 1; i < len(p); i++ {
		if p[i] < p[i-1] {
			return invalid("iteration_indptr decreases at round %d", i)
		}
	}
	return nil
}

// baseMargins returns the margin each output group starts from:
// base_score through the objective's link, one value for every group or,
// as XGBoost 3.1 writes a multi-class model's, one per class.
func baseMargins(f *file, obj objective, groups int) ([]float32, error) {
	scores := f.baseScore
	switch {
	case len(scores) == 0:
		scores = []float32{0.5} // XGBoost's default
	case len(scores) != 1 && len(scores) != groups:
		return nil, invalid("base_score holds %d values for a model of %d outputs", len(scores), groups)
	}
	base := make([]float32, groups)
	for g := range base {
		p := scores[min(g, len(scores)-1)]
		b, ok := obj.link.margin(p)
		if !ok || math.IsInf(float64(b), 0) {
			return nil, invalid("base_score %v is outside the range objective %q allows", p, f.objective)
		}
		base[g] = b
	}
	return base, nil
}

// flatten checks tree i and renumbers its nodes breadth first.
func flatten(i int, rt *rawTree, nFeat int, lim Limits) (tree, error) {
	n := len(rt.left)
	if n == 0 {
		return tree{}, invalid("tree %d has no nodes", i)
	}
	for _, a := range []struct {
		name string
		n    int
	}{{"right_children", len(rt.right)}, {"split_indices", len(rt.splitIndex)},
		{"split_conditions", len(rt.cond)}, {"default_left", len(rt.defaultLeft)}} {
		if a.n != n {
			return tree{}, invalid("tree %d has %d left_children but %d %s", i, n, a.n, a.name)
		}
	}
	if len(rt.splitType) != 0 && len(rt.splitType) != n {
		return tree{}, invalid("tree %d has %d left_children but %d split_type", i, n, len(rt.splitType))
	}
	if rt.haveNumNodes && rt.numNodes != int64(n) {
		return tree{}, invalid("tree %d says it has %d nodes but holds %d", i, rt.numNodes, n)
	}
	if rt.leafVector > 1 {
		return tree{}, invalid("tree %d has leaves of %d values (a multi-target tree); they are not supported", i, rt.leafVector)
	}
	catSets, err := categories(i, rt, n)
	if err != nil {
		return tree{}, err
	}
	t := tree{nodes: make([]node, 0, n), values: make([]float32, 0, n)}
	switch len(rt.hess) {
	case 0:
	case n:
		t.cover = make([]float32, 0, n)
	default:
		return tree{}, invalid("tree %d has %d left_children but %d sum_hessian", i, n, len(rt.hess))
	}
	if catSets != nil {
		t.catOf = make([]int32, 0, n)
	}
	// order[k] is the file's index of new node k; depth[k] its depth.
	order := make([]int32, 1, n)
	depth := make([]int32, 1, n)
	seen := make([]bool, n)
	seen[0] = true
	for k := 0; k < len(order); k++ {
		old := order[k]
		l, r := rt.left[old], rt.right[old]
		nd := node{cond: float32(math.NaN()), left: int32(k)}
		value := rt.cond[old]
		cat := int32(-1)
		if l != -1 || r != -1 {
			for _, c := range [2]int32{l, r} {
				if c < 0 || int(c) >= n {
					return tree{}, invalid("tree %d node %d has child %d; the tree has %d nodes", i, old, c, n)
				}
				if seen[c] {
					return tree{}, invalid("tree %d node %d has child %d, which is reached twice (a cycle or a shared node)", i, old, c)
				}
				seen[c] = true
			}
			if r != l+1 {
				// XGBoost's own predictors differ on such a tree: recent
				// ones take left+1 as the right child, older ones the
				// right child the file names. XGBoost never writes one.
				return tree{}, invalid("tree %d node %d has children %d and %d; XGBoost numbers a right child right after the left", i, old, l, r)
			}
			f := rt.splitIndex[old]
			if f < 0 || int(f) >= nFeat {
				return tree{}, invalid("tree %d node %d splits on feature %d; the model has %d features", i, old, uint32(f), nFeat)
			}
			d := depth[k] + 1
			if int(d) > lim.MaxDepth {
				return tree{}, process.ModelErrorf(process.ErrModelLimit,
					"tree %d is deeper than the limit of %d", i, lim.MaxDepth)
			}
			nd.cond, nd.feat, value = rt.cond[old], f, 0
			if nd.cond != nd.cond {
				// XGBoost sends every value right of a NaN threshold.
				nd.cond = float32(math.Inf(-1))
			}
			nd.left = int32(len(order))
			if !rt.defaultLeft[old] {
				nd.right = 1
			}
			t.depth = max(t.depth, int(d))
			order = append(order, l, r)
			depth = append(depth, d, d)
			if len(rt.splitType) > 0 && rt.splitType[old] == 1 {
				cat = int32(len(t.cats))
				t.cats = append(t.cats, catSets[old])
			}
		}
		t.nodes = append(t.nodes, nd)
		t.values = append(t.values, value)
		if t.cover != nil {
			t.cover = append(t.cover, rt.hess[old])
		}
		if t.catOf != nil {
			t.catOf = append(t.catOf, cat)
		}
	}
	return t, nil
}

// categories returns, by node, the categories each categorical split of
// tree i sends right, or nil when the tree has no categorical split.
func categories(i int, rt *rawTree, n int) (map[int32][]int32, error) {
	hasCat := slices.Contains(rt.splitType, 1)
	if !hasCat {
		if len(rt.catNodes) > 0 {
			return nil, invalid("tree %d lists categories but has no categorical split", i)
		}
		return nil, nil
	}
	if len(rt.catSegments) != len(rt.catNodes) || len(rt.catSizes) != len(rt.catNodes) {
		return nil, invalid("tree %d has %d categories_nodes, %d categories_segments and %d categories_sizes",
			i, len(rt.catNodes), len(rt.catSegments), len(rt.catSizes))
	}
	sets := make(map[int32][]int32, len(rt.catNodes))
	// Segments follow one another, as XGBoost writes them, so that no
	// category is copied twice however the file points at them.
	next := int64(0)
	for j, nd := range rt.catNodes {
		if nd < 0 || int(nd) >= n || rt.splitType[nd] != 1 {
			return nil, invalid("tree %d lists categories for node %d, which is not a categorical split", i, nd)
		}
		if _, dup := sets[nd]; dup {
			return nil, invalid("tree %d lists categories for node %d twice", i, nd)
		}
		beg, size := rt.catSegments[j], rt.catSizes[j]
		if beg != next || size < 0 || size > int64(len(rt.cats))-beg {
			return nil, invalid("tree %d node %d: its categories (from %d, %d of them) do not follow the previous node's within the %d listed", i, nd, beg, size, len(rt.cats))
		}
		next += size
		set := slices.Clone(rt.cats[beg : beg+size])
		for _, c := range set {
			if c < 0 || c >= maxCategory {
				return nil, invalid("tree %d node %d lists category %d; categories run from 0 to %d", i, nd, uint32(c), maxCategory-1)
			}
		}
		slices.Sort(set)
		sets[nd] = slices.Compact(set)
	}
	for nd, st := range rt.splitType {
		if st == 1 && rt.left[nd] != -1 {
			if _, ok := sets[int32(nd)]; !ok {
				sets[int32(nd)] = nil // no category goes right
			}
		}
	}
	return sets, nil
}

// names returns the names of n things: given, else from the file, else
// prefix followed by the index.
func names(given, fromFile []string, n int, prefix string) []string {
	switch {
	case len(given) > 0:
		return slices.Clone(given)
	case len(fromFile) > 0:
		return slices.Clone(fromFile)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// classCount is how many classes the model's classifier columns have.
func (m *model) classCount() int {
	if m.obj.multi {
		return m.groups
	}
	return 2
}

// loaded checks meta against the model and returns it with its schema and
// process.
func (m *model) loaded(f *file, meta process.ModelMetadata, lim Limits) (*process.LoadedModel, error) {
	source := "the metadata"
	if len(meta.Features) == 0 {
		source = "the file's feature_names"
	}
	features := names(meta.Features, f.featureNames, m.nFeat, "f")
	if len(meta.Features) > 0 || len(f.featureNames) > 0 {
		if err := process.CheckNames("feature", "features", source, features, m.nFeat); err != nil {
			return nil, err
		}
	}
	label := meta.LabelOrDefault()
	schema := process.ModelSchema{
		Format:    "xgboost",
		Producer:  producer(f.version),
		Objective: m.objName,
		Label:     label,
		Trees:     len(m.trees),
	}
	schema.Inputs = make([]process.ColumnSpec, len(features))
	for i, name := range features {
		schema.Inputs[i] = process.ColumnSpec{Name: name, Kind: process.Number}
	}
	m.inputs = slices.Clone(schema.Inputs)
	prediction := "prediction(" + label + ")"
	var proc process.Process
	if m.obj.class {
		k := m.classCount()
		if k > lim.MaxClasses {
			return nil, process.ModelErrorf(process.ErrModelLimit,
				"the model has %d classes, more than the limit of %d", k, lim.MaxClasses)
		}
		classes := names(meta.Classes, nil, k, "")
		if err := process.CheckNames("class", "classes", "the metadata", classes, k); err != nil {
			return nil, err
		}
		p, err := process.Classifier(label, classes, m.predictProbs)
		if err != nil {
			return nil, invalid("%s", err.Error())
		}
		proc = p
		schema.Task = process.Classification
		schema.Classes = classes
		schema.Outputs = process.ClassifierOutputs(label, classes)
	} else {
		if len(meta.Classes) > 0 {
			return nil, invalid("the metadata names classes, but the model is a regressor (objective %q)", m.objName)
		}
		schema.Task = process.Regression
		schema.Outputs = []process.ColumnSpec{{Name: prediction, Kind: process.Number}}
		proc = &regressor{m: m, name: prediction}
	}
	if m.explainable() {
		groups := []string{""}
		if m.obj.multi {
			groups = schema.Classes
		}
		proc = &explained{Process: proc, m: m, features: features, groups: slices.Clone(groups)}
	} else {
		schema.Unexplained = "its trees do not hold every node's cover (sum_hessian), which TreeSHAP weighs by; " +
			"XGBoost's save_model writes them in its JSON and UBJSON files"
	}
	return &process.LoadedModel{Schema: schema, Process: proc, RowWise: true}, nil
}
