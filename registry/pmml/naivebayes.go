package pmml

import (
	"math"
)

// naiveBayesModel is a NaiveBayesModel element: class counts, and per
// input either counts of its values by class (categorical inputs) or a
// distribution by class (continuous inputs).
type naiveBayesModel struct {
	modelHeader
	Threshold   *float64     `xml:"threshold,attr"`
	BayesInputs *bayesInputs `xml:"BayesInputs"`
	BayesOutput *bayesOutput `xml:"BayesOutput"`
}

// bayesInputs lists the model's inputs. R's pmml package, before PMML
// 4.2 allowed TargetValueStats, wrote continuous inputs inside an
// Extension: those count as inputs too.
type bayesInputs struct {
	BayesInputs []*bayesInput    `xml:"BayesInput"`
	Extensions  []bayesExtension `xml:"Extension"`
}

// bayesExtension is an Extension of BayesInputs.
type bayesExtension struct {
	BayesInputs []*bayesInput `xml:"BayesInput"`
}

// all returns the inputs, those inside Extensions last.
func (b *bayesInputs) all() []*bayesInput {
	list := b.BayesInputs
	for _, e := range b.Extensions {
		list = append(list[:len(list):len(list)], e.BayesInputs...)
	}
	return list
}

// bayesInput is what the training data said about one input.
type bayesInput struct {
	FieldName        string            `xml:"fieldName,attr"`
	TargetValueStats *targetValueStats `xml:"TargetValueStats"`
	PairCounts       []*pairCounts     `xml:"PairCounts"`
	DerivedField     *unknownElement   `xml:"DerivedField"`
}

// pairCounts counts, by class, the training rows with one input value.
type pairCounts struct {
	Value             string             `xml:"value,attr"`
	TargetValueCounts *targetValueCounts `xml:"TargetValueCounts"`
}

// targetValueCounts is a count per class.
type targetValueCounts struct {
	Counts []*targetValueCount `xml:"TargetValueCount"`
}

// targetValueCount is the count of one class.
type targetValueCount struct {
	Value string   `xml:"value,attr"`
	Count *float64 `xml:"count,attr"`
}

// targetValueStats holds a continuous input's distribution per class.
type targetValueStats struct {
	Stats []*targetValueStat `xml:"TargetValueStat"`
}

// targetValueStat is a continuous input's distribution for one class.
type targetValueStat struct {
	Value    string                `xml:"value,attr"`
	Gaussian *gaussianDistribution `xml:"GaussianDistribution"`
	Poisson  *poissonDistribution  `xml:"PoissonDistribution"`
	// Other holds any other distribution, refused by name.
	Extensions []unknownElement `xml:"Extension"`
	Other      []unknownElement `xml:",any"`
}

// gaussianDistribution is a normal distribution.
type gaussianDistribution struct {
	Mean     *float64 `xml:"mean,attr"`
	Variance *float64 `xml:"variance,attr"`
}

// poissonDistribution is a Poisson distribution.
type poissonDistribution struct {
	Mean *float64 `xml:"mean,attr"`
}

// bayesOutput holds the class counts of the training data.
type bayesOutput struct {
	FieldName         string             `xml:"fieldName,attr"`
	TargetValueCounts *targetValueCounts `xml:"TargetValueCounts"`
}

// naiveBayes is a compiled NaiveBayesModel. Everything is kept as
// logarithms: a row's score per class is a sum, turned into probabilities
// by a softmax at the end, so that many small factors never underflow.
//
// With Gaussian inputs only, this is scikit-learn's GaussianNB exactly
// (its joint log-likelihood, normalised the same way) when the file holds
// its class_count_ as counts, its var_ (which already includes the
// var_smoothing epsilon) as variances, and a threshold no density falls
// below, such as 0.
type naiveBayes struct {
	s        *scope
	names    []string
	logPrior []float64 // log count of each class
	inputs   []bayesCompiled
}

// bayesCompiled is one compiled BayesInput.
type bayesCompiled struct {
	slot int
	// Categorical inputs: the log probability of each value by class.
	values  []category
	logProb [][]float64
	// Continuous inputs: one distribution per class.
	dists []bayesDist
	// logThreshold is what a density below the threshold counts as.
	logThreshold float64
}

// bayesDist is a continuous input's distribution for one class.
type bayesDist struct {
	poisson  bool
	mean     float64
	variance float64 // Gaussian only
}

