package pmml

import (
	"errors"
	"strings"
	"testing"
)

const fieldsDoc = `<DataDictionary>
 <DataField name="age" optype="continuous" dataType="double">
  <Interval closure="closedClosed" leftMargin="0" rightMargin="120"/>
  <Value value="-1" property="missing"/>
 </DataField>
 <DataField name="color" optype="categorical" dataType="string">
  <Value value="red"/><Value value="green"/><Value value="NA" property="missing"/><Value value="???" property="invalid"/>
 </DataField>
 <DataField name="n" optype="categorical" dataType="integer"><Value value="1"/><Value value="2"/></DataField>
</DataDictionary>
<TreeModel functionName="regression"><MiningSchema>
 <MiningField name="age" outliers="asExtremeValues" lowValue="10" highValue="90" missingValueReplacement="40"/>
 <MiningField name="color" invalidValueTreatment="asMissing" missingValueReplacement="green"/>
 <MiningField name="n" invalidValueTreatment="returnInvalid"/>
</MiningSchema></TreeModel>`

func TestMiningSchemaTreatsValues(t *testing.T) {
	doc := parse(t, fieldsDoc)
	fs, err := newFieldSet(doc.DataDictionary, Limits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	steps, active, _, err := fs.miningSchema(doc.TreeModel[0].MiningSchema, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(active) != 3 {
		t.Fatalf("active slots %v, want 3", active)
	}
	tests := []struct {
		name    string
		in      []value
		want    []value
		invalid bool
	}{
		{"valid values pass", row(num(33), txt("red"), num(2)), row(num(33), txt("red"), num(2)), false},
		{"outliers clamp", row(num(5), txt("red"), num(1)), row(num(10), txt("red"), num(1)), false},
		{"high outlier clamps", row(num(100), txt("red"), num(1)), row(num(90), txt("red"), num(1)), false},
		{"missing replaced", row(value{}, value{}, num(1)), row(num(40), txt("green"), num(1)), false},
		{"declared missing values replaced", row(num(-1), txt("NA"), num(1)), row(num(40), txt("green"), num(1)), false},
		{"invalid as missing, then replaced", row(num(30), txt("blue"), num(1)), row(num(30), txt("green"), num(1)), false},
		{"declared invalid value", row(num(30), txt("???"), num(1)), row(num(30), txt("green"), num(1)), false},
		{"text number of a numeric field", row(txt("50"), txt("red"), txt("2")), row(num(50), txt("red"), num(2)), false},
		{"out of its interval is invalid", row(num(130), txt("red"), num(1)), nil, true},
		{"unknown category returns invalid", row(num(30), txt("red"), num(3)), nil, true},
		{"text that is no number returns invalid", row(txt("old"), txt("red"), num(1)), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]value(nil), tt.in...)
			err := runSteps(steps, in)
			if tt.invalid {
				if !errors.Is(err, errInvalidRow) {
					t.Fatalf("got %v, %v; want the row refused as invalid", in, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.want {
				if in[i] != tt.want[i] {
					t.Errorf("field %d = %+v, want %+v", i, in[i], tt.want[i])
				}
			}
		})
	}
}

func TestNestedMiningSchemaCopies(t *testing.T) {
	doc := parse(t, fieldsDoc)
	fs, err := newFieldSet(doc.DataDictionary, Limits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	child := fs.child()
	steps, active, _, err := child.miningSchema(doc.TreeModel[0].MiningSchema, false)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]value, fs.slots())
	copy(in, row(value{}, txt("red"), num(1)))
	if err := runSteps(steps, in); err != nil {
		t.Fatal(err)
	}
	if in[0].kind != missing {
		t.Errorf("the parent's age became %+v; a nested model must not change it", in[0])
	}
	if got := in[active[0]]; got != num(40) {
		t.Errorf("the nested model reads age %+v, want its replacement 40", got)
	}
	if slot, _, _ := child.lookup("age"); slot != active[0] {
		t.Errorf("the nested set binds age to slot %d, want its treated copy %d", slot, active[0])
	}
}

func TestFieldsRefused(t *testing.T) {
	tests := []struct{ name, dd, ms, want string }{
		{"no optype", `<DataField name="x" dataType="double"/>`, ``, `"x" has no optype`},
		{"date type", `<DataField name="x" optype="continuous" dataType="date"/>`, ``, "dataType date"},
		{"continuous string", `<DataField name="x" optype="continuous" dataType="string"/>`, ``, "continuous but its dataType is string"},
		{"twice", `<DataField name="x" optype="continuous" dataType="double"/><DataField name="x" optype="continuous" dataType="double"/>`, ``, `"x" is defined twice`},
		{"unknown mining field", `<DataField name="x" optype="continuous" dataType="double"/>`, `<MiningField name="y"/>`, `field "y", which is not defined`},
		{"usage", `<DataField name="x" optype="continuous" dataType="double"/>`, `<MiningField name="x" usageType="weird"/>`, `usageType "weird"`},
		{"outliers without bounds", `<DataField name="x" optype="continuous" dataType="double"/>`, `<MiningField name="x" outliers="asMissingValues"/>`, "without lowValue and highValue"},
		{"invalid treatment", `<DataField name="x" optype="continuous" dataType="double"/>`, `<MiningField name="x" invalidValueTreatment="guess"/>`, `invalidValueTreatment "guess"`},
		{"replacement of wrong type", `<DataField name="x" optype="continuous" dataType="double"/>`, `<MiningField name="x" missingValueReplacement="abc"/>`, `missingValueReplacement "abc", which is not a double`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := parse(t, `<DataDictionary>`+tt.dd+`</DataDictionary><TreeModel><MiningSchema>`+tt.ms+`</MiningSchema></TreeModel>`)
			fs, err := newFieldSet(doc.DataDictionary, Limits{}.withDefaults())
			if err == nil {
				_, _, _, err = fs.miningSchema(doc.TreeModel[0].MiningSchema, true)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestFieldLimit(t *testing.T) {
	doc := parse(t, `<DataDictionary><DataField name="a" optype="continuous" dataType="double"/><DataField name="b" optype="continuous" dataType="double"/></DataDictionary>`)
	_, err := newFieldSet(doc.DataDictionary, Limits{MaxFields: 1}.withDefaults())
	if err == nil || !strings.Contains(err.Error(), "more than 1 fields") {
		t.Errorf("error %v, want the field limit", err)
	}
}
