package pmml

import (
	"slices"
	"strconv"
	"sync"
)

// seg is a compiled Segment.
type seg struct {
	pred    predFn
	m       model
	weight  float64
	always  bool         // the predicate is True
	outputs []outputStep // modelChain only: fields later segments read
}

// mining is a compiled MiningModel.
type mining struct {
	s        *scope
	segs     []seg
	method   string
	classify bool
	// skipMissing ignores a segment without a prediction; otherwise one
	// makes the whole prediction missing.
	skipMissing bool
	scratch     sync.Pool // *prediction
}

// compileMining compiles a MiningModel in fs.
func (c *compiler) compileMining(mm *miningModel, fs *fieldSet) (model, error) {
	s, err := fs.enter(&mm.modelHeader, "MiningModel", "classification", "regression")
	if err != nil {
		return nil, err
	}
	if mm.Regression != nil {
		return nil, unsupported("PMML element Regression (inside a MiningModel) is not supported")
	}
	if mm.DecisionTree != nil {
		return nil, unsupported("PMML element DecisionTree (inside a MiningModel) is not supported")
	}
	sg := mm.Segmentation
	if sg == nil {
		return nil, invalidf("the MiningModel has no Segmentation")
	}
	m := &mining{s: s, method: sg.MultipleModelMethod, classify: s.function == "classification"}
	if m.classify && s.target == nil {
		return nil, invalidf("the classification MiningModel has no target field")
	}
	methods := []string{"modelChain", "selectFirst"}
	if m.classify {
		methods = append(methods, "average", "weightedAverage", "majorityVote", "weightedMajorityVote")
	} else {
		methods = append(methods, "sum", "weightedSum", "average", "weightedAverage", "median")
	}
	if !slices.Contains(methods, m.method) {
		return nil, unsupported("the multipleModelMethod " + strconv.Quote(m.method) + " of a " + s.function + " MiningModel is not supported")
	}
	switch sg.MissingPredictionTreatment {
	case "", "continue", "skipSegment":
		m.skipMissing = true
	case "returnMissing":
	default:
		return nil, invalidf("the Segmentation has missingPredictionTreatment %q", sg.MissingPredictionTreatment)
	}
	if m.method == "sum" || m.method == "weightedSum" {
		// A sum without one of its terms is no answer.
		m.skipMissing = false
	}
	if len(sg.Segments) == 0 {
		return nil, invalidf("the MiningModel's Segmentation has no Segment")
	}
	c.segments += len(sg.Segments)
	if c.segments > c.lim.MaxSegments {
		return nil, limitf("the file has more than %d segments, the limit", c.lim.MaxSegments)
	}
	cur := s.fs
	for i, sgm := range sg.Segments {
		where := "the Segment " + strconv.Quote(sgm.ID)
		if sgm.ID == "" {
			where = "Segment " + strconv.Itoa(i+1)
		}
		p, err := predicateOf(sgm.Other, where)
		if err != nil {
			return nil, err
		}
		pf, err := compilePredicate(p, cur)
		if err != nil {
			return nil, err
		}
		h, name, err := sgm.models.only()
		if err != nil {
			return nil, err
		}
		if m.classify && m.method != "modelChain" {
			if err := sameTarget(h, s, name, where); err != nil {
				return nil, err
			}
		}
		sm, err := c.compile(&sgm.models, cur)
		if err != nil {
			return nil, err
		}
		w := 1.0
		if sgm.Weight != nil {
			w = s.math.round(*sgm.Weight)
		}
		st := seg{pred: pf, m: sm, weight: w, always: p.XMLName.Local == "True"}
		if m.method == "modelChain" && i < len(sg.Segments)-1 {
			next := cur.child()
			var target *field
			if tn := targetName(h); tn != "" {
				_, target, _ = cur.lookup(tn)
			}
			if st.outputs, err = compileOutputs(h.Output, next, target); err != nil {
				return nil, err
			}
			cur = next
		}
		m.segs = append(m.segs, st)
	}
	m.scratch.New = func() any { return new(prediction) }
	return m, nil
}

// targetName returns the name of the target field h's MiningSchema names.
func targetName(h *modelHeader) string {
	if h.MiningSchema == nil {
		return ""
	}
	for _, mf := range h.MiningSchema.MiningFields {
		if mf.UsageType == "target" || mf.UsageType == "predicted" {
			return mf.Name
		}
	}
	return ""
}

// sameTarget checks that a segment of a combining classifier predicts the
// classes the MiningModel does.
func sameTarget(h *modelHeader, s *scope, name, where string) error {
	if h.FunctionName != "classification" {
		return unsupported("a " + h.FunctionName + " " + name + " in " + where + " of a classification MiningModel that combines segments by votes or averages is not supported")
	}
	if tn := targetName(h); tn != "" && s.target != nil && tn != s.target.name {
		return invalidf("%s predicts %q, not the MiningModel's target %q", where, tn, s.target.name)
	}
	return nil
}

