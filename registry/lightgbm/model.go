package lightgbm

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/scorehub/scorehub/registry/process"
)

// The bits of a split's decision_type.
const (
	catMask         = 1 // a categorical split
	defaultLeftMask = 2 // a missing value goes left
)

// Missing types, bits 2-3 of decision_type: which values are missing at a
// numerical split.
const (
	missingNone = 0 // none: NaN reads as 0 and is compared
	missingZero = 1 // 0 (and NaN, read as 0) takes the default branch
	missingNaN  = 2 // NaN takes the default branch
)

// kZeroThreshold is LightGBM's kZeroThreshold, the float 1e-35f widened to
// a double: an input within it of zero is zero to LightGBM's predictor.
var kZeroThreshold = float64(float32(1e-35))

// node is one split of a tree, in the file's numbering, with what its
// decision_type says worked out when the tree is read: where NaN goes,
// and whether zero takes the default branch.
type node struct {
	// threshold is a numerical split's: a value <= it goes left.
	threshold float64
	feat      int32
	// left and right are the children: a split's index, or ^leaf.
	left, right int32
	// nan is the child NaN goes to: the default branch for missing types
	// NaN and Zero, the branch of 0 for missing type None (LightGBM reads
	// NaN as 0 there), right at a categorical split.
	nan int32
	// zero is the default branch where zero is missing (missing type
	// Zero), else -1<<31.
	zero int32
	// cat is the index in the tree's catSets of a categorical split's
	// bitset, or -1.
	cat int32
}

// noZero marks a node whose zero is compared like any value.
const noZero = -1 << 31

// catSet is the range of a categorical split's bitset in its tree's cats.
type catSet struct{ lo, hi int32 }

// linearLeaf is a leaf's linear model: konst + Σ coeffs[i]·x[feats[i]].
type linearLeaf struct {
	konst  float64
	feats  []int32
	coeffs []float64
}

// tree is one checked tree.
type tree struct {
	nodes   []node // empty for a tree of one leaf
	leaves  []float64
	cats    []uint32     // the bitsets of categorical splits
	catSets []catSet     // by a categorical node's cat
	linear  []linearLeaf // by leaf; nil unless the tree is linear
	depth   int
	// internalCount and leafCount are the training rows that reached each
	// split and leaf, what explanations weigh branches by; nil when the
	// file holds none (and for a tree of one leaf).
	internalCount, leafCount []float64
}

// feature is what the reader knows of one input.
type feature struct {
	name string
	// lo and hi are the range of a numerical feature's training values
	// (feature_infos' [lo:hi]) when ranged; both 0 where the file gives
	// none.
	lo, hi float64
	ranged bool
	// cats are a categorical feature's codes seen in training, in the
	// order feature_infos lists them; nil for a numerical feature.
	cats []int
	// names maps the name of each pandas category to its code, when the
	// file carries pandas_categorical for this feature; names[0] first.
	names     map[string]int
	nameOrder []string
}

// model is a checked LightGBM model ready to score. It is immutable once
// built and safe for concurrent use.
type model struct {
	trees      []tree
	outputs    int // raw scores per row: num_tree_per_iteration
	iterations int
	average    bool
	obj        objective
	feats      []feature
	scratch    sync.Pool // *scratch
	shap       shapTrees // the trees as explanations walk them, built on first use
}