// logDensity is the log of the density (Gaussian) or probability
// (Poisson) of x, in mc's arithmetic.
func (d bayesDist) logDensity(x float64, mc mathContext) float64 {
	if d.poisson {
		if x < 0 || x != math.Trunc(x) {
			return math.Inf(-1)
		}
		lg, _ := math.Lgamma(x + 1)
		return mc.round(mc.round(mc.round(x*mc.round(math.Log(d.mean)))-d.mean) - mc.round(lg))
	}
	z := mc.round(x - d.mean)
	return mc.round(mc.round(-0.5*mc.round(math.Log(mc.round(mc.round(2*math.Pi)*d.variance)))) - mc.round(mc.round(z*z)/mc.round(2*d.variance)))
}

// compileNaiveBayes checks r against the fields of fs and compiles it.
func compileNaiveBayes(r *naiveBayesModel, fs *fieldSet) (model, error) {
	s, err := fs.enter(&r.modelHeader, "NaiveBayesModel", "classification")
	if err != nil {
		return nil, err
	}
	if s.target == nil {
		return nil, invalidf("the NaiveBayesModel has no target field")
	}
	if r.Threshold == nil {
		return nil, invalidf("NaiveBayesModel has no threshold")
	}
	if !(*r.Threshold >= 0) {
		return nil, invalidf("NaiveBayesModel threshold %v is negative", *r.Threshold)
	}
	if r.BayesOutput == nil || r.BayesOutput.TargetValueCounts == nil {
		return nil, invalidf("NaiveBayesModel has no BayesOutput with TargetValueCounts")
	}
	if r.BayesInputs == nil || len(r.BayesInputs.all()) == 0 {
		return nil, invalidf("NaiveBayesModel has no BayesInputs")
	}
	// Every class the counts name is a class of the target (or becomes
	// one, when the target lists none); the prior's counts come first.
	index := func(class, where string) (int, error) {
		return s.classIndex(class, "NaiveBayesModel's "+where)
	}
	for _, c := range r.BayesOutput.TargetValueCounts.Counts {
		if _, err := index(c.Value, "BayesOutput"); err != nil {
			return nil, err
		}
	}
	classes := append([]string(nil), s.target.valid...)
	m := &naiveBayes{s: s, names: classes}
	prior, err := classCounts(r.BayesOutput.TargetValueCounts, index, len(classes), "BayesOutput", s.math)
	if err != nil {
		return nil, err
	}
	mc := s.math
	m.logPrior = make([]float64, len(classes))
	for k, c := range prior {
		m.logPrior[k] = mc.round(math.Log(c))
	}
	logThreshold := mc.round(math.Log(mc.round(*r.Threshold)))
	for _, b := range r.BayesInputs.all() {
		slot, _, ok := s.fs.lookup(b.FieldName)
		if !ok {
			return nil, invalidf("NaiveBayesModel's BayesInput names %q, which is not a field of the model", b.FieldName)
		}
		if b.DerivedField != nil {
			return nil, unsupported("NaiveBayesModel's BayesInput " + b.FieldName + " holds a DerivedField, which is not supported")
		}
		in := bayesCompiled{slot: slot, logThreshold: logThreshold}
		switch {
		case b.TargetValueStats != nil && len(b.PairCounts) > 0:
			return nil, invalidf("NaiveBayesModel's BayesInput %q has both TargetValueStats and PairCounts", b.FieldName)
		case b.TargetValueStats != nil:
			in.dists, err = compileStats(b, classes, index, mc)
		case len(b.PairCounts) > 0:
			err = in.compileCounts(b, index, len(classes), logThreshold, mc)
		default:
			err = invalidf("NaiveBayesModel's BayesInput %q has neither TargetValueStats nor PairCounts", b.FieldName)
		}
		if err != nil {
			return nil, err
		}
		m.inputs = append(m.inputs, in)
	}
	return m, nil
}

// classIndexer returns the index of a class the file names; where says
// where, for messages.
type classIndexer func(class, where string) (int, error)

// classCounts reads a count per class, in mc's arithmetic; classes it does
// not name count 0.
func classCounts(t *targetValueCounts, index classIndexer, n int, where string, mc mathContext) ([]float64, error) {
	counts := make([]float64, n)
	for _, c := range t.Counts {
		k, err := index(c.Value, where)
		if err != nil {
			return nil, err
		}
		if k >= n {
			return nil, invalidf("NaiveBayesModel's %s counts %q, which the BayesOutput does not", where, c.Value)
		}
		if c.Count == nil || !(*c.Count >= 0) || math.IsInf(*c.Count, 0) {
			return nil, invalidf("NaiveBayesModel's %s count of class %q is missing, negative or not finite", where, c.Value)
		}
		counts[k] = mc.round(counts[k] + mc.round(*c.Count))
	}
	return counts, nil
}

