package pmml

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// naiveBayesPMML is a naive Bayes model as RapidMiner and the spec write
// it: class counts 6 and 4, a categorical input with PairCounts and a
// continuous one with a Gaussian per class.
const naiveBayesPMML = `
<NaiveBayesModel functionName="classification" threshold="0.001">
  <MiningSchema/>
  <BayesInputs>
    <BayesInput fieldName="color">
      <PairCounts value="red"><TargetValueCounts>
        <TargetValueCount value="a" count="4"/><TargetValueCount value="b" count="1"/>
      </TargetValueCounts></PairCounts>
      <PairCounts value="blue"><TargetValueCounts>
        <TargetValueCount value="a" count="2"/><TargetValueCount value="b" count="0"/>
      </TargetValueCounts></PairCounts>
      <PairCounts value="green"><TargetValueCounts>
        <TargetValueCount value="b" count="3"/>
      </TargetValueCounts></PairCounts>
    </BayesInput>
    <BayesInput fieldName="x">
      <TargetValueStats>
        <TargetValueStat value="a"><Extension name="note"/><GaussianDistribution mean="0" variance="1"/></TargetValueStat>
        <TargetValueStat value="b"><GaussianDistribution mean="2" variance="4"/></TargetValueStat>
      </TargetValueStats>
    </BayesInput>
  </BayesInputs>
  <BayesOutput fieldName="y">
    <TargetValueCounts><TargetValueCount value="a" count="6"/><TargetValueCount value="b" count="4"/></TargetValueCounts>
  </BayesOutput>
</NaiveBayesModel>`

// gauss is the normal density, for expected answers.
func gauss(x, mean, variance float64) float64 {
	return math.Exp(-(x-mean)*(x-mean)/(2*variance)) / math.Sqrt(2*math.Pi*variance)
}

func TestNaiveBayes(t *testing.T) {
	fields := schema{fields: []string{"color:string", "x"}, classes: []string{"a", "b"}}
	share := func(la, lb float64) (float64, float64) { return la / (la + lb), lb / (la + lb) }
	cases := []struct {
		name  string
		r     inputs
		la    float64 // likelihoods: count × P(value | class) × density
		lb    float64
		class string
	}{
		// P(red|a) = 4/6, P(red|b) = 1/4; densities N(1; 0, 1) and N(1; 2, 4)
		{"both inputs", inputs{"color": "red", "x": 1.0}, 6 * 4.0 / 6 * 0.24197072451914337, 4 * 1.0 / 4 * 0.17603266338214976, "a"},
		// P(blue|b) counts 0: the threshold stands in for it
		{"zero count", inputs{"color": "blue"}, 6 * 2.0 / 6, 4 * 0.001, "a"},
		// green has no count for a: 0, so the threshold
		{"absent count", inputs{"color": "green"}, 6 * 0.001, 4 * 3.0 / 4, "b"},
		// an unseen value tells nothing
		{"unseen value", inputs{"color": "purple", "x": 2.0}, 6 * gauss(2, 0, 1), 4 * gauss(2, 2, 4), "b"},
		// densities below the threshold are the threshold
		{"far away", inputs{"x": 40.0}, 6 * 0.001, 4 * 0.001, "a"},
		{"all missing", inputs{}, 6, 4, "a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := scoreElement(t, compileNaiveBayes, naiveBayesPMML, fields, c.r)
			pa, pb := share(c.la, c.lb)
			checkProbs(t, got, c.class, pa, pb)
		})
	}
}

// TestNaiveBayesLogSpace checks that many inputs whose product of
// densities underflows a float64 still give the right answer: the
// likelihoods are summed as logarithms.
func TestNaiveBayesLogSpace(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<NaiveBayesModel functionName="classification" threshold="0"><MiningSchema/><BayesInputs>`)
	var fields []string
	for i := range 400 {
		name := "f" + string(rune('A'+i/26)) + string(rune('a'+i%26))
		fields = append(fields, name)
		b.WriteString(`<BayesInput fieldName="` + name + `"><TargetValueStats>
			<TargetValueStat value="a"><GaussianDistribution mean="0" variance="0.01"/></TargetValueStat>
			<TargetValueStat value="b"><GaussianDistribution mean="0.01" variance="0.01"/></TargetValueStat>
		</TargetValueStats></BayesInput>`)
	}
	b.WriteString(`</BayesInputs><BayesOutput fieldName="y"><TargetValueCounts>
		<TargetValueCount value="a" count="1"/><TargetValueCount value="b" count="1"/>
	</TargetValueCounts></BayesOutput></NaiveBayesModel>`)
	r := inputs{}
	for _, f := range fields {
		r[f] = 3.0 // density ≈ 1e-195 per input: the product underflows
	}
	got := scoreElement(t, compileNaiveBayes, b.String(), schema{fields: fields, classes: []string{"a", "b"}}, r)
	// log-likelihood difference per input: ((3−0.01)² − 3²)/(2·0.01) = −2.995 for a vs b
	d := 400 * ((3-0.01)*(3-0.01) - 9) / 0.02
	pa := 1 / (1 + math.Exp(-d))
	checkProbs(t, got, "b", pa, 1-pa)
}

func TestNaiveBayesRefuses(t *testing.T) {
	fields := schema{fields: []string{"color:string", "x"}, classes: []string{"a", "b"}}
	cases := []struct {
		name, from, to, want string
	}{
		{"no threshold", `threshold="0.001"`, ``, "no threshold"},
		{"unknown field", `fieldName="x"`, `fieldName="w"`, `BayesInput names "w"`},
		{"zero variance", `mean="2" variance="4"`, `mean="2" variance="0"`, "positive variance"},
		{"unknown class", `<TargetValueCount value="a" count="6"/>`, `<TargetValueCount value="c" count="6"/>`, `BayesOutput names the class "c"`},
		{"other distribution", `<GaussianDistribution mean="0" variance="1"/>`, `<UniformDistribution lower="0" upper="1"/>`, "UniformDistribution"},
		{"derived field", `<BayesInput fieldName="x">`, `<BayesInput fieldName="x"><DerivedField/>`, "DerivedField"},
		{"function", `functionName="classification"`, `functionName="regression"`, `functionName "regression"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			elem := strings.Replace(naiveBayesPMML, c.from, c.to, 1)
			_, _, err := compileElement(compileNaiveBayes, elem, fields)
			if !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want ErrModelInvalid naming %s", err, c.want)
			}
		})
	}
}