// build checks a parsed file and turns it into a model.
func build(f *file, lim Limits) (*model, error) {
	nFeat := f.maxFeatureIdx + 1
	if len(f.featureNames) != nFeat {
		return nil, invalid("feature_names names %d features; max_feature_idx says %d", len(f.featureNames), nFeat)
	}
	if len(f.featureInfos) != nFeat {
		return nil, invalid("feature_infos describes %d features; max_feature_idx says %d", len(f.featureInfos), nFeat)
	}
	if f.treesPerIter != f.numClass {
		return nil, invalid("num_tree_per_iteration is %d for %d classes; LightGBM grows one tree per class and iteration", f.treesPerIter, f.numClass)
	}
	m := &model{outputs: f.treesPerIter, average: f.averageOutput}
	if !f.haveObjective {
		return nil, invalid("the header names no objective")
	}
	obj, err := parseObjective(f.objective)
	if err != nil {
		return nil, err
	}
	m.obj = obj
	switch {
	case obj.out == outSoftmax || obj.name == "multiclassova":
		if obj.numClass != f.numClass || f.numClass < 2 {
			return nil, invalid("objective %q is for %d classes; num_class is %d", f.objective, obj.numClass, f.numClass)
		}
	case f.numClass != 1:
		return nil, invalid("objective %q has one output, but num_class is %d", f.objective, f.numClass)
	}
	if len(f.trees) == 0 {
		return nil, invalid("the model holds no trees")
	}
	if len(f.trees)%m.outputs != 0 {
		return nil, invalid("the model holds %d trees, not a whole number of iterations of %d trees", len(f.trees), m.outputs)
	}
	m.iterations = len(f.trees) / m.outputs
	m.trees = make([]tree, len(f.trees))
	for i := range f.trees {
		t, err := check(i, &f.trees[i], nFeat, lim)
		if err != nil {
			return nil, err
		}
		m.trees[i] = t
		f.trees[i] = rawTree{}
	}
	m.feats = make([]feature, nFeat)
	for i, info := range f.featureInfos {
		m.feats[i] = parseInfo(info)
	}
	return m, nil
}

// parseInfo reads one feature_infos entry: "[lo:hi]" for a numerical
// feature, codes joined by ":" for a categorical one, "none" for a
// feature training found nothing to split on.
func parseInfo(s string) feature {
	if r, ok := strings.CutPrefix(s, "["); ok {
		a, b, _ := strings.Cut(strings.TrimSuffix(r, "]"), ":")
		lo, err1 := strconv.ParseFloat(a, 64)
		hi, err2 := strconv.ParseFloat(b, 64)
		if err1 != nil || err2 != nil || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			return feature{}
		}
		return feature{lo: lo, hi: hi, ranged: lo <= hi} // false for NaN too
	}
	if s == "none" || s == "" {
		return feature{}
	}
	var cats []int
	for _, c := range strings.Split(s, ":") {
		v, err := strconv.Atoi(c)
		if err != nil {
			return feature{}
		}
		cats = append(cats, v)
	}
	return feature{cats: cats}
}

// check checks tree i of the file: every split and leaf reached once from
// the root, features, category bitsets and linear models in range.
func check(i int, rt *rawTree, nFeat int, lim Limits) (tree, error) {
	n := rt.numLeaves
	t := tree{leaves: rt.leafValue}
	if rt.isLinear {
		lin, err := linearLeaves(i, rt, nFeat)
		if err != nil {
			return t, err
		}
		t.linear = lin
	}
	if n == 1 {
		return t, nil
	}
	if rt.numCat > 0 {
		b := rt.catBoundaries
		if b[0] < 0 {
			return t, invalid("tree %d: cat_boundaries start at %d", i, b[0])
		}
		for k := 1; k < len(b); k++ {
			if b[k] < b[k-1] {
				return t, invalid("tree %d: cat_boundaries decrease at %d", i, k)
			}
		}
		t.cats = rt.catThreshold
	}
	if rt.internalCount != nil && rt.leafCount != nil {
		t.internalCount, t.leafCount = rt.internalCount, rt.leafCount
	}
	t.nodes = make([]node, n-1)
	for k := range t.nodes {
		dt := rt.decisionType[k]
		nd := node{
			threshold: rt.threshold[k],
			feat:      rt.splitFeature[k],
			left:      rt.left[k],
			right:     rt.right[k],
			zero:      noZero,
			cat:       -1,
		}
		missing := uint8(dt>>2) & 3
		if nd.feat < 0 || int(nd.feat) >= nFeat {
			return t, invalid("tree %d split %d reads feature %d; the model has %d", i, k, nd.feat, nFeat)
		}
		if dt < 0 || dt > 15 || missing > missingNaN {
			return t, invalid("tree %d split %d has decision_type %d, which LightGBM does not write", i, k, dt)
		}
		def := nd.right
		if dt&defaultLeftMask != 0 {
			def = nd.left
		}
		switch missing {
		case missingNone:
			nd.nan = nd.right
			if 0 <= nd.threshold {
				nd.nan = nd.left
			}
		case missingZero:
			nd.nan, nd.zero = def, def
		case missingNaN:
			nd.nan = def
		}
		// LightGBM reads a tree with no categories as all numerical,
		// whatever its decision types say.
		if dt&catMask != 0 && rt.numCat > 0 {
			c := nd.threshold
			if !(c >= 0 && c < float64(rt.numCat)) || c != math.Trunc(c) {
				return t, invalid("tree %d categorical split %d names category set %v; the tree has %d", i, k, c, rt.numCat)
			}
			nd.cat, nd.nan, nd.zero = int32(len(t.catSets)), nd.right, noZero
			t.catSets = append(t.catSets, catSet{rt.catBoundaries[int(c)], rt.catBoundaries[int(c)+1]})
		}
		t.nodes[k] = nd
	}
	// Walk from the root: each split and each leaf reached exactly once.
	seenNode := make([]bool, n-1)
	seenLeaf := make([]bool, n)
	type item struct{ node, depth int32 }
	stack := []item{{0, 0}}
	seenNode[0] = true
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		nd := &t.nodes[it.node]
		for _, c := range [2]int32{nd.left, nd.right} {
			d := it.depth + 1
			if int(d) > lim.MaxDepth {
				return t, limit("tree %d is deeper than the limit of %d", i, lim.MaxDepth)
			}
			t.depth = max(t.depth, int(d))
			if c >= 0 {
				if int(c) >= n-1 || seenNode[c] {
					return t, invalid("tree %d split %d has child split %d, out of range or reached twice", i, it.node, c)
				}
				seenNode[c] = true
				stack = append(stack, item{c, d})
				continue
			}
			leaf := ^c
			if int(leaf) >= n || seenLeaf[leaf] {
				return t, invalid("tree %d split %d has child leaf %d, out of range or reached twice", i, it.node, leaf)
			}
			seenLeaf[leaf] = true
		}
	}
	if slices.Contains(seenNode, false) || slices.Contains(seenLeaf, false) {
		return t, invalid("tree %d has splits or leaves its root does not reach", i)
	}
	return t, nil
}

