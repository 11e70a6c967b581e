package pmml

import (
	"math"
	"strconv"
)

// classProb is one class's probability at a tree node.
type classProb struct {
	class int
	p     float64
}

// Node tests a tree walks inline, without calling the predicate's
// closure: the common numeric splits and True.
const (
	opFunc uint8 = iota // call pred
	opTrue
	opLessThan
	opLessOrEqual
	opGreaterThan
	opGreaterOrEqual
)

// tnode is a compiled tree node, kept small so a walk stays in cache:
// its children are contiguous, and what it answers is in tree.outs.
type tnode struct {
	op   uint8
	math mathContext // how an inline test reads its field's value
	slot int32       // the field an inline test reads
	x    float64     // the threshold an inline test compares with
	pred predFn      // the predicate; inline tests fall back to it for a value that is no number
	// first and count locate the children in tree.nodes.
	first, count int32
	// defaultChild is the index of the child a missing value leads to
	// (missingValueStrategy defaultChild); -1 when none.
	defaultChild int32
	out          int32 // index in tree.outs; -1 when the node has no answer
}

// test evaluates n's predicate.
func (n *tnode) test(in []value) tri {
	switch n.op {
	case opTrue:
		return isTrue
	case opFunc:
		return n.pred(in)
	}
	v := in[n.slot]
	if v.kind != number {
		return n.pred(in)
	}
	x := n.math.round(v.num)
	switch n.op {
	case opLessThan:
		return triOf(x < n.x)
	case opLessOrEqual:
		return triOf(x <= n.x)
	case opGreaterThan:
		return triOf(x > n.x)
	}
	return triOf(x >= n.x)
}

// tout is what a tree node answers.
type tout struct {
	score value
	probs []classProb
}

// tree is a compiled TreeModel.
type tree struct {
	s     *scope
	nodes []tnode // nodes[0] is the root
	outs  []tout
	// missing is the missingValueStrategy: none, lastPrediction,
	// nullPrediction or defaultChild.
	missing string
	// lastOnNoTrue reports noTrueChildStrategy returnLastPrediction.
	lastOnNoTrue bool
	classify     bool
	// counts are the nodes' recordCounts, by node; NaN where a node has
	// none. reads are the slots each node's predicate reads.
	counts []float64
	reads  [][]int
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
	m.nodes = append(m.nodes, tnode{})
	m.counts = append(m.counts, 0)
	m.reads = append(m.reads, nil)
	if err := m.build(t.Node, 0); err != nil {
		return nil, err
	}
	return m, nil
}

// build compiles n into m.nodes[idx] and its children after it, each
// node's children side by side. Depth is bounded by the XML depth limit.
func (m *tree) build(n *node, idx int32) error {
	where := "the Node"
	if n.ID != "" {
		where += " " + strconv.Quote(n.ID)
	}
	p, err := predicateOf(n.Other, where)
	if err != nil {
		return err
	}
	fn, err := compilePredicate(p, m.s.fs)
	if err != nil {
		return err
	}
	tn := tnode{pred: fn, defaultChild: -1, out: -1}
	m.inline(&tn, p)
	m.counts[idx] = math.NaN()
	if n.RecordCount != nil {
		m.counts[idx] = *n.RecordCount
	}
	m.reads[idx] = predicateReads(p, m.s.fs, nil)
	var o tout
	has := false
	if n.Score != nil {
		has = true
		if m.classify {
			k, err := m.s.classIndex(*n.Score, where)
			if err != nil {
				return err
			}
			o.score = textValue(m.s.target.valid[k])
		} else {
			x, err := strconv.ParseFloat(*n.Score, 64)
			if err != nil {
				return invalidf("%s has score %q, which is not a number", where, *n.Score)
			}
			o.score = numValue(m.s.math.round(x))
		}
	}
	if m.classify {
		if o.probs, err = m.distribution(n, where); err != nil {
			return err
		}
		if o.probs == nil && n.Score != nil {
			k, _ := m.s.classIndex(*n.Score, where)
			o.probs = []classProb{{k, 1}}
		}
		has = has || o.probs != nil
	}
	if has {
		tn.out = int32(len(m.outs))
		m.outs = append(m.outs, o)
	}
	tn.first, tn.count = int32(len(m.nodes)), int32(len(n.Nodes))
	m.nodes = append(m.nodes, make([]tnode, len(n.Nodes))...)
	m.counts = append(m.counts, make([]float64, len(n.Nodes))...)
	m.reads = append(m.reads, make([][]int, len(n.Nodes))...)
	for i, c := range n.Nodes {
		ci := tn.first + int32(i)
		if err := m.build(c, ci); err != nil {
			return err
		}
		if n.DefaultChild != "" && c.ID == n.DefaultChild {
			tn.defaultChild = ci
		}
	}
	if m.missing == "defaultChild" && len(n.Nodes) > 0 && tn.defaultChild < 0 && n.DefaultChild != "" {
		return invalidf("%s names the default child %q, which is none of its children", where, n.DefaultChild)
	}
	m.nodes[idx] = tn
	return nil
}

