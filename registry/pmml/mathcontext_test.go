package pmml

import (
	"math"
	"strings"
	"testing"
)

// f32 is x as a float32 holds it.
func f32(x float64) float64 { return float64(float32(x)) }

// TestMathContextUnknownRefused: a math context other than double and
// float would change the answer, and is refused by name.
func TestMathContextUnknownRefused(t *testing.T) {
	doc := strings.Replace(regressionTree, `<TreeModel functionName="regression">`, `<TreeModel functionName="regression" x-mathContext="decimal">`, 1)
	if err := loadPMMLErr(doc); err == nil || !strings.Contains(err.Error(), `x-mathContext "decimal"`) {
		t.Errorf("error %v, want the math context refused by name", err)
	}
}

// floatDD declares a float input x, a second input z and a continuous
// target y.
const floatDD = `<DataDictionary>
 <DataField name="x" optype="continuous" dataType="float"/>
 <DataField name="z" optype="continuous" dataType="double"/>
 <DataField name="y" optype="continuous" dataType="float"/>
</DataDictionary>`

// TestMathContextFloatTree: a float TreeModel compares its input and
// threshold as float32s, and scores its leaf as a float32. 1.000000005
// and 1.00000001 are both the float32 1, so x is not less than the
// threshold in float32, though it is in float64.
func TestMathContextFloatTree(t *testing.T) {
	body := floatDD + `<TreeModel functionName="regression" missingValueStrategy="defaultChild" x-mathContext="%s">
 <MiningSchema><MiningField name="x"/><MiningField name="y" usageType="target"/></MiningSchema>
 <Node id="0" defaultChild="2"><True/>
  <Node id="1" score="0.1"><SimplePredicate field="x" operator="lessThan" value="1.00000001"/></Node>
  <Node id="2" score="0.2"><SimplePredicate field="x" operator="greaterOrEqual" value="1.00000001"/></Node>
 </Node>
</TreeModel>`
	for _, tc := range []struct {
		context string
		x       any
		want    float64
	}{
		{"double", 1.000000005, 0.1},
		{"float", 1.000000005, f32(0.2)},
		{"float", 0.5, f32(0.1)},
		{"float", nil, f32(0.2)}, // the default child
	} {
		lm := loadPMML(t, strings.Replace(body, "%s", tc.context, 1))
		if got := scoreRow(t, lm, "x", tc.x)["prediction(y)"]; got != tc.want {
			t.Errorf("%s, x=%v: prediction %v, want %v", tc.context, tc.x, got, tc.want)
		}
	}
}

// TestMathContextFloatSum: a float MiningModel sums in float32, where
// 2^24 + 1 is 2^24; and its Target rescales in float32. A nested model
// keeps its own context.
func TestMathContextFloatSum(t *testing.T) {
	leaf := func(score string) string {
		return `<Segment><True/><TreeModel functionName="regression" x-mathContext="float"><MiningSchema><MiningField name="x"/></MiningSchema>
<Node score="` + score + `"><True/></Node></TreeModel></Segment>`
	}
	body := floatDD + `<MiningModel functionName="regression" x-mathContext="%s">
 <MiningSchema><MiningField name="x"/><MiningField name="y" usageType="target"/></MiningSchema>
 <Targets><Target field="y" rescaleFactor="1.1" rescaleConstant="0.1"/></Targets>
 <Segmentation multipleModelMethod="sum">` + leaf("16777216") + leaf("1") + leaf("1") + `</Segmentation>
</MiningModel>`
	double := scoreRow(t, loadPMML(t, strings.Replace(body, "%s", "double", 1)), "x", 1.0)["prediction(y)"]
	factor, constant := 1.1, 0.1
	if want := 16777218*factor + constant; double != want {
		t.Errorf("double: prediction %v, want %v", double, want)
	}
	float := scoreRow(t, loadPMML(t, strings.Replace(body, "%s", "float", 1)), "x", 1.0)["prediction(y)"]
	// The explicit conversions round each product, as Go may otherwise
	// fuse a multiply and an add.
	if want := float64(float32(float32(16777216)*float32(1.1)) + float32(0.1)); float != want {
		t.Errorf("float: prediction %v, want %v", float, want)
	}
}

