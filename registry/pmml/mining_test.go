package pmml

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// stump is a one-split TreeModel on x: below t it answers lo, else hi.
// For a classifier, pLo and pHi are the probabilities of class "a" (the
// rest being "b"), written as record counts out of 100.
func stump(function string, t float64, lo, hi string, pLo, pHi float64, schema string) string {
	dist := func(pa float64) string {
		if function != "classification" {
			return ""
		}
		return fmt.Sprintf(`<ScoreDistribution value="a" recordCount="%g"/><ScoreDistribution value="b" recordCount="%g"/>`, pa*100, 100-pa*100)
	}
	return fmt.Sprintf(`<TreeModel functionName="%s"><MiningSchema>%s</MiningSchema><Node><True/>
<Node score="%s"><SimplePredicate field="x" operator="lessThan" value="%g"/>%s</Node>
<Node score="%s"><True/>%s</Node></Node></TreeModel>`, function, schema, lo, t, dist(pLo), hi, dist(pHi))
}

const (
	classDD = `<DataDictionary><DataField name="x" optype="continuous" dataType="double"/>
<DataField name="y" optype="categorical" dataType="string"><Value value="a"/><Value value="b"/></DataField></DataDictionary>`
	regDD = `<DataDictionary><DataField name="x" optype="continuous" dataType="double"/>
<DataField name="y" optype="continuous" dataType="double"/></DataDictionary>`
	classSchema = `<MiningField name="x"/><MiningField name="y" usageType="target"/>`
)