// linearLeaves reads the linear models of tree i's leaves.
func linearLeaves(i int, rt *rawTree, nFeat int) ([]linearLeaf, error) {
	lin := make([]linearLeaf, rt.numLeaves)
	at := 0
	for l := range lin {
		lin[l].konst = rt.leafConst[l]
		if rt.numFeatures == nil {
			continue
		}
		k := int(rt.numFeatures[l])
		if k == 0 {
			continue
		}
		lin[l].feats = rt.leafFeatures[at : at+k]
		lin[l].coeffs = rt.leafCoeff[at : at+k]
		for _, f := range lin[l].feats {
			if f < 0 || int(f) >= nFeat {
				return nil, invalid("tree %d leaf %d's linear model reads feature %d; the model has %d", i, l, f, nFeat)
			}
		}
		at += k
	}
	return lin, nil
}

// names returns the names of n things: given, else from the file, else
// prefix followed by the index.
func names(given []string, n int, prefix string) []string {
	if len(given) > 0 {
		return slices.Clone(given)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// classCount is how many classes a classifier answers.
func (m *model) classCount() int {
	if m.outputs > 1 {
		return m.outputs
	}
	return 2
}

// pandasNames gives the features the pandas_categorical line describes
// their categories' names. The Python package writes one list per pandas
// categorical column of the training frame, in column order, and LightGBM
// makes those columns its categorical features; so the lists belong to
// the categorical features in order, and a file whose counts differ
// cannot say which list is whose.
func (m *model) pandasNames(lists [][]json.RawMessage, lim Limits) error {
	if len(lists) == 0 {
		// No pandas categorical column: the Python package writes [] for
		// a frame whose categorical features, if any, are integer codes.
		return nil
	}
	var catFeats []int
	for i := range m.feats {
		if m.feats[i].cats != nil {
			catFeats = append(catFeats, i)
		}
	}
	if len(lists) != len(catFeats) {
		return invalid("pandas_categorical lists the categories of %d columns, but the model has %d categorical features; which list is whose cannot be told", len(lists), len(catFeats))
	}
	for j, list := range lists {
		if len(list) > lim.MaxCategoryWords {
			return limit("pandas_categorical lists %d categories for one column, more than the limit of %d", len(list), lim.MaxCategoryWords)
		}
		f := &m.feats[catFeats[j]]
		f.names = make(map[string]int, len(list))
		for code, raw := range list {
			name, err := categoryName(raw)
			if err != nil {
				return invalid("pandas_categorical: column %d category %d: %v", j, code, err)
			}
			if _, dup := f.names[name]; dup {
				return invalid("pandas_categorical: column %d lists category %q twice", j, name)
			}
			f.names[name] = code
			f.nameOrder = append(f.nameOrder, name)
		}
	}
	return nil
}

// categoryName is the text a request sends for a pandas category: a
// string as it is, a number or a boolean as JSON spells it.
func categoryName(raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case float64, bool:
		return strings.TrimSpace(string(raw)), nil
	}
	return "", errString("a category is a string, a number or a boolean")
}

type errString string

func (e errString) Error() string { return string(e) }

// loaded checks meta against the model and returns it with its schema,
// process and sample row.
func (m *model) loaded(f *file, meta process.ModelMetadata, lim Limits) (*process.LoadedModel, error) {
	if err := m.pandasNames(f.pandas, lim); err != nil {
		return nil, err
	}
	source, features := "the metadata", meta.Features
	if len(features) == 0 {
		source, features = "the file's feature_names", f.featureNames
	}
	if err := process.CheckNames("feature", "features", source, features, len(m.feats)); err != nil {
		return nil, err
	}
	label := meta.LabelOrDefault()
	schema := process.ModelSchema{
		Format:    "lightgbm",
		Producer:  "lightgbm (model " + f.version + ")",
		Objective: f.objective,
		Label:     label,
		Trees:     len(m.trees),
	}
	schema.Inputs = make([]process.ColumnSpec, len(features))
	for i, name := range features {
		m.feats[i].name = name
		kind := process.Number
		if m.feats[i].names != nil {
			kind = process.Text
		}
		schema.Inputs[i] = process.ColumnSpec{Name: name, Kind: kind}
	}
	schema.Domains = m.domains()
	prediction := "prediction(" + label + ")"
	var proc process.Process
	if m.obj.class {
		k := m.classCount()
		if k > lim.MaxClasses {
			return nil, limit("the model has %d classes, more than the limit of %d", k, lim.MaxClasses)
		}
		classes := names(meta.Classes, k, "")
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
			return nil, invalid("the metadata names classes, but the model is a regressor (objective %q)", f.objective)
		}
		schema.Task = process.Regression
		schema.Outputs = []process.ColumnSpec{{Name: prediction, Kind: process.Number}}
		proc = &regressor{m: m, name: prediction}
	}
	if m.explainable() {
		groups := []string{""}
		if m.outputs > 1 {
			groups = schema.Classes
		}
		proc = &explained{Process: proc, m: m, features: features, groups: slices.Clone(groups)}
	} else {
		schema.Unexplained = "its trees do not hold every node's count (internal_count and leaf_count), which TreeSHAP weighs by"
	}
	return &process.LoadedModel{Schema: schema, Process: proc, RowWise: true, Sample: m.sample()}, nil
}

// sample is one row a client could send: the middle of each numerical
// feature's training range, a categorical feature's first category.
func (m *model) sample() json.RawMessage {
	var b strings.Builder
	b.WriteString("[{")
	for i, f := range m.feats {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(f.name)
		b.Write(name)
		b.WriteByte(':')
		switch {
		case f.names != nil && len(f.nameOrder) > 0:
			v, _ := json.Marshal(f.nameOrder[0])
			b.Write(v)
		case f.names != nil:
			b.WriteString(`""`)
		case f.cats != nil:
			// feature_infos lists -1 for the missing category; the
			// first real one is a better example.
			c := f.cats[0]
			if i := slices.IndexFunc(f.cats, func(c int) bool { return c >= 0 }); i >= 0 {
				c = f.cats[i]
			}
			b.WriteString(strconv.Itoa(c))
		default:
			mid := f.lo + (f.hi-f.lo)/2
			if math.IsNaN(mid) {
				mid = 0
			}
			b.WriteString(strconv.FormatFloat(mid, 'g', 6, 64))
		}
	}
	b.WriteString("}]")
	return json.RawMessage(b.String())
}