// TestMathContextFloatRegression: a float RegressionModel reads its
// input, coefficients and intercept as float32s and rounds each product,
// sum and step of its logit to float32, as XGBoost's sigmoid does.
func TestMathContextFloatRegression(t *testing.T) {
	doc := `<DataDictionary>
 <DataField name="x" optype="continuous" dataType="double"/>
 <DataField name="y" optype="categorical" dataType="integer"><Value value="0"/><Value value="1"/></DataField>
</DataDictionary>
<RegressionModel functionName="classification" normalizationMethod="logit" x-mathContext="float">
 <MiningSchema><MiningField name="y" usageType="target"/><MiningField name="x"/></MiningSchema>
 <RegressionTable intercept="0.1" targetCategory="1"><NumericPredictor name="x" coefficient="0.7"/></RegressionTable>
 <RegressionTable intercept="0" targetCategory="0"/>
</RegressionModel>`
	got := scoreRow(t, loadPMML(t, doc), "x", 0.3)
	x := float32(0.3)
	prod := float32(float32(0.7) * x)
	y := float32(0.1) + prod
	e := float32(math.Exp(-float64(y)))
	d := 1 + e
	p := 1 / d
	checkExact(t, got, map[string]any{"confidence(1)": float64(p), "confidence(0)": float64(1 - p), "prediction(y)": "1"})
}

// TestMathContextFloatSoftmax: softmax in float32 shifts by the largest
// value and sums the exponentials in float32.
func TestMathContextFloatSoftmax(t *testing.T) {
	doc := `<DataDictionary>
 <DataField name="x" optype="continuous" dataType="float"/>
 <DataField name="y" optype="categorical" dataType="string"><Value value="a"/><Value value="b"/><Value value="c"/></DataField>
</DataDictionary>
<RegressionModel functionName="classification" normalizationMethod="softmax" x-mathContext="float">
 <MiningSchema><MiningField name="y" usageType="target"/><MiningField name="x"/></MiningSchema>
 <RegressionTable intercept="0.3" targetCategory="a"><NumericPredictor name="x" coefficient="1.1"/></RegressionTable>
 <RegressionTable intercept="-0.2" targetCategory="b"><NumericPredictor name="x" coefficient="0.4"/></RegressionTable>
 <RegressionTable intercept="0.05" targetCategory="c"/>
</RegressionModel>`
	got := scoreRow(t, loadPMML(t, doc), "x", 0.9)
	x := float32(0.9)
	ya, yb, yc := float32(0.3)+float32(float32(1.1)*x), float32(-0.2)+float32(float32(0.4)*x), float32(0.05)
	top := max(ya, yb, yc)
	ea, eb, ec := float32(math.Exp(float64(ya-top))), float32(math.Exp(float64(yb-top))), float32(math.Exp(float64(yc-top)))
	sum := ea + eb
	sum += ec
	checkExact(t, got, map[string]any{"confidence(a)": float64(ea / sum), "confidence(b)": float64(eb / sum), "confidence(c)": float64(ec / sum)})
}