// segments wraps trees in a MiningModel; weights and predicates are given
// per segment ("" is weight 1 and True).
func segments(function, method, extra string, segs ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<MiningModel functionName="%s"><MiningSchema>%s</MiningSchema>%s<Segmentation multipleModelMethod="%s">`, function, classSchema, extra, method)
	for i, s := range segs {
		fmt.Fprintf(&b, `<Segment id="%d" weight="%d"><True/>%s</Segment>`, i+1, i+1, s)
	}
	b.WriteString(`</Segmentation></MiningModel>`)
	return b.String()
}

func TestMiningClassification(t *testing.T) {
	trees := []string{
		stump("classification", 5, "a", "b", 0.8, 0.3, classSchema),
		stump("classification", 3, "a", "b", 0.6, 0.1, classSchema),
		stump("classification", 7, "b", "b", 0.4, 0.2, classSchema),
	}
	tests := []struct {
		method string
		x      float64
		pa     float64
		pred   string
	}{
		// x=4: trees answer a (0.8), b (0.1), b (0.4).
		{"average", 4, (0.8 + 0.1 + 0.4) / 3, "b"},
		{"weightedAverage", 4, (1*0.8 + 2*0.1 + 3*0.4) / 6, "b"},
		{"majorityVote", 4, 1.0 / 3, "b"},
		{"weightedMajorityVote", 4, 1.0 / 6, "b"},
		// x=2: a (0.8), a (0.6), b (0.4).
		{"average", 2, (0.8 + 0.6 + 0.4) / 3, "a"},
		{"majorityVote", 2, 2.0 / 3, "a"},
		{"weightedMajorityVote", 2, 3.0 / 6, "a"},
		{"selectFirst", 4, 0.8, "a"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s x=%g", tt.method, tt.x), func(t *testing.T) {
			lm := loadPMML(t, classDD+segments("classification", tt.method, "", trees...))
			checkRow(t, scoreRow(t, lm, "x", tt.x), map[string]any{
				"prediction(y)": tt.pred, "confidence(a)": tt.pa, "confidence(b)": 1 - tt.pa,
			})
		})
	}
}

func TestMiningRegression(t *testing.T) {
	schema := `<MiningField name="x"/><MiningField name="y" usageType="target"/>`
	trees := []string{
		stump("regression", 5, "1", "2", 0, 0, schema),
		stump("regression", 3, "10", "20", 0, 0, schema),
		stump("regression", 7, "100", "200", 0, 0, schema),
		stump("regression", 9, "1000", "2000", 0, 0, schema),
	}
	// x=4: 1, 20, 100, 1000.
	tests := []struct {
		method, extra string
		want          float64
	}{
		{"sum", "", 1121},
		{"weightedSum", "", 1*1 + 2*20 + 3*100 + 4*1000},
		{"average", "", 1121.0 / 4},
		{"weightedAverage", "", (1*1 + 2*20 + 3*100 + 4*1000) / 10.0},
		{"median", "", 60},
		{"selectFirst", "", 1},
		{"sum", `<Targets><Target field="y" rescaleFactor="0.1" rescaleConstant="-2"/></Targets>`, 1121*0.1 - 2},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.extra, func(t *testing.T) {
			lm := loadPMML(t, regDD+segments("regression", tt.method, tt.extra, trees...))
			checkRow(t, scoreRow(t, lm, "x", 4.0), map[string]any{"prediction(y)": tt.want})
		})
	}
}

func TestMiningSegmentPredicates(t *testing.T) {
	schema := `<MiningField name="x"/><MiningField name="y" usageType="target"/>`
	doc := regDD + `<MiningModel functionName="regression"><MiningSchema>` + schema + `</MiningSchema>
<Segmentation multipleModelMethod="selectFirst">
<Segment><SimplePredicate field="x" operator="greaterThan" value="10"/>` + stump("regression", 20, "1", "2", 0, 0, schema) + `</Segment>
<Segment><True/>` + stump("regression", 0, "3", "4", 0, 0, schema) + `</Segment>
</Segmentation></MiningModel>`
	lm := loadPMML(t, doc)
	checkRow(t, scoreRow(t, lm, "x", 15.0), map[string]any{"prediction(y)": 1.0})
	checkRow(t, scoreRow(t, lm, "x", 5.0), map[string]any{"prediction(y)": 4.0})
}

// TestModelChain chains a regression tree, whose predicted value and a
// transformation of it are output fields, into a classification tree that
// splits on them.
func TestModelChain(t *testing.T) {
	doc := classDD + `<MiningModel functionName="classification"><MiningSchema>` + classSchema + `</MiningSchema>
<Segmentation multipleModelMethod="modelChain">
<Segment id="1"><True/>
 <TreeModel functionName="regression"><MiningSchema><MiningField name="x"/></MiningSchema>
  <Output>
   <OutputField name="s1" optype="continuous" dataType="double" feature="predictedValue"/>
   <OutputField name="s2" optype="continuous" dataType="double" feature="transformedValue"><Apply function="*"><FieldRef field="s1"/><Constant>10</Constant></Apply></OutputField>
  </Output>
  <Node><True/><Node score="1"><SimplePredicate field="x" operator="lessThan" value="5"/></Node><Node score="2"><True/></Node></Node>
 </TreeModel>
</Segment>
<Segment id="2"><True/>
 <TreeModel functionName="classification"><MiningSchema><MiningField name="s2"/><MiningField name="y" usageType="target"/></MiningSchema>
  <Node><True/>
   <Node score="a"><SimplePredicate field="s2" operator="lessThan" value="15"/><ScoreDistribution value="a" recordCount="9"/><ScoreDistribution value="b" recordCount="1"/></Node>
   <Node score="b"><True/><ScoreDistribution value="a" recordCount="3"/><ScoreDistribution value="b" recordCount="7"/></Node>
  </Node>
 </TreeModel>
</Segment>
</Segmentation></MiningModel>`
	lm := loadPMML(t, doc)
	checkRow(t, scoreRow(t, lm, "x", 1.0), map[string]any{"prediction(y)": "a", "confidence(a)": 0.9})
	checkRow(t, scoreRow(t, lm, "x", 6.0), map[string]any{"prediction(y)": "b", "confidence(a)": 0.3})
	if len(lm.Schema.Inputs) != 1 || lm.Schema.Objective != "MiningModel" {
		t.Errorf("schema %+v: want one input and the objective MiningModel", lm.Schema)
	}
}

func TestMiningRefuses(t *testing.T) {
	tree := stump("classification", 5, "a", "b", 0.8, 0.3, classSchema)
	tests := []struct{ name, doc, want string }{
		{"method", classDD + segments("classification", "sum", "", tree), `multipleModelMethod "sum" of a classification MiningModel is not supported`},
		{"selectAll", classDD + segments("classification", "selectAll", "", tree), `"selectAll"`},
		{"unknown segment model", classDD + segments("classification", "average", "", `<SupportVectorMachineModel/>`), "PMML element SupportVectorMachineModel is not supported"},
		{"no segments", classDD + segments("classification", "average", ""), "has no Segment"},
		{"regression segment in a vote", classDD + segments("classification", "majorityVote", "", stump("regression", 5, "1", "2", 0, 0, classSchema)), `a regression TreeModel in the Segment "1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := loadPMMLErr(tt.doc)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	t.Run("segment limit", func(t *testing.T) {
		_, err := Format{Limits: Limits{MaxSegments: 2}}.Load([]byte(wrap(classDD+segments("classification", "average", "", tree, tree, tree))), registryMeta())
		if err == nil || !strings.Contains(err.Error(), "more than 2 segments") {
			t.Errorf("error %v, want the segment limit", err)
		}
	})
}

