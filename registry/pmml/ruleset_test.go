package pmml

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// ruleSetPMML has a simple rule, a compound rule holding two, and a rule
// with a ScoreDistribution, as RapidMiner's rule learners write them.
const ruleSetPMML = `
<RuleSetModel functionName="classification">
  <MiningSchema/>
  <RuleSet defaultScore="no" defaultConfidence="0.6">
    <RuleSelectionMethod criterion="CRITERION"/>
    <Extension name="producer-note"/>
    <SimpleRule id="r1" score="yes" confidence="0.9" weight="0.5">
      <Extension name="producer-note"/>
      <SimplePredicate field="age" operator="greaterThan" value="60"/>
    </SimpleRule>
    <CompoundRule>
      <SimplePredicate field="color" operator="equal" value="red"/>
      <SimpleRule id="r2" score="no" confidence="0.7" weight="0.8">
        <SimplePredicate field="age" operator="lessThan" value="30"/>
      </SimpleRule>
      <SimpleRule id="r3" score="yes" confidence="0.55" weight="0.3">
        <True/>
      </SimpleRule>
    </CompoundRule>
    <SimpleRule id="r4" score="yes" confidence="0.65" weight="0.4">
      <SimplePredicate field="age" operator="greaterThan" value="40"/>
      <ScoreDistribution value="yes" recordCount="13"/>
      <ScoreDistribution value="no" recordCount="7"/>
    </SimpleRule>
  </RuleSet>
</RuleSetModel>`

var ruleSchema = schema{fields: []string{"age", "color:string"}, classes: []string{"no", "yes"}}

func TestRuleSet(t *testing.T) {
	type want struct {
		class   string
		no, yes float64
	}
	cases := []struct {
		name                               string
		r                                  inputs
		firstHit, weightedSum, weightedMax want
	}{
		// r1, r3 and r4 fire; r1 comes first and weighs most; yes weighs
		// 0.5 + 0.3 + 0.4 over 3 rules
		{"three fire", inputs{"age": 70.0, "color": "red"}, want{"yes", 0, 0.9}, want{"yes", 0, 1.2 / 3}, want{"yes", 0, 0.9}},
		// r2 and r3 fire: no weighs 0.8 over 2, yes 0.3 over 2
		{"compound", inputs{"age": 20.0, "color": "red"}, want{"no", 0.7, 0}, want{"no", 0.4, 0.15}, want{"no", 0.7, 0}},
		// only r4 fires: its distribution, 13 and 7 of 20
		{"distribution", inputs{"age": 50.0, "color": "blue"}, want{"yes", 0.35, 0.65}, want{"yes", 0, 0.4}, want{"yes", 0.35, 0.65}},
		// none fires: the default
		{"default", inputs{"age": 35.0, "color": "blue"}, want{"no", 0.6, 0}, want{"no", 0.6, 0}, want{"no", 0.6, 0}},
		// a predicate on a missing value does not fire
		{"missing", inputs{}, want{"no", 0.6, 0}, want{"no", 0.6, 0}, want{"no", 0.6, 0}},
		{"missing age", inputs{"color": "red"}, want{"yes", 0, 0.55}, want{"yes", 0, 0.3}, want{"yes", 0, 0.55}},
	}
	for _, c := range cases {
		for _, crit := range []struct {
			name string
			want want
		}{{"firstHit", c.firstHit}, {"weightedSum", c.weightedSum}, {"weightedMax", c.weightedMax}} {
			t.Run(c.name+"/"+crit.name, func(t *testing.T) {
				elem := strings.Replace(ruleSetPMML, "CRITERION", crit.name, 1)
				got := scoreElement(t, compileRuleSet, elem, ruleSchema, c.r)
				checkProbs(t, got, crit.want.class, crit.want.no, crit.want.yes)
			})
		}
	}
}

func TestRuleSetNoDefault(t *testing.T) {
	elem := strings.Replace(ruleSetPMML, `defaultScore="no" defaultConfidence="0.6"`, "", 1)
	elem = strings.Replace(elem, "CRITERION", "firstHit", 1)
	got := scoreElement(t, compileRuleSet, elem, ruleSchema, inputs{"age": 35.0})
	checkProbs(t, got, "", math.NaN(), math.NaN())
}

func TestRuleSetRefuses(t *testing.T) {
	cases := []struct {
		name, from, to, want string
	}{
		{"criterion", "CRITERION", "bestHit", `criterion "bestHit"`},
		{"score", `score="no" confidence="0.7"`, `score="maybe" confidence="0.7"`, `SimpleRule "r2" names the class "maybe"`},
		{"default", `defaultScore="no"`, `defaultScore="maybe"`, `defaultScore names the class "maybe"`},
		{"element", `<CompoundRule>`, `<DecisionRule/><CompoundRule>`, "DecisionRule"},
		{"predicate", `<True/>`, ``, `SimpleRule "r3" has no predicate`},
		{"field", `field="color"`, `field="colour"`, `"colour"`},
		{"selection", `<RuleSelectionMethod criterion="CRITERION"/>`, ``, "no RuleSelectionMethod"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			elem := strings.Replace(strings.Replace(ruleSetPMML, c.from, c.to, 1), "CRITERION", "firstHit", 1)
			_, _, err := compileElement(compileRuleSet, elem, ruleSchema)
			if !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want ErrModelInvalid naming %s", err, c.want)
			}
		})
	}
}

// TestRuleSetLoad scores the rule set above through Load.
func TestRuleSetLoad(t *testing.T) {
	elem := strings.Replace(ruleSetPMML, "<MiningSchema/>", `<MiningSchema>
    <MiningField name="age"/><MiningField name="color"/><MiningField name="y" usageType="target"/>
  </MiningSchema>`, 1)
	lm := loadPMML(t, `
<DataDictionary>
  <DataField name="age" optype="continuous" dataType="double"/>
  <DataField name="color" optype="categorical" dataType="string"/>
  <DataField name="y" optype="categorical" dataType="string"><Value value="no"/><Value value="yes"/></DataField>
</DataDictionary>`+strings.Replace(elem, "CRITERION", "firstHit", 1))
	checkRow(t, scoreRow(t, lm, "age", 20.0, "color", "red"), map[string]any{
		"prediction(y)": "no", "confidence(no)": 0.7, "confidence(yes)": 0.0,
	})
	checkRow(t, scoreRow(t, lm, "age", 50.0, "color", "blue"), map[string]any{
		"prediction(y)": "yes", "confidence(no)": 0.35, "confidence(yes)": 0.65,
	})
}