// TestMathContextFloatOtherModels: the other model elements accept a
// float context and compute in float32 too: their answers are float32s.
func TestMathContextFloatOtherModels(t *testing.T) {
	for _, tc := range []struct {
		name, doc, col string
	}{
		{"NaiveBayesModel", `<DataDictionary><DataField name="x" optype="continuous" dataType="double"/>
<DataField name="y" optype="categorical" dataType="string"><Value value="a"/><Value value="b"/></DataField></DataDictionary>
<NaiveBayesModel functionName="classification" threshold="0.001" x-mathContext="float">
<MiningSchema><MiningField name="x"/><MiningField name="y" usageType="target"/></MiningSchema>
<BayesInputs><BayesInput fieldName="x"><TargetValueStats>
<TargetValueStat value="a"><GaussianDistribution mean="0.1" variance="1.3"/></TargetValueStat>
<TargetValueStat value="b"><GaussianDistribution mean="1.7" variance="0.9"/></TargetValueStat>
</TargetValueStats></BayesInput></BayesInputs>
<BayesOutput fieldName="y"><TargetValueCounts><TargetValueCount value="a" count="3"/><TargetValueCount value="b" count="7"/></TargetValueCounts></BayesOutput>
</NaiveBayesModel>`, "confidence(a)"},
		{"RuleSetModel", `<DataDictionary><DataField name="x" optype="continuous" dataType="double"/>
<DataField name="y" optype="categorical" dataType="string"><Value value="a"/><Value value="b"/></DataField></DataDictionary>
<RuleSetModel functionName="classification" x-mathContext="float">
<MiningSchema><MiningField name="x"/><MiningField name="y" usageType="target"/></MiningSchema>
<RuleSet><RuleSelectionMethod criterion="weightedSum"/>
<SimpleRule score="a" weight="0.1"><SimplePredicate field="x" operator="lessThan" value="1.00000001"/></SimpleRule>
<SimpleRule score="b" weight="0.3"><True/></SimpleRule>
<SimpleRule score="a" weight="0.7"><True/></SimpleRule>
</RuleSet></RuleSetModel>`, "confidence(b)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := scoreRow(t, loadPMML(t, tc.doc), "x", 1.000000005)[tc.col]
			v, ok := got.(float64)
			if !ok || v != f32(v) || v <= 0 {
				t.Errorf("%s = %v, want a float32 probability", tc.col, got)
			}
		})
	}
	// The rule on x < 1.00000001 fires in float64, not in float32: b has
	// 0.3 of the three rules' weight, not of the two that fire.
	doc := `<DataDictionary><DataField name="x" optype="continuous" dataType="double"/>
<DataField name="y" optype="categorical" dataType="string"><Value value="a"/><Value value="b"/></DataField></DataDictionary>
<RuleSetModel functionName="classification" x-mathContext="float">
<MiningSchema><MiningField name="x"/><MiningField name="y" usageType="target"/></MiningSchema>
<RuleSet><RuleSelectionMethod criterion="weightedSum"/>
<SimpleRule score="a" weight="0.1"><SimplePredicate field="x" operator="lessThan" value="1.00000001"/></SimpleRule>
<SimpleRule score="b" weight="0.3"><True/></SimpleRule>
</RuleSet></RuleSetModel>`
	got := scoreRow(t, loadPMML(t, doc), "x", 1.000000005)
	checkExact(t, got, map[string]any{"confidence(b)": f32(0.3), "prediction(y)": "b"})

	cluster := `<DataDictionary><DataField name="x" optype="continuous" dataType="double"/></DataDictionary>
<ClusteringModel functionName="clustering" modelClass="centerBased" numberOfClusters="2" x-mathContext="float">
 <MiningSchema><MiningField name="x"/></MiningSchema>
 <ComparisonMeasure kind="distance"><squaredEuclidean/></ComparisonMeasure>
 <ClusteringField field="x"/>
 <Cluster name="low"><Array n="1" type="real">1</Array></Cluster>
 <Cluster name="high"><Array n="1" type="real">1.00000002</Array></Cluster>
</ClusteringModel>`
	// In float32 the row is 1 and nearer the first center; in float64 it
	// is nearer the second.
	if got := scoreRow(t, loadPMML(t, cluster), "x", 1.000000015)["cluster"]; got != "low" {
		t.Errorf("float clustering: cluster %v, want low", got)
	}
	if got := scoreRow(t, loadPMML(t, strings.Replace(cluster, ` x-mathContext="float"`, "", 1)), "x", 1.000000015)["cluster"]; got != "high" {
		t.Errorf("double clustering: cluster %v, want high", got)
	}
}

// checkExact compares the columns of a scored row with want, numbers to
// the bit: both sides are the same float32 operations in the same order.
func checkExact(t *testing.T, got map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s = %v, want %v (all: %v)", k, g, w, got)
		}
	}
}

// TestExtensionAttributesRefused: a producer's x- attribute other than a
// model element's x-mathContext may change the answer and is refused by
// name; inside an Extension, the producer's content is its own.
func TestExtensionAttributesRefused(t *testing.T) {
	for _, c := range []struct{ name, from, to, words string }{
		{"x-missingThreshold on a model", `<TreeModel functionName="regression">`,
			`<TreeModel functionName="regression" x-missingThreshold="0.5">`, "the attribute x-missingThreshold of TreeModel"},
		{"x-mathContext on a field", `<DataField name="a" optype="continuous" dataType="double"/>`,
			`<DataField name="a" optype="continuous" dataType="double" x-mathContext="float"/>`, "the attribute x-mathContext of DataField"},
		{"x- on a node", `<Node score="10">`, `<Node score="10" x-weight="2">`, "the attribute x-weight of Node"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(regressionTree, c.from, c.to, 1)
			if doc == regressionTree {
				t.Fatalf("%q is not in the document", c.from)
			}
			if err := loadPMMLErr(doc); err == nil || !strings.Contains(err.Error(), c.words) {
				t.Errorf("error %v, want %q", err, c.words)
			}
		})
	}
	doc := strings.Replace(regressionTree, `<TreeModel functionName="regression">`,
		`<TreeModel functionName="regression"><Extension name="producer"><Note x-by="hand"/></Extension>`, 1)
	if err := loadPMMLErr(doc); err != nil {
		t.Errorf("an x- attribute inside an Extension: %v", err)
	}
}
