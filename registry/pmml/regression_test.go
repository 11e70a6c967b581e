package pmml

import (
	"encoding/xml"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// inputs is one input row for a compiled model: field name → value
// (float64, string, or absent for missing).
type inputs map[string]any

// schema declares the fields a model element is compiled against: inputs
// named "name" are doubles, "name:string" strings; a classifier's target
// "y" lists classes, and is ordinal when ordinal is set.
type schema struct {
	fields  []string
	classes []string
	ordinal bool
}

// compileElement decodes elem (one model element, whose <MiningSchema/>
// is filled in with the target) and compiles it with compile.
func compileElement[T any](compile func(*T, *fieldSet) (model, error), elem string, s schema) (model, []string, error) {
	dd := &dataDictionary{}
	var names []string
	for _, f := range s.fields {
		name, typ, _ := strings.Cut(f, ":")
		if typ == "" {
			dd.DataFields = append(dd.DataFields, &dataField{Name: name, Optype: "continuous", DataType: "double"})
		} else {
			dd.DataFields = append(dd.DataFields, &dataField{Name: name, Optype: "categorical", DataType: typ})
		}
		names = append(names, name)
	}
	if s.classes != nil {
		y := &dataField{Name: "y", Optype: "categorical", DataType: "string"}
		if s.ordinal {
			y.Optype = "ordinal"
		}
		for _, c := range s.classes {
			y.Values = append(y.Values, pmmlValue{Value: c})
		}
		dd.DataFields = append(dd.DataFields, y)
		elem = strings.Replace(elem, "<MiningSchema/>", `<MiningSchema><MiningField name="y" usageType="target"/></MiningSchema>`, 1)
	}
	fs, err := newFieldSet(dd, Limits{}.withDefaults())
	if err != nil {
		return nil, nil, err
	}
	var x T
	if err := xml.Unmarshal([]byte(elem), &x); err != nil {
		return nil, nil, err
	}
	m, err := compile(&x, fs)
	return m, names, err
}

// scoreElement compiles elem as compileElement does and scores r.
func scoreElement[T any](t *testing.T, compile func(*T, *fieldSet) (model, error), elem string, s schema, r inputs) prediction {
	t.Helper()
	m, names, err := compileElement(compile, elem, s)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	in := make([]value, len(names)+1)
	for i, f := range names {
		switch v := r[f].(type) {
		case float64:
			in[i] = numValue(v)
		case string:
			in[i] = textValue(v)
		}
	}
	out := prediction{probs: make([]float64, len(s.classes))}
	if err := m.predict(in, &out); err != nil {
		t.Fatalf("predict: %v", err)
	}
	return out
}

// within reports whether a and b agree to 1e-12, NaNs agreeing.
func within(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b))
}

func sigmoid(y float64) float64 { return 1 / (1 + math.Exp(-y)) }

// checkProbs compares a classifier's answer with the expected class and
// probabilities.
func checkProbs(t *testing.T, got prediction, class string, probs ...float64) {
	t.Helper()
	if got.value.asText() != class || (class == "") != got.value.isMissing() {
		t.Errorf("predicted %q (kind %d), want %q", got.value.asText(), got.value.kind, class)
	}
	for k := range probs {
		if !within(got.probs[k], probs[k]) {
			t.Errorf("probability %d = %v, want %v", k, got.probs[k], probs[k])
		}
	}
}

const linearRegression = `
<RegressionModel functionName="regression" normalizationMethod="%s">
  <MiningSchema/>
  <RegressionTable intercept="1.5">
    <NumericPredictor name="x" coefficient="2"/>
    <NumericPredictor name="z" exponent="2" coefficient="-0.5"/>
    <CategoricalPredictor name="color" value="red" coefficient="10"/>
    <CategoricalPredictor name="color" value="blue" coefficient="20"/>
    <PredictorTerm coefficient="0.25"><FieldRef field="x"/><FieldRef field="z"/></PredictorTerm>
  </RegressionTable>
</RegressionModel>`

