package pmml

import (
	"encoding/xml"
	"math"
	"strconv"
)

// ruleSetModel is a RuleSetModel element: a classifier of if-then rules.
type ruleSetModel struct {
	modelHeader
	RuleSet *ruleSet `xml:"RuleSet"`
}

// ruleSet holds the rules, how to choose among those that fire, and the
// answer when none does.
type ruleSet struct {
	DefaultScore         *string                `xml:"defaultScore,attr"`
	DefaultConfidence    *float64               `xml:"defaultConfidence,attr"`
	RuleSelectionMethods []*ruleSelectionMethod `xml:"RuleSelectionMethod"`
	ScoreDistributions   []*scoreDistribution   `xml:"ScoreDistribution"`
	Extensions           []unknownElement       `xml:"Extension"`
	// Rules holds the SimpleRule and CompoundRule children in their
	// order, which firstHit depends on; anything else lands here too and
	// is refused by name.
	Rules []*rule `xml:",any"`
}

// ruleSelectionMethod names how a rule set scores; the first one counts.
type ruleSelectionMethod struct {
	Criterion string `xml:"criterion,attr"`
}

// rule is a SimpleRule or a CompoundRule, told apart by XMLName. Its
// children (the predicate and, in a CompoundRule, the nested rules) land in
// Children in order; a predicate is read as a rule too, with the
// attributes of a predicate, and turned into one by asPred.
type rule struct {
	XMLName            xml.Name
	ID                 string               `xml:"id,attr"`
	Score              *string              `xml:"score,attr"`
	Confidence         *float64             `xml:"confidence,attr"`
	Weight             *float64             `xml:"weight,attr"`
	ScoreDistributions []*scoreDistribution `xml:"ScoreDistribution"`
	Extensions         []unknownElement     `xml:"Extension"`

	// The attributes of a predicate read as a rule.
	Field           string `xml:"field,attr"`
	Operator        string `xml:"operator,attr"`
	Value           string `xml:"value,attr"`
	BooleanOperator string `xml:"booleanOperator,attr"`
	Array           *array `xml:"Array"`

	Children []*rule `xml:",any"`
}

// asPred returns r, a predicate element read as a rule, as the predicate.
func (r *rule) asPred() *pred {
	p := &pred{XMLName: r.XMLName, Field: r.Field, Operator: r.Operator, Value: r.Value, BooleanOperator: r.BooleanOperator, Array: r.Array}
	for _, c := range r.Children {
		p.Preds = append(p.Preds, c.asPred())
	}
	return p
}

// selection is how a rule set chooses among the rules that fire.
type selection uint8

const (
	firstHit    selection = iota // the first rule that fires, in document order
	weightedSum                  // the class whose firing rules weigh most in all
	weightedMax                  // the firing rule of the largest weight
)

// compiledRule is a SimpleRule (class ≥ 0) or a CompoundRule (rules).
type compiledRule struct {
	test       predFn
	class      int
	confidence float64
	weight     float64
	// dist is the rule's ScoreDistribution as probabilities by class; nil
	// when it has none.
	dist  []float64
	rules []compiledRule
}

// ruleSetScorer is a compiled RuleSetModel.
type ruleSetScorer struct {
	s         *scope
	rules     []compiledRule
	selection selection
	names     []string
	// fallback is the default answer: its class is -1 when the rule set
	// has no defaultScore, and then a row no rule fires for has none.
	fallback compiledRule
}