// TestNaiveBayesLoad scores the model above through Load, as a client
// would see it.
func TestNaiveBayesLoad(t *testing.T) {
	elem := strings.Replace(naiveBayesPMML, "<MiningSchema/>", `<MiningSchema>
    <MiningField name="color"/><MiningField name="x"/><MiningField name="y" usageType="predicted"/>
  </MiningSchema>`, 1)
	lm := loadPMML(t, `
<DataDictionary>
  <DataField name="color" optype="categorical" dataType="string"/>
  <DataField name="x" optype="continuous" dataType="double"/>
  <DataField name="y" optype="categorical" dataType="string"><Value value="a"/><Value value="b"/></DataField>
</DataDictionary>`+elem)
	la, lb := 6*2.0/6, 4*0.001 // blue, x missing
	checkRow(t, scoreRow(t, lm, "color", "blue", "x", nil), map[string]any{
		"prediction(y)": "a", "confidence(a)": la / (la + lb), "confidence(b)": lb / (la + lb),
	})
	la, lb = 6*0.001, 4*3.0/4 // green
	checkRow(t, scoreRow(t, lm, "color", "green", "x", nil), map[string]any{
		"prediction(y)": "b", "confidence(a)": la / (la + lb), "confidence(b)": lb / (la + lb),
	})
}

// TestNaiveBayesPoisson checks a count input with a Poisson distribution
// per class.
func TestNaiveBayesPoisson(t *testing.T) {
	elem := `
<NaiveBayesModel functionName="classification" threshold="0.001">
  <MiningSchema/>
  <BayesInputs><BayesInput fieldName="k"><TargetValueStats>
    <TargetValueStat value="a"><PoissonDistribution mean="2"/></TargetValueStat>
    <TargetValueStat value="b"><PoissonDistribution mean="5"/></TargetValueStat>
  </TargetValueStats></BayesInput></BayesInputs>
  <BayesOutput fieldName="y"><TargetValueCounts>
    <TargetValueCount value="a" count="1"/><TargetValueCount value="b" count="3"/>
  </TargetValueCounts></BayesOutput>
</NaiveBayesModel>`
	s := schema{fields: []string{"k"}, classes: []string{"a", "b"}}
	// k = 3: e^−2·2³/3! and e^−5·5³/3!
	la, lb := 1*math.Exp(-2)*8/6, 3*math.Exp(-5)*125/6
	got := scoreElement(t, compileNaiveBayes, elem, s, inputs{"k": 3.0})
	checkProbs(t, got, "b", la/(la+lb), lb/(la+lb))
	// k = 2.5 is no count: its probability 0 gives way to the threshold
	got = scoreElement(t, compileNaiveBayes, elem, s, inputs{"k": 2.5})
	checkProbs(t, got, "b", 0.25, 0.75)
}

// TestNaiveBayesExtensionInputs reads a continuous input written inside an
// Extension, as R's pmml package did before PMML 4.2: it counts.
func TestNaiveBayesExtensionInputs(t *testing.T) {
	i := strings.Index(naiveBayesPMML, `    <BayesInput fieldName="x">`)
	j := strings.Index(naiveBayesPMML, `  </BayesInputs>`)
	elem := naiveBayesPMML[:i] + "<Extension>" + naiveBayesPMML[i:j] + "</Extension>" + naiveBayesPMML[j:]
	got := scoreElement(t, compileNaiveBayes, elem, schema{fields: []string{"color:string", "x"}, classes: []string{"a", "b"}}, inputs{"color": "red", "x": 1.0})
	la, lb := 6*4.0/6*0.24197072451914337, 4*1.0/4*0.17603266338214976
	checkProbs(t, got, "a", la/(la+lb), lb/(la+lb))
}