func TestRegressionLinear(t *testing.T) {
	fields := schema{fields: []string{"x", "z", "color:string"}}
	// 1.5 + 2·3 − 0.5·2² + 20 + 0.25·3·2 = 27
	y := 1.5 + 2*3 - 0.5*4 + 20 + 0.25*3*2
	cases := []struct {
		norm string
		r    inputs
		want float64 // NaN: no answer
	}{
		{"none", inputs{"x": 3.0, "z": 2.0, "color": "blue"}, y},
		{"none", inputs{"x": 3.0, "z": 2.0, "color": "green"}, y - 20},
		{"none", inputs{"x": 3.0, "z": 2.0}, y - 20},           // a missing category adds nothing
		{"none", inputs{"z": 2.0, "color": "red"}, math.NaN()}, // a missing number: no answer
		{"exp", inputs{"x": 0.0, "z": 0.0}, math.Exp(1.5)},
		{"logit", inputs{"x": 0.0, "z": 0.0}, sigmoid(1.5)},
		{"softmax", inputs{"x": -1.0, "z": 1.0}, sigmoid(1.5 - 2 - 0.5 - 0.25)},
		{"probit", inputs{"x": 0.0, "z": 0.0}, 0.9331927987311419}, // Φ(1.5)
		{"cloglog", inputs{"x": 0.0, "z": 0.0}, 1 - math.Exp(-math.Exp(1.5))},
		{"loglog", inputs{"x": 0.0, "z": 0.0}, math.Exp(-math.Exp(-1.5))},
		{"cauchit", inputs{"x": 0.0, "z": 0.0}, 0.5 + math.Atan(1.5)/math.Pi},
	}
	for _, c := range cases {
		t.Run(c.norm, func(t *testing.T) {
			elem := strings.Replace(linearRegression, "%s", c.norm, 1)
			got := scoreElement(t, compileRegression, elem, fields, c.r)
			f, ok := got.value.asNumber()
			if math.IsNaN(c.want) {
				if !got.value.isMissing() {
					t.Fatalf("predicted %v, want no answer", got.value)
				}
				return
			}
			if !ok || !within(f, c.want) {
				t.Fatalf("predicted %v, want %v", got.value, c.want)
			}
		})
	}
}

// sklearnBinary is a binary logistic regression as sklearn2pmml writes it:
// the positive class's table first, the other with intercept 0.
const sklearnBinary = `
<RegressionModel functionName="classification" normalizationMethod="%s">
  <MiningSchema/>
  <RegressionTable intercept="-1.25" targetCategory="yes">
    <NumericPredictor name="a" coefficient="0.75"/>
    <NumericPredictor name="b" coefficient="-2"/>
  </RegressionTable>
  <RegressionTable intercept="0" targetCategory="no"/>
</RegressionModel>`

func TestRegressionBinaryLogistic(t *testing.T) {
	fields := schema{fields: []string{"a", "b"}, classes: []string{"no", "yes"}}
	y := -1.25 + 0.75*4 - 2*0.5 // 0.75
	for _, norm := range []string{"logit", "softmax"} {
		t.Run(norm, func(t *testing.T) {
			elem := strings.Replace(sklearnBinary, "%s", norm, 1)
			got := scoreElement(t, compileRegression, elem, fields, inputs{"a": 4.0, "b": 0.5})
			checkProbs(t, got, "yes", 1-sigmoid(y), sigmoid(y))
			got = scoreElement(t, compileRegression, elem, fields, inputs{"a": 0.0, "b": 0.5})
			checkProbs(t, got, "no", 1-sigmoid(-2.25), sigmoid(-2.25))
			got = scoreElement(t, compileRegression, elem, fields, inputs{"a": 1.0})
			checkProbs(t, got, "", math.NaN(), math.NaN())
		})
	}
	// none: the first table's value is the probability, held to [0, 1].
	elem := strings.Replace(sklearnBinary, "%s", "none", 1)
	got := scoreElement(t, compileRegression, elem, fields, inputs{"a": 2.0, "b": 0.0})
	checkProbs(t, got, "no", 0.75, 0.25)
	got = scoreElement(t, compileRegression, elem, fields, inputs{"a": 10.0, "b": 0.0})
	checkProbs(t, got, "yes", 0, 1)
}