// compileRuleSet checks r against the fields of fs and compiles it.
func compileRuleSet(r *ruleSetModel, fs *fieldSet) (model, error) {
	s, err := fs.enter(&r.modelHeader, "RuleSetModel", "classification")
	if err != nil {
		return nil, err
	}
	if s.target == nil {
		return nil, invalidf("the RuleSetModel has no target field")
	}
	rs := r.RuleSet
	if rs == nil {
		return nil, invalidf("RuleSetModel has no RuleSet")
	}
	if len(rs.RuleSelectionMethods) == 0 {
		return nil, invalidf("RuleSetModel's RuleSet has no RuleSelectionMethod")
	}
	m := &ruleSetScorer{s: s}
	switch c := rs.RuleSelectionMethods[0].Criterion; c {
	case "firstHit":
		m.selection = firstHit
	case "weightedSum":
		m.selection = weightedSum
	case "weightedMax":
		m.selection = weightedMax
	default:
		return nil, unsupported("RuleSetModel RuleSelectionMethod criterion " + strconv.Quote(c) + " is not supported (firstHit, weightedSum or weightedMax)")
	}
	index := func(class, where string) (int, error) {
		return s.classIndex(class, "RuleSetModel's "+where)
	}
	m.fallback = compiledRule{class: -1}
	if rs.DefaultScore != nil {
		k, err := index(*rs.DefaultScore, "defaultScore")
		if err != nil {
			return nil, err
		}
		m.fallback = compiledRule{class: k, confidence: 1}
		if rs.DefaultConfidence != nil {
			m.fallback.confidence = s.math.round(*rs.DefaultConfidence)
		}
		if len(rs.ScoreDistributions) > 0 {
			if m.fallback.dist, err = ruleDistribution(rs.ScoreDistributions, index, "RuleSet", s.math); err != nil {
				return nil, err
			}
		}
	}
	for _, c := range rs.Rules {
		cr, err := compileRule(c, s.fs, index)
		if err != nil {
			return nil, err
		}
		m.rules = append(m.rules, cr)
	}
	// Rules may name classes a target that lists none takes from them:
	// the names are known once all are read, and distributions sized.
	m.names = append([]string(nil), s.target.valid...)
	m.fallback.resize(len(m.names))
	for i := range m.rules {
		m.rules[i].resize(len(m.names))
	}
	return m, nil
}

// resize extends the distributions of r and its rules to n classes.
func (r *compiledRule) resize(n int) {
	if r.dist != nil && len(r.dist) < n {
		r.dist = append(r.dist, make([]float64, n-len(r.dist))...)
	}
	for i := range r.rules {
		r.rules[i].resize(n)
	}
}

// compileRule compiles one rule of a RuleSet or CompoundRule.
func compileRule(r *rule, fs *fieldSet, index classIndexer) (cr compiledRule, err error) {
	name := r.XMLName.Local
	if name != "SimpleRule" && name != "CompoundRule" {
		return cr, unsupported("PMML element " + name + " is not supported in a RuleSet")
	}
	var test *pred
	var nested []*rule
	for _, c := range r.Children {
		if !isPredicate(c.XMLName.Local) {
			nested = append(nested, c)
			continue
		}
		if test != nil {
			return cr, invalidf("RuleSetModel's %s %q has two predicates", name, r.ID)
		}
		test = c.asPred()
	}
	if test == nil {
		return cr, invalidf("RuleSetModel's %s %q has no predicate", name, r.ID)
	}
	if cr.test, err = compilePredicate(test, fs); err != nil {
		return cr, err
	}
	if name == "CompoundRule" {
		cr.class = -1
		for _, c := range nested {
			sub, err := compileRule(c, fs, index)
			if err != nil {
				return cr, err
			}
			cr.rules = append(cr.rules, sub)
		}
		return cr, nil
	}
	if len(nested) > 0 {
		return cr, unsupported("PMML element " + nested[0].XMLName.Local + " is not supported in a SimpleRule")
	}
	if r.Score == nil {
		return cr, invalidf("RuleSetModel's SimpleRule %q has no score", r.ID)
	}
	k, err := index(*r.Score, "SimpleRule "+strconv.Quote(r.ID))
	if err != nil {
		return cr, err
	}
	cr.class, cr.confidence, cr.weight = k, 1, 1
	if r.Confidence != nil {
		cr.confidence = fs.math.round(*r.Confidence)
	}
	if r.Weight != nil {
		cr.weight = fs.math.round(*r.Weight)
	}
	if len(r.ScoreDistributions) > 0 {
		if cr.dist, err = ruleDistribution(r.ScoreDistributions, index, "SimpleRule "+strconv.Quote(r.ID), fs.math); err != nil {
			return cr, err
		}
	}
	return cr, nil
}

