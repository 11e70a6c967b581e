package pmml

import (
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// classTree is a classification tree whose strategies tests fill in: %s is
// the TreeModel's attributes.
const classTree = `<DataDictionary>
 <DataField name="x" optype="continuous" dataType="double"/>
 <DataField name="c" optype="categorical" dataType="string"><Value value="a"/><Value value="b"/></DataField>
 <DataField name="y" optype="categorical" dataType="string"><Value value="yes"/><Value value="no"/></DataField>
</DataDictionary>
<TreeModel functionName="classification" %s>
 <MiningSchema><MiningField name="x"/><MiningField name="c"/><MiningField name="y" usageType="target"/></MiningSchema>
 <Node id="0" score="no" recordCount="10" defaultChild="2"><True/>
  <ScoreDistribution value="no" recordCount="6"/><ScoreDistribution value="yes" recordCount="4"/>
  <Node id="1" score="yes" recordCount="4"><SimplePredicate field="x" operator="lessThan" value="5"/>
   <ScoreDistribution value="yes" recordCount="3"/><ScoreDistribution value="no" recordCount="1"/>
   <Node id="1a" score="yes"><SimpleSetPredicate field="c" booleanOperator="isIn"><Array type="string" n="1">"a"</Array></SimpleSetPredicate>
    <ScoreDistribution value="yes" recordCount="3" probability="0.9"/><ScoreDistribution value="no" recordCount="0" probability="0.1"/>
   </Node>
   <Node id="1b" score="no"><True/></Node>
  </Node>
  <Node id="2" score="no" recordCount="6"><SimplePredicate field="x" operator="greaterOrEqual" value="5"/>
   <ScoreDistribution value="yes" recordCount="1" confidence="0.25"/><ScoreDistribution value="no" recordCount="5" confidence="0.75"/>
  </Node>
 </Node>
</TreeModel>`

func TestTreeClassification(t *testing.T) {
	const p, yes, no = "prediction(y)", "confidence(yes)", "confidence(no)"
	answer := func(pred any, cy, cn any) map[string]any { return map[string]any{p: pred, yes: cy, no: cn} }
	root := answer("no", 0.4, 0.6)
	child1 := answer("yes", 0.75, 0.25)
	child2 := answer("no", 0.25, 0.75)
	none := answer(nil, nil, nil)
	tests := []struct {
		name  string
		attrs string
		row   []any
		want  map[string]any
	}{
		{"leaf by set predicate, probability attributes", ``, []any{"x", 3, "c", "a"}, answer("yes", 0.9, 0.1)},
		{"leaf without distribution", ``, []any{"x", 3, "c", "b"}, answer("no", 0.0, 1.0)},
		{"confidence attributes", ``, []any{"x", 7, "c", "a"}, child2},
		{"none: missing is false, no true child is null", `missingValueStrategy="none"`, []any{"x", nil, "c", "a"}, none},
		{"none with returnLastPrediction", `missingValueStrategy="none" noTrueChildStrategy="returnLastPrediction"`, []any{"x", nil, "c", "a"}, root},
		{"lastPrediction", `missingValueStrategy="lastPrediction"`, []any{"x", nil, "c", "a"}, root},
		{"lastPrediction deeper", `missingValueStrategy="lastPrediction"`, []any{"x", 3, "c", nil}, child1},
		{"nullPrediction", `missingValueStrategy="nullPrediction"`, []any{"x", nil, "c", "a"}, none},
		{"defaultChild", `missingValueStrategy="defaultChild"`, []any{"x", nil, "c", "a"}, child2},
		{"absent column is missing", `missingValueStrategy="lastPrediction"`, []any{"c", "a"}, root},
		{"invalid category gets no prediction", ``, []any{"x", 3, "c", "z"}, none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lm := loadPMML(t, strings.Replace(classTree, "%s", tt.attrs, 1))
			checkRow(t, scoreRow(t, lm, tt.row...), tt.want)
		})
	}
}