const multinomial = `
<RegressionModel functionName="classification" normalizationMethod="%s">
  <MiningSchema/>
  <RegressionTable intercept="1" targetCategory="setosa"><NumericPredictor name="w" coefficient="-1"/></RegressionTable>
  <RegressionTable intercept="0.5" targetCategory="versicolor"><NumericPredictor name="w" coefficient="0.5"/></RegressionTable>
  <RegressionTable intercept="-2" targetCategory="virginica"><NumericPredictor name="w" coefficient="2"/></RegressionTable>
</RegressionModel>`

func TestRegressionMultinomial(t *testing.T) {
	fields := schema{fields: []string{"w"}, classes: []string{"setosa", "versicolor", "virginica"}}
	// w = 2: y = (-1, 1.5, 2)
	e := []float64{math.Exp(-1), math.Exp(1.5), math.Exp(2)}
	sum := e[0] + e[1] + e[2]
	got := scoreElement(t, compileRegression, strings.Replace(multinomial, "%s", "softmax", 1), fields, inputs{"w": 2.0})
	checkProbs(t, got, "virginica", e[0]/sum, e[1]/sum, e[2]/sum)

	// simplemax at w = 1: y = (0, 1, 0) → (0, 1, 0)
	got = scoreElement(t, compileRegression, strings.Replace(multinomial, "%s", "simplemax", 1), fields, inputs{"w": 1.0})
	checkProbs(t, got, "versicolor", 0, 1, 0)

	// none at w = 0.5: y = (0.5, 0.75, ·); the last class has 1 − 1.25
	got = scoreElement(t, compileRegression, strings.Replace(multinomial, "%s", "none", 1), fields, inputs{"w": 0.5})
	checkProbs(t, got, "versicolor", 0.5, 0.75, -0.25)
}

func TestRegressionRefuses(t *testing.T) {
	cases := []struct {
		name, elem string
		s          schema
		want       string
	}{
		{"normalization", strings.Replace(linearRegression, "%s", "tanh", 1), schema{fields: []string{"x", "z", "color:string"}}, `normalizationMethod "tanh"`},
		{"simplemax regression", strings.Replace(linearRegression, "%s", "simplemax", 1), schema{fields: []string{"x", "z", "color:string"}}, `"simplemax"`},
		{"unknown field", strings.Replace(linearRegression, "%s", "none", 1), schema{fields: []string{"x", "color:string"}}, `NumericPredictor names "z"`},
		{"unknown term field", strings.Replace(linearRegression, "%s", "none", 1), schema{fields: []string{"x", "z", "colour:string"}}, `CategoricalPredictor names "color"`},
		{"tables for classes", strings.Replace(sklearnBinary, "%s", "logit", 1), schema{fields: []string{"a", "b"}, classes: []string{"no", "yes", "maybe"}}, "2 RegressionTables for a target of 3 classes"},
		{"unknown category", strings.Replace(sklearnBinary, "%s", "logit", 1), schema{fields: []string{"a", "b"}, classes: []string{"no", "si"}}, `RegressionTable names the class "yes"`},
		{"logit multiclass", strings.Replace(multinomial, "%s", "logit", 1), schema{fields: []string{"w"}, classes: []string{"setosa", "versicolor", "virginica"}}, `"logit" needs two classes`},
		{"exp classification", strings.Replace(multinomial, "%s", "exp", 1), schema{fields: []string{"w"}, classes: []string{"setosa", "versicolor", "virginica"}}, `"exp"`},
		{"function", `<RegressionModel functionName="clustering"><RegressionTable intercept="1"/></RegressionModel>`, schema{fields: nil}, `functionName "clustering"`},
		{"no coefficient", `<RegressionModel functionName="regression"><MiningSchema/><RegressionTable intercept="1"><NumericPredictor name="x"/></RegressionTable></RegressionModel>`, schema{fields: []string{"x"}}, `"x" has no coefficient`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := compileElement(compileRegression, c.elem, c.s)
			if !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want ErrModelInvalid naming %s", err, c.want)
			}
		})
	}
}

