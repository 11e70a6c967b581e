package pmml

import (
	"math"
	"strconv"
)

// regressionModel is a RegressionModel element: one RegressionTable for a
// regression, one per target category for a classification.
type regressionModel struct {
	modelHeader
	NormalizationMethod string             `xml:"normalizationMethod,attr"`
	RegressionTables    []*regressionTable `xml:"RegressionTable"`
}

// regressionTable is one linear equation: an intercept plus its predictors.
type regressionTable struct {
	Intercept             *float64                `xml:"intercept,attr"`
	TargetCategory        *string                 `xml:"targetCategory,attr"`
	NumericPredictors     []*numericPredictor     `xml:"NumericPredictor"`
	CategoricalPredictors []*categoricalPredictor `xml:"CategoricalPredictor"`
	PredictorTerms        []*predictorTerm        `xml:"PredictorTerm"`
}

// numericPredictor adds coefficient × field^exponent.
type numericPredictor struct {
	Name        string   `xml:"name,attr"`
	Exponent    *float64 `xml:"exponent,attr"`
	Coefficient *float64 `xml:"coefficient,attr"`
}

// categoricalPredictor adds coefficient when the field equals value.
type categoricalPredictor struct {
	Name        string   `xml:"name,attr"`
	Value       string   `xml:"value,attr"`
	Coefficient *float64 `xml:"coefficient,attr"`
}

// predictorTerm adds coefficient × the product of its fields.
type predictorTerm struct {
	Coefficient *float64        `xml:"coefficient,attr"`
	FieldRefs   []*predictorRef `xml:"FieldRef"`
}

// predictorRef is a FieldRef inside a PredictorTerm.
type predictorRef struct {
	Field string `xml:"field,attr"`
}

// normalization turns the values of the regression tables into the
// model's answer: a number for a regression, class probabilities for a
// classification.
type normalization uint8

const (
	normNone normalization = iota
	normSimplemax
	normSoftmax
	normLogit
	normProbit
	normCloglog
	normLoglog
	normCauchit
	normExp
)

// parseNormalization reads a normalizationMethod; ok is false for a name
// the spec does not define.
func parseNormalization(name string) (n normalization, ok bool) {
	switch name {
	case "", "none":
		return normNone, true
	case "simplemax":
		return normSimplemax, true
	case "softmax":
		return normSoftmax, true
	case "logit":
		return normLogit, true
	case "probit":
		return normProbit, true
	case "cloglog":
		return normCloglog, true
	case "loglog":
		return normLoglog, true
	case "cauchit":
		return normCauchit, true
	case "exp":
		return normExp, true
	}
	return 0, false
}

// link applies the inverse link function of n to y: the single-value
// normalizations a regression or a binary classification uses, each step
// rounded as mc holds numbers. (In float32, XGBoost's sigmoid is
// 1/(1+exp(-y)) step by step, as here.)
func (n normalization) link(y float64, mc mathContext) float64 {
	switch n {
	case normSoftmax, normLogit:
		return mc.round(1 / mc.round(1+mc.round(math.Exp(-y))))
	case normProbit:
		return mc.round(0.5 * math.Erfc(-y/math.Sqrt2))
	case normCloglog:
		return mc.round(1 - mc.round(math.Exp(-mc.round(math.Exp(y)))))
	case normLoglog:
		return mc.round(math.Exp(-mc.round(math.Exp(-y))))
	case normCauchit:
		return mc.round(0.5 + mc.round(math.Atan(y)/math.Pi))
	case normExp:
		return mc.round(math.Exp(y))
	}
	return y
}

// linearTerm is one compiled predictor of a regression table.
type linearTerm struct {
	coef     float64
	slots    []int   // the fields multiplied; one for a NumericPredictor
	exponent float64 // of a NumericPredictor; 1 otherwise
}

// categoricalTerm is one compiled CategoricalPredictor.
type categoricalTerm struct {
	slot  int
	match category
	coef  float64
}

// compiledTable is a regression table ready to evaluate.
type compiledTable struct {
	intercept   float64
	terms       []linearTerm
	categorical []categoricalTerm
	math        mathContext
}

// eval returns the table's value for the row in, or false when a numeric
// input is missing: then the model has no answer for the row. A missing
// categorical input adds nothing, as the spec says.
func (t *compiledTable) eval(in []value) (float64, bool) {
	mc := t.math
	y := t.intercept
	for i := range t.terms {
		term := &t.terms[i]
		p := term.coef
		for _, s := range term.slots {
			x, ok := in[s].asNumber()
			if !ok {
				return 0, false
			}
			x = mc.round(x)
			if term.exponent != 1 {
				x = mc.round(math.Pow(x, term.exponent))
			}
			p = mc.round(p * x)
		}
		y = mc.round(y + p)
	}
	for i := range t.categorical {
		c := &t.categorical[i]
		if c.match.matches(in[c.slot]) {
			y = mc.round(y + c.coef)
		}
	}
	return y, true
}