// ruleDistribution reads ScoreDistributions as probabilities by class:
// their probability, else their confidence, else their share of the
// records; in mc's arithmetic.
func ruleDistribution(sds []*scoreDistribution, index classIndexer, where string, mc mathContext) ([]float64, error) {
	var dist []float64
	var total float64
	for _, sd := range sds {
		total = mc.round(total + mc.round(sd.RecordCount))
	}
	for _, sd := range sds {
		k, err := index(sd.Value, where+"'s ScoreDistribution")
		if err != nil {
			return nil, err
		}
		if k >= len(dist) {
			dist = append(dist, make([]float64, k+1-len(dist))...)
		}
		switch {
		case sd.Probability != nil:
			dist[k] = mc.round(*sd.Probability)
		case sd.Confidence != nil:
			dist[k] = mc.round(*sd.Confidence)
		case total > 0:
			dist[k] = mc.round(mc.round(sd.RecordCount) / total)
		}
	}
	return dist, nil
}

func (m *ruleSetScorer) predict(in []value, out *prediction) error {
	if err := m.s.prepare(in); err != nil {
		return err
	}
	p := out.probs[:len(m.names)]
	var winner *compiledRule
	switch m.selection {
	case firstHit:
		winner = firstFiring(m.rules, in)
	case weightedMax:
		winner = heaviestFiring(m.rules, in, nil)
	case weightedSum:
		var fired int
		sumWeights(m.rules, in, p, &fired, m.s.math)
		if fired > 0 {
			for k := range p {
				p[k] = m.s.math.round(p[k] / float64(fired))
			}
			out.value = bestClass(p, m.names)
			return nil
		}
	}
	if winner == nil {
		winner = &m.fallback
	}
	if winner.class < 0 {
		for k := range p {
			p[k] = math.NaN()
		}
		out.value = value{}
		return nil
	}
	if winner.dist != nil {
		copy(p, winner.dist)
	} else {
		p[winner.class] = winner.confidence
	}
	out.value = textValue(m.names[winner.class])
	return nil
}

// firstFiring returns the first simple rule of rules that fires, looking
// into a compound rule only when its own predicate holds.
func firstFiring(rules []compiledRule, in []value) *compiledRule {
	for i := range rules {
		r := &rules[i]
		if r.test(in) != isTrue {
			continue
		}
		if r.class >= 0 {
			return r
		}
		if w := firstFiring(r.rules, in); w != nil {
			return w
		}
	}
	return nil
}

// heaviestFiring returns the firing simple rule of the largest weight, the
// first of them on a tie, or best when none outweighs it.
func heaviestFiring(rules []compiledRule, in []value, best *compiledRule) *compiledRule {
	for i := range rules {
		r := &rules[i]
		if r.test(in) != isTrue {
			continue
		}
		if r.class < 0 {
			best = heaviestFiring(r.rules, in, best)
		} else if best == nil || r.weight > best.weight {
			best = r
		}
	}
	return best
}

// sumWeights adds the weight of every firing simple rule to its class in p
// and counts the rules, in mc's arithmetic.
func sumWeights(rules []compiledRule, in []value, p []float64, fired *int, mc mathContext) {
	for i := range rules {
		r := &rules[i]
		if r.test(in) != isTrue {
			continue
		}
		if r.class < 0 {
			sumWeights(r.rules, in, p, fired, mc)
			continue
		}
		p[r.class] = mc.round(p[r.class] + r.weight)
		*fired++
	}
}
