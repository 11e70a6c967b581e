package pmml

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry/process"
)

func ptr(v float64) *float64 { return &v }

// domainDoc is a regression tree reading x, whose DataField is field, and
// predicting t.
func domainDoc(field string) string {
	return `<DataDictionary>` + field + `<DataField name="t" optype="continuous" dataType="double"/></DataDictionary>
<TreeModel functionName="regression"><MiningSchema><MiningField name="t" usageType="target"/><MiningField name="x"/></MiningSchema>
<Node score="1"><True/></Node></TreeModel>`
}

// TestDomains: the schema declares what a field's DataField says of its
// valid values: the bounds of the union of a continuous field's
// Intervals, as closed as any of them is at its end, and a categorical or
// ordinal field's valid Values.
func TestDomains(t *testing.T) {
	continuous := func(body string) string {
		return `<DataField name="x" optype="continuous" dataType="double">` + body + `</DataField>`
	}
	tests := []struct {
		name  string
		field string
		want  []process.Domain // nil: none
	}{
		{"no Interval", continuous(``), nil},
		{"closed", continuous(`<Interval closure="closedClosed" leftMargin="0" rightMargin="120"/>`),
			[]process.Domain{{Name: "x", Min: ptr(0), Max: ptr(120)}}},
		{"open", continuous(`<Interval closure="openOpen" leftMargin="-1" rightMargin="1"/>`),
			[]process.Domain{{Name: "x", Min: ptr(-1), Max: ptr(1), MinOpen: true, MaxOpen: true}}},
		{"half open", continuous(`<Interval closure="closedOpen" leftMargin="0" rightMargin="1"/>`),
			[]process.Domain{{Name: "x", Min: ptr(0), Max: ptr(1), MaxOpen: true}}},
		{"a union's bounds", continuous(`<Interval closure="closedClosed" leftMargin="5" rightMargin="10"/><Interval closure="openOpen" leftMargin="0" rightMargin="1"/>`),
			[]process.Domain{{Name: "x", Min: ptr(0), Max: ptr(10), MinOpen: true}}},
		{"an end one interval closes", continuous(`<Interval closure="openOpen" leftMargin="0" rightMargin="1"/><Interval closure="closedOpen" leftMargin="0" rightMargin="1"/>`),
			[]process.Domain{{Name: "x", Min: ptr(0), Max: ptr(1), MaxOpen: true}}},
		{"unbounded above", continuous(`<Interval closure="closedOpen" leftMargin="0"/>`),
			[]process.Domain{{Name: "x", Min: ptr(0)}}},
		{"an unbounded interval unbounds the union", continuous(`<Interval closure="closedClosed" leftMargin="0" rightMargin="1"/><Interval closure="openClosed" rightMargin="0.5"/>`),
			[]process.Domain{{Name: "x", Max: ptr(1)}}},
		{"an infinite margin bounds nothing", continuous(`<Interval closure="closedClosed" leftMargin="-INF" rightMargin="3"/>`),
			[]process.Domain{{Name: "x", Max: ptr(3)}}},
		{"no bound at all", continuous(`<Interval closure="openOpen"/>`), nil},
		{"an empty interval adds nothing", continuous(`<Interval closure="closedClosed" leftMargin="0" rightMargin="1"/><Interval closure="openClosed" leftMargin="20" rightMargin="20"/>`),
			[]process.Domain{{Name: "x", Min: ptr(0), Max: ptr(1)}}},
		{"a point is an interval", continuous(`<Interval closure="closedClosed" leftMargin="2" rightMargin="2"/>`),
			[]process.Domain{{Name: "x", Min: ptr(2), Max: ptr(2)}}},
		{"a continuous field's Values name no valid value", continuous(`<Value value="-1" property="missing"/><Value value="7"/><Interval closure="closedClosed" leftMargin="0" rightMargin="5"/>`),
			[]process.Domain{{Name: "x", Min: ptr(0), Max: ptr(5)}}},
		{"categorical text", `<DataField name="x" optype="categorical" dataType="string"><Value value="red"/><Value value="green" property="valid"/><Value value="NA" property="missing"/><Value value="???" property="invalid"/><Value value="red"/></DataField>`,
			[]process.Domain{{Name: "x", Values: []string{"red", "green"}}}},
		{"categorical integers", `<DataField name="x" optype="categorical" dataType="integer"><Value value="3"/><Value value=" 1 "/><Value value="2"/><Value value="many"/><Value value="3.0"/></DataField>`,
			[]process.Domain{{Name: "x", Numbers: []float64{3, 1, 2}}}},
		{"ordinal doubles", `<DataField name="x" optype="ordinal" dataType="double"><Value value="0.5" property="valid"/><Value value="1.5"/></DataField>`,
			[]process.Domain{{Name: "x", Numbers: []float64{0.5, 1.5}}}},
		{"booleans", `<DataField name="x" optype="categorical" dataType="boolean"><Value value="true"/><Value value="false"/></DataField>`,
			[]process.Domain{{Name: "x", Values: []string{"true", "false"}}}},
		{"categorical without Values", `<DataField name="x" optype="categorical" dataType="string"/>`, nil},
		{"only missing Values", `<DataField name="x" optype="categorical" dataType="string"><Value value="NA" property="missing"/></DataField>`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lm := loadPMML(t, domainDoc(tt.field))
			if diff := cmp.Diff(tt.want, lm.Schema.Domains); diff != "" {
				t.Errorf("domains (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDomainsOfInputs: only the model's active fields have domains, in
// the order of its MiningSchema; its target and supplementary fields,
// however declared, have none.
func TestDomainsOfInputs(t *testing.T) {
	lm := loadPMML(t, `<DataDictionary>
 <DataField name="y" optype="categorical" dataType="string"><Value value="no"/><Value value="yes"/></DataField>
 <DataField name="a" optype="continuous" dataType="double"><Interval closure="closedClosed" leftMargin="0" rightMargin="1"/></DataField>
 <DataField name="b" optype="continuous" dataType="double"/>
 <DataField name="c" optype="categorical" dataType="string"><Value value="u"/><Value value="v"/></DataField>
 <DataField name="s" optype="categorical" dataType="string"><Value value="w"/></DataField>
</DataDictionary>
<TreeModel functionName="classification"><MiningSchema>
 <MiningField name="y" usageType="target"/><MiningField name="c"/><MiningField name="s" usageType="supplementary"/><MiningField name="b"/><MiningField name="a"/>
</MiningSchema>
<Node score="no"><True/><ScoreDistribution value="no" recordCount="1"/><ScoreDistribution value="yes" recordCount="1"/></Node></TreeModel>`)
	want := []process.Domain{{Name: "c", Values: []string{"u", "v"}}, {Name: "a", Min: ptr(0), Max: ptr(1)}}
	if diff := cmp.Diff(want, lm.Schema.Domains); diff != "" {
		t.Errorf("domains (-want +got):\n%s", diff)
	}
}

// TestFixtureDomains: of the files scikit-learn's, R's and JPMML's
// exporters wrote, only a categorical input declares its values (a
// classifier's classes are its target's): they bound no continuous
// field.
func TestFixtureDomains(t *testing.T) {
	tests := []struct {
		file string
		want []process.Domain
	}{
		{"diabetes_onehot.pmml", []process.Domain{{Name: "sex", Values: []string{"female", "male"}}}},
		{"iris_tree.pmml", nil},
		{"r/iris_rpart.pmml", []process.Domain{{Name: "Species", Values: []string{"setosa", "versicolor", "virginica"}}}},
		{"xgboost/iris_softprob.pmml", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			lm, err := Format{}.Load(b, process.ModelMetadata{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, lm.Schema.Domains); diff != "" {
				t.Errorf("domains (-want +got):\n%s", diff)
			}
		})
	}
}