// TestRegressionOrdinal checks an ordinal target: the tables give the
// cumulative P(y ≤ class) through the link, and the last class has the rest.
func TestRegressionOrdinal(t *testing.T) {
	elem := `
<RegressionModel functionName="classification" normalizationMethod="logit">
  <MiningSchema/>
  <RegressionTable intercept="-1" targetCategory="low"><NumericPredictor name="x" coefficient="-0.5"/></RegressionTable>
  <RegressionTable intercept="1" targetCategory="mid"><NumericPredictor name="x" coefficient="-0.5"/></RegressionTable>
  <RegressionTable intercept="0" targetCategory="high"/>
</RegressionModel>`
	s := schema{fields: []string{"x"}, classes: []string{"low", "mid", "high"}, ordinal: true}
	// x = 2: P(≤ low) = σ(−2), P(≤ mid) = σ(0) = 0.5
	got := scoreElement(t, compileRegression, elem, s, inputs{"x": 2.0})
	checkProbs(t, got, "high", sigmoid(-2), 0.5-sigmoid(-2), 0.5)
	_, _, err := compileElement(compileRegression, strings.Replace(elem, "logit", "softmax", 1), s)
	if !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), "ordinal") {
		t.Fatalf("softmax on an ordinal target: error %v, want ErrModelInvalid", err)
	}
}

// TestRegressionLoad scores a binary logistic regression as sklearn2pmml
// writes it, through Load: the AI Hub columns, a missing value replaced as
// the MiningSchema says, and a row the model has no answer for.
func TestRegressionLoad(t *testing.T) {
	lm := loadPMML(t, `
<DataDictionary>
  <DataField name="y" optype="categorical" dataType="integer"><Value value="0"/><Value value="1"/></DataField>
  <DataField name="x1" optype="continuous" dataType="double"/>
  <DataField name="x2" optype="continuous" dataType="double"/>
</DataDictionary>
<RegressionModel functionName="classification" normalizationMethod="logit">
  <MiningSchema>
    <MiningField name="y" usageType="target"/>
    <MiningField name="x1"/>
    <MiningField name="x2" missingValueReplacement="1.5"/>
  </MiningSchema>
  <RegressionTable intercept="-0.5" targetCategory="1">
    <NumericPredictor name="x1" coefficient="1.25"/>
    <NumericPredictor name="x2" coefficient="-0.75"/>
  </RegressionTable>
  <RegressionTable intercept="0.0" targetCategory="0"/>
</RegressionModel>`)
	// −0.5 + 1.25·2 − 0.75·1 = 1.25
	checkRow(t, scoreRow(t, lm, "x1", 2.0, "x2", 1.0), map[string]any{
		"prediction(y)": "1", "confidence(0)": 1 - sigmoid(1.25), "confidence(1)": sigmoid(1.25),
	})
	// x2 missing is 1.5: −0.5 + 2.5 − 1.125 = 0.875
	checkRow(t, scoreRow(t, lm, "x1", 2.0, "x2", nil), map[string]any{
		"prediction(y)": "1", "confidence(0)": 1 - sigmoid(0.875), "confidence(1)": sigmoid(0.875),
	})
	// x1 missing: no answer
	checkRow(t, scoreRow(t, lm, "x1", nil, "x2", 1.0), map[string]any{
		"prediction(y)": nil, "confidence(0)": nil, "confidence(1)": nil,
	})
}