func TestTreeSchema(t *testing.T) {
	lm := loadPMML(t, strings.Replace(classTree, "%s", "", 1))
	s := lm.Schema
	if s.Format != "pmml" || s.Producer != "hand 1" || s.Objective != "TreeModel" || s.Task != process.Classification || s.Label != "y" {
		t.Errorf("schema %+v", s)
	}
	if strings.Join(s.Classes, ",") != "yes,no" {
		t.Errorf("classes %q, want the target's values in order", s.Classes)
	}
	want := []process.ColumnSpec{{Name: "x", Kind: process.Number}, {Name: "c", Kind: process.Text}}
	if len(s.Inputs) != 2 || s.Inputs[0] != want[0] || s.Inputs[1] != want[1] {
		t.Errorf("inputs %+v, want %+v", s.Inputs, want)
	}
	if len(s.Outputs) != 3 || s.Outputs[0].Name != "prediction(y)" || s.Outputs[2].Name != "confidence(no)" {
		t.Errorf("outputs %+v", s.Outputs)
	}
}

const regressionTree = `<DataDictionary>
 <DataField name="a" optype="continuous" dataType="double"/>
 <DataField name="b" optype="continuous" dataType="double"/>
 <DataField name="y" optype="continuous" dataType="double"/>
</DataDictionary>
<TreeModel functionName="regression">
 <MiningSchema><MiningField name="a"/><MiningField name="b"/><MiningField name="y" usageType="predicted"/></MiningSchema>
 <Targets><Target field="y" rescaleFactor="2" rescaleConstant="1"/></Targets>
 <Node><True/>
  <Node score="10"><CompoundPredicate booleanOperator="and">
   <SimplePredicate field="a" operator="greaterThan" value="1"/><SimplePredicate field="b" operator="lessOrEqual" value="2"/></CompoundPredicate></Node>
  <Node score="20"><CompoundPredicate booleanOperator="or">
   <SimplePredicate field="a" operator="greaterThan" value="5"/><SimplePredicate field="b" operator="greaterThan" value="5"/></CompoundPredicate></Node>
  <Node score="30"><CompoundPredicate booleanOperator="xor">
   <SimplePredicate field="a" operator="greaterThan" value="0"/><SimplePredicate field="b" operator="greaterThan" value="0"/></CompoundPredicate></Node>
  <Node score="40"><CompoundPredicate booleanOperator="surrogate">
   <SimplePredicate field="b" operator="greaterThan" value="3"/><True/></CompoundPredicate></Node>
  <Node score="50"><True/></Node>
 </Node>
</TreeModel>`

func TestTreeRegressionCompoundPredicates(t *testing.T) {
	lm := loadPMML(t, regressionTree)
	if lm.Schema.Task != process.Regression {
		t.Fatalf("task %s", lm.Schema.Task)
	}
	tests := []struct {
		name string
		a, b any
		want float64
	}{
		{"and", 2.0, 1.0, 21},
		{"or", 6.0, 3.0, 41},
		{"xor", 1.0, -1.0, 61},
		{"surrogate takes its second when the first is unknown", -1.0, nil, 81},
		{"surrogate answers its first when known", -1.0, -1.0, 101},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRow(t, scoreRow(t, lm, "a", tt.a, "b", tt.b), map[string]any{"prediction(y)": tt.want})
		})
	}
}

func TestSimplePredicates(t *testing.T) {
	doc := parse(t, `<DataDictionary><DataField name="x" optype="continuous" dataType="double"/>
<DataField name="s" optype="categorical" dataType="string"/></DataDictionary>`)
	fs, err := newFieldSet(doc.DataDictionary, Limits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		field, op, value string
		in               value
		want             tri
	}{
		{"x", "equal", "2", num(2), isTrue},
		{"x", "equal", "2", num(2.5), isFalse},
		{"x", "notEqual", "2", num(2.5), isTrue},
		{"x", "lessThan", "2", num(2), isFalse},
		{"x", "lessOrEqual", "2", num(2), isTrue},
		{"x", "greaterThan", "2", num(2), isFalse},
		{"x", "greaterOrEqual", "2", num(2), isTrue},
		{"x", "lessThan", "2", value{}, unknown},
		{"x", "isMissing", "", value{}, isTrue},
		{"x", "isMissing", "", num(1), isFalse},
		{"x", "isNotMissing", "", num(1), isTrue},
		{"s", "equal", "red", txt("red"), isTrue},
		{"s", "notEqual", "red", txt("blue"), isTrue},
		{"s", "lessThan", "b", txt("a"), isTrue},
	}
	for _, tt := range tests {
		fn, err := compilePredicate(&pred{XMLName: xmlName("SimplePredicate"), Field: tt.field, Operator: tt.op, Value: tt.value}, fs)
		if err != nil {
			t.Fatal(err)
		}
		in := []value{{}, {}}
		if tt.field == "x" {
			in[0] = tt.in
		} else {
			in[1] = tt.in
		}
		if got := fn(in); got != tt.want {
			t.Errorf("%s %s %q on %+v = %d, want %d", tt.field, tt.op, tt.value, tt.in, got, tt.want)
		}
	}
}

