package lightgbm

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// file is a LightGBM text model as read, before it is checked as a whole.
type file struct {
	version       string
	numClass      int
	treesPerIter  int
	maxFeatureIdx int
	objective     string
	haveObjective bool
	averageOutput bool
	featureNames  []string
	featureInfos  []string
	trees         []rawTree
	// pandas is the pandas_categorical line's JSON: the categories of
	// each pandas categorical column the model was trained on; nil when
	// the file has none (or null).
	pandas [][]json.RawMessage
}

// rawTree is one tree block as the file holds it.
type rawTree struct {
	numLeaves     int
	numCat        int
	splitFeature  []int32
	threshold     []float64
	decisionType  []int8
	left, right   []int32
	leafValue     []float64
	isLinear      bool
	leafConst     []float64
	numFeatures   []int32
	leafFeatures  []int32
	leafCoeff     []float64
	catBoundaries []int32
	catThreshold  []uint32
	internalCount []float64 // training rows through each split; nil when absent
	leafCount     []float64 // training rows in each leaf; nil when absent
}

// lines walks a file line by line, "\n" or "\r\n" ended.
type lines struct {
	b     []byte
	pos   int
	start int // where the line last read starts
	line  int // the number of the line last read, from 1
}

// next returns the next line without its ending, and false at the end.
func (l *lines) next() (string, bool) {
	if l.pos >= len(l.b) {
		return "", false
	}
	rest := l.b[l.pos:]
	l.start = l.pos
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		i = len(rest)
		l.pos = len(l.b)
	} else {
		l.pos += i + 1
	}
	l.line++
	return string(bytes.TrimSuffix(rest[:i], []byte("\r"))), true
}