// TestGradientBoosting scores a classifier shaped as sklearn2pmml writes
// scikit-learn's GradientBoostingClassifier: a modelChain of a sum of
// regression trees (scaled by the learning rate and shifted by the initial
// score through Targets) whose value is an output field, then a logistic
// RegressionModel of it.
func TestGradientBoosting(t *testing.T) {
	schema := `<MiningField name="x"/>`
	doc := classDD + `<MiningModel functionName="classification"><MiningSchema>` + classSchema + `</MiningSchema>
<Segmentation multipleModelMethod="modelChain">
<Segment id="1"><True/>
 <MiningModel functionName="regression"><MiningSchema>` + schema + `</MiningSchema>
  <Output><OutputField name="decisionFunction(b)" optype="continuous" dataType="double" feature="predictedValue" isFinalResult="false"/></Output>
  <Targets><Target rescaleFactor="0.1" rescaleConstant="-1.15"/></Targets>
  <Segmentation multipleModelMethod="sum">
   <Segment id="1"><True/>` + strings.Replace(stump("regression", 5, "1", "2", 0, 0, schema), `<TreeModel `, `<TreeModel missingValueStrategy="nullPrediction" noTrueChildStrategy="returnLastPrediction" `, 1) + `</Segment>
   <Segment id="2"><True/>` + stump("regression", 3, "10", "20", 0, 0, schema) + `</Segment>
  </Segmentation>
 </MiningModel>
</Segment>
<Segment id="2"><True/>
 <RegressionModel functionName="classification" normalizationMethod="logit">
  <MiningSchema><MiningField name="y" usageType="target"/><MiningField name="decisionFunction(b)"/></MiningSchema>
  <RegressionTable intercept="0" targetCategory="b"><NumericPredictor name="decisionFunction(b)" coefficient="1"/></RegressionTable>
  <RegressionTable intercept="0" targetCategory="a"/>
 </RegressionModel>
</Segment>
</Segmentation></MiningModel>`
	lm := loadPMML(t, doc)
	for _, tt := range []struct{ x, margin float64 }{
		{4, (1+20)*0.1 - 1.15},
		{2, (1+10)*0.1 - 1.15},
		{6, (2+20)*0.1 - 1.15},
	} {
		pb := 1 / (1 + math.Exp(-tt.margin))
		pred := "a"
		if pb > 0.5 {
			pred = "b"
		}
		checkRow(t, scoreRow(t, lm, "x", tt.x), map[string]any{"prediction(y)": pred, "confidence(b)": pb, "confidence(a)": 1 - pb})
	}
}