func TestSimpleSetPredicate(t *testing.T) {
	doc := parse(t, `<DataDictionary><DataField name="n" optype="categorical" dataType="integer"/>
<DataField name="s" optype="categorical" dataType="string"/></DataDictionary>`)
	fs, err := newFieldSet(doc.DataDictionary, Limits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		field, op, typ, items string
		in                    value
		want                  tri
	}{
		{"s", "isIn", "string", `a "b c" "say \"hi\""`, txt("b c"), isTrue},
		{"s", "isIn", "string", `a "b c" "say \"hi\""`, txt(`say "hi"`), isTrue},
		{"s", "isIn", "string", `a "b c"`, txt("b"), isFalse},
		{"s", "isNotIn", "string", `a "b c"`, txt("b"), isTrue},
		{"n", "isIn", "int", `1 2 3`, num(2), isTrue},
		{"n", "isNotIn", "int", `1 2 3`, num(4), isTrue},
		{"n", "isIn", "int", `1 2 3`, value{}, unknown},
	}
	for _, tt := range tests {
		p := &pred{XMLName: xmlName("SimpleSetPredicate"), Field: tt.field, BooleanOperator: tt.op, Array: &array{Type: tt.typ, Text: tt.items}}
		fn, err := compilePredicate(p, fs)
		if err != nil {
			t.Fatal(err)
		}
		in := []value{{}, {}}
		if tt.field == "n" {
			in[0] = tt.in
		} else {
			in[1] = tt.in
		}
		if got := fn(in); got != tt.want {
			t.Errorf("%s %s [%s] on %+v = %d, want %d", tt.field, tt.op, tt.items, tt.in, got, tt.want)
		}
	}
}

func TestTreeRefuses(t *testing.T) {
	tests := []struct{ name, attrs, from, to, want string }{
		{"weightedConfidence", `missingValueStrategy="weightedConfidence"`, ``, ``, "missingValueStrategy weightedConfidence is not supported"},
		{"aggregateNodes", `missingValueStrategy="aggregateNodes"`, ``, ``, "missingValueStrategy aggregateNodes is not supported"},
		{"noTrueChildStrategy", `noTrueChildStrategy="guess"`, ``, ``, `noTrueChildStrategy "guess"`},
		{"unknown class", ``, `score="no"><True/></Node>`, `score="maybe"><True/></Node>`, `class "maybe", which the target field "y" does not list`},
		{"node regression", ``, `<Node id="1b" score="no"><True/>`, `<Node id="1b" score="no"><True/><Regression/>`, "PMML element Regression is not supported"},
		{"two predicates", ``, `<Node id="1b" score="no"><True/>`, `<Node id="1b" score="no"><True/><False/>`, "more than one predicate"},
		{"bad operator", ``, `operator="lessThan"`, `operator="below"`, `operator "below"`},
		{"compound of one", ``, `<Node id="1b" score="no"><True/>`, `<Node id="1b" score="no"><CompoundPredicate booleanOperator="and"><True/></CompoundPredicate>`, "has 1 predicates"},
		{"function", ``, `functionName="classification"`, `functionName="clustering"`, `TreeModel with functionName "clustering" is not supported`},
		{"isScorable", `isScorable="false"`, ``, ``, `isScorable="false"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.Replace(classTree, "%s", tt.attrs, 1)
			if tt.from != "" {
				doc = strings.Replace(doc, tt.from, tt.to, 1)
			}
			err := loadPMMLErr(doc)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