// parse reads the file's header, its tree blocks and what follows them,
// checking every count against lim before anything is sized by it.
func parse(b []byte, lim Limits) (*file, error) {
	l := &lines{b: b}
	l.next() // "tree", as Detect checked
	f := &file{treesPerIter: -1, numClass: -1, maxFeatureIdx: -1}
	var header = map[string]bool{}
	var treeSizes []int
	var line string
	var ok bool
	for {
		line, ok = l.next()
		if !ok {
			return nil, invalid("the file ends before its trees (no line \"end of trees\")")
		}
		if strings.HasPrefix(line, "Tree=") || line == "end of trees" {
			break
		}
		if line == "" {
			continue
		}
		key, value, _ := strings.Cut(line, "=")
		if header[key] {
			return nil, invalid("line %d: the header gives %s twice", l.line, key)
		}
		header[key] = true
		var err error
		switch key {
		case "version":
			f.version = value
		case "num_class":
			f.numClass, err = headerInt(key, value, 1, lim.MaxClasses, "classes")
		case "num_tree_per_iteration":
			f.treesPerIter, err = headerInt(key, value, 1, lim.MaxClasses, "trees per iteration")
		case "max_feature_idx":
			f.maxFeatureIdx, err = headerInt(key, value, 0, lim.MaxFeatures-1, "features")
		case "label_index":
			_, err = headerInt(key, value, 0, 1<<31-1, "")
		case "objective":
			f.objective, f.haveObjective = value, true
		case "average_output":
			f.averageOutput = true
		case "feature_names":
			f.featureNames = strings.Split(value, " ")
		case "feature_infos":
			f.featureInfos = strings.Split(value, " ")
		case "tree_sizes":
			for _, s := range strings.Fields(value) {
				if len(treeSizes) == lim.MaxTrees {
					return nil, limit("the model has more than the limit of %d trees", lim.MaxTrees)
				}
				n, err := strconv.Atoi(s)
				if err != nil || n < 0 {
					return nil, invalid("line %d: tree_sizes holds %q, not a size", l.line, s)
				}
				treeSizes = append(treeSizes, n)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	switch f.version {
	case "v2", "v3", "v4":
	case "":
		return nil, invalid("the header has no version")
	default:
		return nil, invalid("the file is of model version %q; this reader knows versions v2, v3 and v4", f.version)
	}
	for _, k := range []string{"num_class", "label_index", "max_feature_idx", "feature_names", "feature_infos"} {
		if !header[k] {
			return nil, invalid("the header has no %s", k)
		}
	}
	if !header["num_tree_per_iteration"] {
		f.treesPerIter = f.numClass // as LightGBM defaults it
	}
	for line != "end of trees" {
		if len(f.trees) == lim.MaxTrees {
			return nil, limit("the model has more than the limit of %d trees", lim.MaxTrees)
		}
		if line != "Tree="+strconv.Itoa(len(f.trees)) {
			return nil, invalid("line %d: %q where tree %d (\"Tree=%[3]d\") or \"end of trees\" should be", l.line, line, len(f.trees))
		}
		start := l.start
		t, err := parseTree(l, len(f.trees), lim)
		if err != nil {
			return nil, err
		}
		f.trees = append(f.trees, t)
		for line, ok = l.next(); ok && line == ""; line, ok = l.next() {
		}
		if !ok {
			return nil, invalid("the file ends before \"end of trees\"")
		}
		// LightGBM finds each tree by these sizes, so a file whose trees
		// are not where they say would be read otherwise by it.
		if k := len(f.trees) - 1; k < len(treeSizes) && l.start-start != treeSizes[k] {
			return nil, invalid("tree %d holds %d bytes; tree_sizes says %d", k, l.start-start, treeSizes[k])
		}
	}
	if treeSizes != nil && len(treeSizes) != len(f.trees) {
		return nil, invalid("tree_sizes lists %d trees; the file holds %d", len(treeSizes), len(f.trees))
	}
	// What follows: feature importances, parameters, and the line the
	// Python package appends. Only the last matters to scoring.
	var pandas string
	for {
		line, ok = l.next()
		if !ok {
			break
		}
		if p, found := strings.CutPrefix(line, "pandas_categorical:"); found {
			pandas = p
		}
	}
	if pandas != "" && pandas != "null" {
		if err := json.Unmarshal([]byte(pandas), &f.pandas); err != nil {
			return nil, invalid("the pandas_categorical line is not a JSON list of lists of categories: %v", err)
		}
	}
	return f, nil
}

// headerInt reads the header's integer key, which must lie in [lo, hi];
// one above hi passes a limit on what what counts.
func headerInt(key, value string, lo, hi int, what string) (int, error) {
	n, err := strconv.Atoi(value)
	if err != nil {
		return 0, invalid("the header's %s is %q, not an integer", key, value)
	}
	if n < lo {
		return 0, invalid("the header's %s is %d; it must be at least %d", key, n, lo)
	}
	if n > hi {
		return 0, limit("the header's %s is %d: the model has more %s than the limit of %d", key, n, what, hi+lo)
	}
	return n, nil
}

// parseTree reads the key=value lines of tree i, up to the blank line that
// ends them.
func parseTree(l *lines, i int, lim Limits) (rawTree, error) {
	kv := map[string]string{}
	for {
		line, ok := l.next()
		if !ok || line == "" {
			break
		}
		key, value, found := strings.Cut(line, "=")
		if !found {
			return rawTree{}, invalid("tree %d, line %d: %q is not key=value", i, l.line, line)
		}
		if _, dup := kv[key]; dup {
			return rawTree{}, invalid("tree %d gives %s twice", i, key)
		}
		kv[key] = value
	}
	t := rawTree{}
	p := treeParser{tree: i, kv: kv}
	t.numLeaves = p.int("num_leaves", true)
	t.numCat = p.int("num_cat", true)
	if p.err != nil {
		return t, p.err
	}
	switch {
	case t.numLeaves < 1:
		return t, invalid("tree %d has num_leaves %d; a tree has at least one leaf", i, t.numLeaves)
	case t.numLeaves > lim.MaxLeaves:
		return t, limit("tree %d has %d leaves, more than the limit of %d", i, t.numLeaves, lim.MaxLeaves)
	case t.numCat < 0 || t.numCat > t.numLeaves-1:
		return t, invalid("tree %d has num_cat %d for %d splits", i, t.numCat, t.numLeaves-1)
	}
	t.isLinear = p.int("is_linear", false) == 1
	n := t.numLeaves
	t.leafValue = p.floats("leaf_value", n, true)
	if n > 1 {
		t.splitFeature = p.ints("split_feature", n-1, true)
		t.threshold = p.floats("threshold", n-1, true)
		t.left = p.ints("left_child", n-1, true)
		t.right = p.ints("right_child", n-1, true)
		for _, v := range p.ints("decision_type", n-1, false) {
			t.decisionType = append(t.decisionType, int8(v))
		}
		if t.decisionType == nil {
			t.decisionType = make([]int8, n-1)
		}
		t.internalCount = p.floats("internal_count", n-1, false)
		t.leafCount = p.floats("leaf_count", n, false)
	}
	if t.isLinear {
		t.leafConst = p.floats("leaf_const", n, false)
		if t.leafConst == nil {
			t.leafConst = make([]float64, n)
		}
		t.numFeatures = p.ints("num_features", n, false)
		total := 0
		for _, k := range t.numFeatures {
			if k < 0 || int(k) > lim.MaxFeatures {
				return t, invalid("tree %d gives a leaf %d linear features", i, k)
			}
			total += int(k)
		}
		if t.numFeatures != nil {
			t.leafFeatures = p.ints("leaf_features", total, total > 0)
			t.leafCoeff = p.floats("leaf_coeff", total, total > 0)
		}
	}
	if t.numCat > 0 {
		t.catBoundaries = p.ints("cat_boundaries", t.numCat+1, true)
		if p.err == nil {
			words := t.catBoundaries[t.numCat]
			if words < 0 || int(words) > lim.MaxCategoryWords {
				if words < 0 {
					return t, invalid("tree %d has cat_boundaries ending at %d", i, words)
				}
				return t, limit("tree %d has %d words of categories, more than the limit of %d", i, words, lim.MaxCategoryWords)
			}
			t.catThreshold = p.uints("cat_threshold", int(words))
		}
	}
	return t, p.err
}

// treeParser reads the arrays of one tree block, keeping the first error.
type treeParser struct {
	tree int
	kv   map[string]string
	err  error
}

func (p *treeParser) fields(key string, n int, required bool) []string {
	if p.err != nil {
		return nil
	}
	v, ok := p.kv[key]
	if !ok {
		if required {
			p.err = invalid("tree %d has no %s", p.tree, key)
		}
		return nil
	}
	fs := strings.Fields(v)
	if len(fs) != n {
		p.err = invalid("tree %d has %d values of %s; it needs %d", p.tree, len(fs), key, n)
		return nil
	}
	return fs
}

func (p *treeParser) int(key string, required bool) int {
	fs := p.fields(key, 1, required)
	if fs == nil {
		return 0
	}
	v, err := strconv.ParseInt(fs[0], 10, 32)
	if err != nil {
		p.err = invalid("tree %d: %s is %q, not an integer", p.tree, key, fs[0])
	}
	return int(v)
}

func (p *treeParser) ints(key string, n int, required bool) []int32 {
	fs := p.fields(key, n, required)
	if fs == nil {
		return nil
	}
	out := make([]int32, n)
	for j, s := range fs {
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			p.err = invalid("tree %d: %s[%d] is %q, not an integer", p.tree, key, j, s)
			return nil
		}
		out[j] = int32(v)
	}
	return out
}

func (p *treeParser) uints(key string, n int) []uint32 {
	fs := p.fields(key, n, true)
	if fs == nil {
		return nil
	}
	out := make([]uint32, n)
	for j, s := range fs {
		v, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			p.err = invalid("tree %d: %s[%d] is %q, not a 32-bit word", p.tree, key, j, s)
			return nil
		}
		out[j] = uint32(v)
	}
	return out
}

func (p *treeParser) floats(key string, n int, required bool) []float64 {
	fs := p.fields(key, n, required)
	if fs == nil {
		return nil
	}
	out := make([]float64, n)
	for j, s := range fs {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil && !isRange(err) {
			p.err = invalid("tree %d: %s[%d] is %q, not a number", p.tree, key, j, s)
			return nil
		}
		out[j] = v
	}
	return out
}

// isRange reports whether err is strconv's out-of-range error, whose value
// (an infinity or zero) is what a C parser reads too.
func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