func (m *mining) predict(in []value, out *prediction) error {
	if err := m.s.prepare(in); err != nil {
		return err
	}
	p := m.scratch.Get().(*prediction)
	defer m.scratch.Put(p)
	if cap(p.probs) < len(out.probs) {
		p.probs = make([]float64, len(out.probs))
	}
	p.probs = p.probs[:len(out.probs)]
	switch m.method {
	case "modelChain":
		return m.chain(in, out, p)
	case "selectFirst":
		for _, sg := range m.segs {
			if sg.pred(in) == isTrue {
				if err := sg.m.predict(in, out); err != nil {
					return err
				}
				m.post(out)
				return nil
			}
		}
		return nil
	}
	if m.classify {
		return m.vote(in, out, p)
	}
	return m.combine(in, out, p)
}

// chain runs the segments in order, each reading the outputs of the ones
// before it; the last whose predicate holds answers.
func (m *mining) chain(in []value, out *prediction, p *prediction) error {
	answered := false
	for _, sg := range m.segs {
		if sg.pred(in) != isTrue {
			continue
		}
		p.reset()
		if err := sg.m.predict(in, p); err != nil {
			return err
		}
		runOutputs(sg.outputs, in, p)
		answered = true
	}
	if !answered {
		return nil
	}
	out.value = p.value
	copy(out.probs, p.probs)
	out.entity, out.entityIndex = p.entity, p.entityIndex
	m.post(out)
	return nil
}

// post applies the MiningModel's Targets to its prediction.
func (m *mining) post(out *prediction) {
	if m.s.rescale != nil && out.value.kind == number {
		out.value = numValue(m.s.rescale(out.value.num))
	}
}

// combine computes a regression's sum, average or median.
func (m *mining) combine(in []value, out *prediction, p *prediction) error {
	mc := m.s.math
	var sum, weights float64
	var vals []float64
	for _, sg := range m.segs {
		if sg.pred(in) != isTrue {
			continue
		}
		p.reset()
		if err := sg.m.predict(in, p); err != nil {
			return err
		}
		x, ok := p.value.asNumber()
		if !ok {
			if m.skipMissing {
				continue
			}
			return nil
		}
		x = mc.round(x)
		switch m.method {
		case "sum", "average":
			sum = mc.round(sum + x)
			weights++
		case "weightedSum", "weightedAverage":
			sum = mc.round(sum + mc.round(sg.weight*x))
			weights = mc.round(weights + sg.weight)
		case "median":
			vals = append(vals, x)
		}
	}
	var res float64
	switch m.method {
	case "sum", "weightedSum":
		if weights == 0 {
			return nil
		}
		res = sum
	case "average", "weightedAverage":
		if weights == 0 {
			return nil
		}
		res = mc.round(sum / weights)
	case "median":
		if len(vals) == 0 {
			return nil
		}
		slices.Sort(vals)
		n := len(vals)
		res = vals[n/2]
		if n%2 == 0 {
			res = mc.round(mc.round(vals[n/2-1]+vals[n/2]) / 2)
		}
	}
	out.value = numValue(res)
	m.post(out)
	return nil
}

// vote combines a classifier's segments: averaging their probabilities
// (average, weightedAverage) or counting their predicted classes
// (majorityVote, weightedMajorityVote), the probabilities then being the
// share of the votes. The predicted class is the most probable, the first
// in the target's order on a tie.
func (m *mining) vote(in []value, out *prediction, p *prediction) error {
	mc := m.s.math
	var weights float64
	for _, sg := range m.segs {
		if sg.pred(in) != isTrue {
			continue
		}
		p.reset()
		if err := sg.m.predict(in, p); err != nil {
			return err
		}
		if p.value.kind == missing {
			if m.skipMissing {
				continue
			}
			clear(out.probs)
			return nil
		}
		w := 1.0
		if m.method == "weightedAverage" || m.method == "weightedMajorityVote" {
			w = sg.weight
		}
		weights = mc.round(weights + w)
		switch m.method {
		case "average", "weightedAverage":
			for k, x := range p.probs {
				out.probs[k] = mc.round(out.probs[k] + mc.round(w*mc.round(x)))
			}
		default:
			if k := m.classOf(p); k >= 0 {
				out.probs[k] = mc.round(out.probs[k] + w)
			}
		}
	}
	if weights == 0 || len(out.probs) == 0 {
		clear(out.probs)
		return nil
	}
	for k := range out.probs {
		out.probs[k] = mc.round(out.probs[k] / weights)
	}
	out.value = textValue(m.s.target.valid[argmax(out.probs)])
	return nil
}

// classOf returns the index of a segment's predicted class, -1 when it is
// none of the target's.
func (m *mining) classOf(p *prediction) int {
	for k, c := range m.s.target.valid {
		if equalValues(textValue(c), p.value) {
			return k
		}
	}
	return -1
}