// compileCounts reads a categorical input: P(value | class) is the
// value's count for the class over the class's count across all values
// of the input, and a zero count takes the threshold instead, as the spec
// says.
func (in *bayesCompiled) compileCounts(b *bayesInput, index classIndexer, n int, logThreshold float64, mc mathContext) error {
	total := make([]float64, n)
	counts := make([][]float64, len(b.PairCounts))
	for i, p := range b.PairCounts {
		if p.TargetValueCounts == nil {
			return invalidf("NaiveBayesModel's PairCounts %q of %q has no TargetValueCounts", p.Value, b.FieldName)
		}
		c, err := classCounts(p.TargetValueCounts, index, n, "PairCounts of "+b.FieldName, mc)
		if err != nil {
			return err
		}
		counts[i] = c
		for k, n := range c {
			total[k] = mc.round(total[k] + n)
		}
		in.values = append(in.values, newCategory(p.Value))
	}
	in.logProb = make([][]float64, len(counts))
	for i, c := range counts {
		lp := make([]float64, len(c))
		for k, n := range c {
			if n == 0 {
				lp[k] = logThreshold
			} else {
				lp[k] = mc.round(math.Log(mc.round(n / total[k])))
			}
		}
		in.logProb[i] = lp
	}
	return nil
}

// compileStats reads a continuous input's distributions, one per class, as
// mc holds numbers.
func compileStats(b *bayesInput, classes []string, index classIndexer, mc mathContext) ([]bayesDist, error) {
	dists := make([]bayesDist, len(classes))
	seen := make([]bool, len(classes))
	for _, s := range b.TargetValueStats.Stats {
		k, err := index(s.Value, "TargetValueStat of "+b.FieldName)
		if err != nil {
			return nil, err
		}
		if k >= len(classes) {
			return nil, invalidf("NaiveBayesModel's TargetValueStat of %q names %q, which the BayesOutput does not count", b.FieldName, s.Value)
		}
		if len(s.Other) > 0 {
			return nil, unsupported("NaiveBayesModel's TargetValueStat of " + b.FieldName + " holds a " + s.Other[0].XMLName.Local + "; only GaussianDistribution and PoissonDistribution are supported")
		}
		var d bayesDist
		switch {
		case s.Gaussian != nil:
			g := s.Gaussian
			if g.Mean == nil || g.Variance == nil || !(*g.Variance > 0) || math.IsInf(*g.Variance, 0) || math.IsInf(*g.Mean, 0) || math.IsNaN(*g.Mean) {
				return nil, invalidf("NaiveBayesModel's GaussianDistribution of %q for class %q needs a finite mean and a positive variance", b.FieldName, s.Value)
			}
			d = bayesDist{mean: mc.round(*g.Mean), variance: mc.round(*g.Variance)}
		case s.Poisson != nil:
			p := s.Poisson
			if p.Mean == nil || !(*p.Mean > 0) || math.IsInf(*p.Mean, 0) {
				return nil, invalidf("NaiveBayesModel's PoissonDistribution of %q for class %q needs a positive mean", b.FieldName, s.Value)
			}
			d = bayesDist{poisson: true, mean: mc.round(*p.Mean)}
		default:
			return nil, invalidf("NaiveBayesModel's TargetValueStat of %q for class %q holds no distribution", b.FieldName, s.Value)
		}
		dists[k], seen[k] = d, true
	}
	for k, ok := range seen {
		if !ok {
			return nil, invalidf("NaiveBayesModel's TargetValueStats of %q have no distribution for class %q", b.FieldName, classes[k])
		}
	}
	return dists, nil
}

func (m *naiveBayes) predict(in []value, out *prediction) error {
	if err := m.s.prepare(in); err != nil {
		return err
	}
	mc := m.s.math
	p := out.probs[:len(m.names)]
	copy(p, m.logPrior)
	for i := range m.inputs {
		b := &m.inputs[i]
		v := in[b.slot]
		if v.isMissing() {
			continue // missing inputs are ignored, as the spec says
		}
		if b.dists != nil {
			x, ok := v.asNumber()
			if !ok {
				continue
			}
			x = mc.round(x)
			for k := range p {
				p[k] = mc.round(p[k] + max(b.dists[k].logDensity(x, mc), b.logThreshold))
			}
			continue
		}
		for j := range b.values {
			if b.values[j].matches(v) {
				for k := range p {
					p[k] = mc.round(p[k] + b.logProb[j][k])
				}
				break
			}
		}
		// A value the training data never saw tells nothing: ignored.
	}
	softmax(p, mc)
	out.value = bestClass(p, m.names)
	return nil
}