// regression is a compiled RegressionModel.
type regression struct {
	s      *scope
	tables []compiledTable
	// classes maps each table to its class index; nil for a regression.
	classes []int
	norm    normalization
	ordinal bool     // the target is ordinal: tables hold cumulative values
	names   []string // the target's classes, in their order
}

// compileRegression checks r against the fields of fs and compiles it.
func compileRegression(r *regressionModel, fs *fieldSet) (model, error) {
	s, err := fs.enter(&r.modelHeader, "RegressionModel", "classification", "regression")
	if err != nil {
		return nil, err
	}
	norm, ok := parseNormalization(r.NormalizationMethod)
	if !ok {
		return nil, unsupported("RegressionModel normalizationMethod " + strconv.Quote(r.NormalizationMethod) + " is not supported (none, simplemax, softmax, logit, probit, cloglog, loglog, cauchit or exp)")
	}
	if len(r.RegressionTables) == 0 {
		return nil, invalidf("RegressionModel has no RegressionTable")
	}
	m := &regression{s: s, norm: norm}
	for _, t := range r.RegressionTables {
		ct, err := compileTable(t, s.fs)
		if err != nil {
			return nil, err
		}
		m.tables = append(m.tables, ct)
	}
	if s.function == "regression" {
		if len(m.tables) != 1 {
			return nil, invalidf("RegressionModel for regression has %d RegressionTables; it needs exactly one", len(m.tables))
		}
		if norm == normSimplemax {
			return nil, invalidf("RegressionModel for regression cannot use normalizationMethod \"simplemax\"")
		}
		return m, nil
	}
	if s.target == nil {
		return nil, invalidf("the classification RegressionModel has no target field")
	}
	m.classes = make([]int, len(m.tables))
	seen := make(map[int]bool, len(m.tables))
	for i, t := range r.RegressionTables {
		if t.TargetCategory == nil {
			return nil, invalidf("RegressionModel's RegressionTable %d has no targetCategory", i+1)
		}
		k, err := s.classIndex(*t.TargetCategory, "RegressionModel's RegressionTable")
		if err != nil {
			return nil, err
		}
		if seen[k] {
			return nil, invalidf("RegressionModel has two RegressionTables for targetCategory %q", *t.TargetCategory)
		}
		seen[k] = true
		m.classes[i] = k
	}
	m.names = append([]string(nil), s.target.valid...)
	m.ordinal = s.target.optype == "ordinal"
	if len(m.tables) != len(m.names) {
		return nil, invalidf("RegressionModel has %d RegressionTables for a target of %d classes; it needs one per class", len(m.tables), len(m.names))
	}
	if len(m.names) < 2 {
		return nil, invalidf("RegressionModel for classification has one class; it needs two or more")
	}
	switch {
	case norm == normExp:
		return nil, invalidf("RegressionModel for classification cannot use normalizationMethod \"exp\"")
	case m.ordinal && (norm == normSoftmax || norm == normSimplemax):
		return nil, invalidf("RegressionModel for an ordinal target cannot use normalizationMethod %q", r.NormalizationMethod)
	case !m.ordinal && len(m.names) > 2 && norm != normNone && norm != normSoftmax && norm != normSimplemax:
		return nil, invalidf("RegressionModel normalizationMethod %q needs two classes; the target has %d (use softmax or simplemax)", r.NormalizationMethod, len(m.names))
	}
	return m, nil
}

