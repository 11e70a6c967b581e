package pmml

import (
	"strconv"
)

// classProb is one class's probability at a tree node.
type classProb struct {
	class int
	p     float64
}

// tnode is a compiled tree node.
type tnode struct {
	pred     predFn
	children []int32
	// defaultChild is the index of the child a missing value leads to
	// (missingValueStrategy defaultChild); -1 when none.
	defaultChild int32
	hasScore     bool
	score        value
	probs        []classProb
}

// tree is a compiled TreeModel.
type tree struct {
	s     *scope
	nodes []tnode // nodes[0] is the root
	// missing is the missingValueStrategy: none, lastPrediction,
	// nullPrediction or defaultChild.
	missing string
	// lastOnNoTrue reports noTrueChildStrategy returnLastPrediction.
	lastOnNoTrue bool
	classify     bool
}

// compileTree compiles a TreeModel in fs.
func compileTree(t *treeModel, fs *fieldSet) (model, error) {
	s, err := fs.enter(&t.modelHeader, "TreeModel", "classification", "regression")
	if err != nil {
		return nil, err
	}
	m := &tree{s: s, classify: s.function == "classification"}
	switch t.MissingValueStrategy {
	case "", "none":
		m.missing = "none"
	case "lastPrediction", "nullPrediction", "defaultChild":
		m.missing = t.MissingValueStrategy
	default:
		return nil, unsupported("the TreeModel missingValueStrategy " + t.MissingValueStrategy + " is not supported (none, lastPrediction, nullPrediction and defaultChild are)")
	}
	switch t.NoTrueChildStrategy {
	case "", "returnNullPrediction":
	case "returnLastPrediction":
		m.lastOnNoTrue = true
	default:
		return nil, invalidf("the TreeModel has noTrueChildStrategy %q (returnNullPrediction or returnLastPrediction)", t.NoTrueChildStrategy)
	}
	switch t.SplitCharacteristic {
	case "", "binarySplit", "multiSplit":
	default:
		return nil, invalidf("the TreeModel has splitCharacteristic %q", t.SplitCharacteristic)
	}
	if t.Node == nil {
		return nil, invalidf("the TreeModel has no Node")
	}
	if m.classify && s.target == nil {
		return nil, invalidf("the classification TreeModel has no target field")
	}
	if _, err := m.add(t.Node); err != nil {
		return nil, err
	}
	return m, nil
}

// add compiles n and its subtree into m.nodes, returning n's index. Depth
// is bounded by the XML depth limit.
func (m *tree) add(n *node) (int32, error) {
	where := "the Node"
	if n.ID != "" {
		where += " " + strconv.Quote(n.ID)
	}
	p, err := predicateOf(n.Other, where)
	if err != nil {
		return 0, err
	}
	fn, err := compilePredicate(p, m.s.fs)
	if err != nil {
		return 0, err
	}
	idx := int32(len(m.nodes))
	m.nodes = append(m.nodes, tnode{pred: fn, defaultChild: -1})
	tn := tnode{pred: fn, defaultChild: -1}
	if n.Score != nil {
		tn.hasScore = true
		if m.classify {
			k, err := m.s.classIndex(*n.Score, where)
			if err != nil {
				return 0, err
			}
			tn.score = textValue(m.s.target.valid[k])
		} else {
			x, err := strconv.ParseFloat(*n.Score, 64)
			if err != nil {
				return 0, invalidf("%s has score %q, which is not a number", where, *n.Score)
			}
			tn.score = numValue(x)
		}
	}
	if m.classify {
		if tn.probs, err = m.distribution(n, where); err != nil {
			return 0, err
		}
		if tn.probs == nil && tn.hasScore {
			k, _ := m.s.classIndex(*n.Score, where)
			tn.probs = []classProb{{k, 1}}
		}
	}
	for _, c := range n.Nodes {
		ci, err := m.add(c)
		if err != nil {
			return 0, err
		}
		if n.DefaultChild != "" && c.ID == n.DefaultChild {
			tn.defaultChild = ci
		}
		tn.children = append(tn.children, ci)
	}
	if m.missing == "defaultChild" && len(n.Nodes) > 0 && tn.defaultChild < 0 && n.DefaultChild != "" {
		return 0, invalidf("%s names the default child %q, which is none of its children", where, n.DefaultChild)
	}
	m.nodes[idx] = tn
	return idx, nil
}

// distribution reads a node's ScoreDistributions as probabilities: their
// probability attributes, else their confidences, else their record counts
// over the total.
func (m *tree) distribution(n *node, where string) ([]classProb, error) {
	sd := n.ScoreDistributions
	if len(sd) == 0 {
		return nil, nil
	}
	out := make([]classProb, len(sd))
	allProb, allConf, total := true, true, 0.0
	for _, d := range sd {
		allProb = allProb && d.Probability != nil
		allConf = allConf && d.Confidence != nil
		if d.RecordCount < 0 {
			return nil, invalidf("a ScoreDistribution of %s has a negative recordCount", where)
		}
		total += d.RecordCount
	}
	for i, d := range sd {
		k, err := m.s.classIndex(d.Value, where)
		if err != nil {
			return nil, err
		}
		var p float64
		switch {
		case allProb:
			p = *d.Probability
		case allConf:
			p = *d.Confidence
		case total > 0:
			p = d.RecordCount / total
		}
		out[i] = classProb{k, p}
	}
	return out, nil
}

func (m *tree) predict(in []value, out *prediction) error {
	if err := m.s.prepare(in); err != nil {
		return err
	}
	n := m.leaf(in)
	if n == nil || !n.hasScore && n.probs == nil {
		return nil
	}
	if m.classify {
		for _, cp := range n.probs {
			if cp.class < len(out.probs) {
				out.probs[cp.class] = cp.p
			}
		}
		out.value = n.score
		if !n.hasScore {
			out.value = textValue(m.s.target.valid[argmax(out.probs)])
		}
		return nil
	}
	out.value = n.score
	if m.s.rescale != nil && n.score.kind == number {
		out.value = numValue(m.s.rescale(n.score.num))
	}
	return nil
}

// leaf walks the tree for one row and returns the node whose score it
// answers, or nil for a null prediction.
func (m *tree) leaf(in []value) *tnode {
	n := &m.nodes[0]
	if n.pred(in) != isTrue {
		return nil // no node before the root has a prediction
	}
walk:
	for len(n.children) > 0 {
		for _, ci := range n.children {
			c := &m.nodes[ci]
			switch c.pred(in) {
			case isTrue:
				n = c
				continue walk
			case unknown:
				switch m.missing {
				case "lastPrediction":
					return n
				case "nullPrediction":
					return nil
				case "defaultChild":
					if n.defaultChild < 0 {
						return nil
					}
					n = &m.nodes[n.defaultChild]
					continue walk
				}
			}
		}
		if m.lastOnNoTrue {
			return n
		}
		return nil
	}
	return n
}

// argmax returns the index of the largest of p, the first on a tie.
func argmax(p []float64) int {
	best := 0
	for i, v := range p {
		if v > p[best] {
			best = i
		}
	}
	return best
}