// inline sets n's inline test for True and for a SimplePredicate comparing
// a numeric field with a number.
func (m *tree) inline(n *tnode, p *pred) {
	if p.XMLName.Local == "True" {
		n.op = opTrue
		return
	}
	if p.XMLName.Local != "SimplePredicate" {
		return
	}
	slot, f, ok := m.s.fs.lookup(p.Field)
	if !ok || !f.numeric {
		return
	}
	x, err := strconv.ParseFloat(p.Value, 64)
	if err != nil {
		return
	}
	ops := map[string]uint8{"lessThan": opLessThan, "lessOrEqual": opLessOrEqual, "greaterThan": opGreaterThan, "greaterOrEqual": opGreaterOrEqual}
	if op, ok := ops[p.Operator]; ok {
		n.op, n.math, n.slot, n.x = op, m.s.math, int32(slot), m.s.math.round(x)
	}
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
	mc := m.s.math
	allProb, allConf, total := true, true, 0.0
	for _, d := range sd {
		allProb = allProb && d.Probability != nil
		allConf = allConf && d.Confidence != nil
		if d.RecordCount < 0 {
			return nil, invalidf("a ScoreDistribution of %s has a negative recordCount", where)
		}
		total = mc.round(total + mc.round(d.RecordCount))
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
			p = mc.round(d.RecordCount) / total
		}
		out[i] = classProb{k, m.s.math.round(p)}
	}
	return out, nil
}

func (m *tree) predict(in []value, out *prediction) error {
	if err := m.s.prepare(in); err != nil {
		return err
	}
	n := m.leaf(in)
	if n == nil || n.out < 0 {
		return nil
	}
	o := &m.outs[n.out]
	if m.classify {
		for _, cp := range o.probs {
			if cp.class < len(out.probs) {
				out.probs[cp.class] = cp.p
			}
		}
		out.value = o.score
		if o.score.kind == missing {
			out.value = textValue(m.s.target.valid[argmax(out.probs)])
		}
		return nil
	}
	out.value = o.score
	if m.s.rescale != nil && o.score.kind == number {
		out.value = numValue(m.s.rescale(o.score.num))
	}
	return nil
}

// leaf walks the tree for one row and returns the node whose score it
// answers, or nil for a null prediction.
func (m *tree) leaf(in []value) *tnode {
	n := &m.nodes[0]
	if n.test(in) != isTrue {
		return nil // no node before the root has a prediction
	}
	// The walk of next, written out: a call per level costs scoring a
	// tenth of its time. Explaining walks with next, and its tests hold
	// the two to the same leaves (local accuracy on every fixture row).
walk:
	for n.count > 0 {
		for ci := n.first; ci < n.first+n.count; ci++ {
			c := &m.nodes[ci]
			switch c.test(in) {
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

// What next answers when a walk goes to no child.
const (
	stopHere int32 = -1 // the node answers (lastPrediction)
	stopNull int32 = -2 // the tree has no answer
)

// next returns the index of the child of n the row goes to, or stopHere
// or stopNull: the first child whose predicate is true, the missing value
// strategy deciding when one reads a missing value, the noTrueChildStrategy
// when none is true.
func (m *tree) next(n *tnode, in []value) int32 {
	for ci := n.first; ci < n.first+n.count; ci++ {
		switch m.nodes[ci].test(in) {
		case isTrue:
			return ci
		case unknown:
			switch m.missing {
			case "lastPrediction":
				return stopHere
			case "nullPrediction":
				return stopNull
			case "defaultChild":
				if n.defaultChild < 0 {
					return stopNull
				}
				return n.defaultChild
			}
		}
	}
	if m.lastOnNoTrue {
		return stopHere
	}
	return stopNull
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