// compileTable resolves the fields of t in fs.
func compileTable(t *regressionTable, fs *fieldSet) (compiledTable, error) {
	mc := fs.math
	ct := compiledTable{math: fs.math}
	if t.Intercept != nil {
		ct.intercept = mc.round(*t.Intercept)
	}
	for _, p := range t.NumericPredictors {
		if p.Coefficient == nil {
			return ct, invalidf("RegressionModel's NumericPredictor %q has no coefficient", p.Name)
		}
		slot, err := predictorSlot(fs, "NumericPredictor", p.Name)
		if err != nil {
			return ct, err
		}
		e := 1.0
		if p.Exponent != nil {
			e = mc.round(*p.Exponent)
		}
		ct.terms = append(ct.terms, linearTerm{coef: mc.round(*p.Coefficient), slots: []int{slot}, exponent: e})
	}
	for _, p := range t.CategoricalPredictors {
		if p.Coefficient == nil {
			return ct, invalidf("RegressionModel's CategoricalPredictor %q has no coefficient", p.Name)
		}
		slot, err := predictorSlot(fs, "CategoricalPredictor", p.Name)
		if err != nil {
			return ct, err
		}
		ct.categorical = append(ct.categorical, categoricalTerm{slot: slot, match: newCategory(p.Value), coef: mc.round(*p.Coefficient)})
	}
	for _, p := range t.PredictorTerms {
		if p.Coefficient == nil {
			return ct, invalidf("RegressionModel's PredictorTerm has no coefficient")
		}
		if len(p.FieldRefs) == 0 {
			return ct, invalidf("RegressionModel's PredictorTerm names no field")
		}
		term := linearTerm{coef: mc.round(*p.Coefficient), exponent: 1}
		for _, f := range p.FieldRefs {
			slot, err := predictorSlot(fs, "PredictorTerm", f.Field)
			if err != nil {
				return ct, err
			}
			term.slots = append(term.slots, slot)
		}
		ct.terms = append(ct.terms, term)
	}
	return ct, nil
}

// predictorSlot is the slot of the field a predictor names.
func predictorSlot(fs *fieldSet, element, name string) (int, error) {
	slot, _, ok := fs.lookup(name)
	if !ok {
		return 0, invalidf("RegressionModel's %s names %q, which is not a field of the model", element, name)
	}
	return slot, nil
}

func (m *regression) predict(in []value, out *prediction) error {
	if err := m.s.prepare(in); err != nil {
		return err
	}
	if m.classes == nil {
		y, ok := m.tables[0].eval(in)
		if !ok {
			out.value = value{}
			return nil
		}
		y = m.norm.link(y, m.s.math)
		if m.s.rescale != nil {
			y = m.s.rescale(y)
		}
		out.value = numValue(y)
		return nil
	}
	// The target's classes are exactly the tables' (compile checks it),
	// the first len(m.names) of out.probs.
	p := out.probs[:len(m.names)]
	for i := range m.tables {
		y, ok := m.tables[i].eval(in)
		if !ok {
			for k := range p {
				p[k] = math.NaN()
			}
			out.value = value{}
			return nil
		}
		p[m.classes[i]] = y
	}
	mc := m.s.math
	switch {
	case m.ordinal:
		m.cumulative(p)
	case m.norm == normSoftmax:
		softmax(p, m.s.math)
	case m.norm == normSimplemax:
		var sum float64
		for _, y := range p {
			sum = mc.round(sum + y)
		}
		for k := range p {
			p[k] = mc.round(p[k] / sum)
		}
	case len(m.names) == 2:
		// The first table's value decides; the second class has the rest.
		first, second := m.classes[0], m.classes[1]
		p[first] = m.norm.link(p[first], m.s.math)
		if m.norm == normNone {
			p[first] = min(max(p[first], 0), 1)
		}
		p[second] = mc.round(1 - p[first])
	default:
		// none with more than two classes: the last table's class has
		// what the others leave.
		last := m.classes[len(m.classes)-1]
		rest := 1.0
		for _, k := range m.classes[:len(m.classes)-1] {
			rest = mc.round(rest - p[k])
		}
		p[last] = rest
	}
	out.value = bestClass(p, m.names)
	return nil
}

// cumulative turns the tables' values of an ordinal target, which give
// P(target ≤ class) through the link function, into class probabilities.
func (m *regression) cumulative(p []float64) {
	mc := m.s.math
	var below float64
	for _, k := range m.classes[:len(m.classes)-1] {
		c := m.norm.link(p[k], m.s.math)
		if m.norm == normNone {
			c = min(max(c, 0), 1)
		}
		p[k] = mc.round(c - below)
		below = c
	}
	p[m.classes[len(m.classes)-1]] = mc.round(1 - below)
}

// softmax turns scores into probabilities in place, shifted by the largest
// score so that no exponential overflows, each step rounded as mc holds
// numbers (XGBoost's softmax, in float32).
func softmax(p []float64, mc mathContext) {
	top := math.Inf(-1)
	for _, y := range p {
		top = max(top, y)
	}
	if math.IsInf(top, -1) {
		for k := range p {
			p[k] = math.NaN()
		}
		return
	}
	var sum float64
	for k, y := range p {
		p[k] = mc.round(math.Exp(mc.round(y - top)))
		sum = mc.round(sum + p[k])
	}
	for k := range p {
		p[k] = mc.round(p[k] / sum)
	}
}
