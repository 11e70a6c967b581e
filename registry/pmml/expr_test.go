package pmml

import (
	"strings"
	"testing"
)

// derive compiles the DerivedFields of a TransformationDictionary over the
// fields x (double) and c (string), runs them on x and c, and returns the
// value of the field named want.
func derive(t *testing.T, fields string, x, c value, want string) (value, error) {
	t.Helper()
	doc := parse(t, `<DataDictionary>
<DataField name="x" optype="continuous" dataType="double"/>
<DataField name="c" optype="categorical" dataType="string"/>
</DataDictionary><TransformationDictionary>`+fields+`</TransformationDictionary>`)
	fs, err := newFieldSet(doc.DataDictionary, Limits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	steps, err := fs.derivedFields(doc.TransformationDictionary.DerivedFields)
	if err != nil {
		return value{}, err
	}
	in := make([]value, fs.slots())
	in[0], in[1] = x, c
	if err := runSteps(steps, in); err != nil {
		t.Fatal(err)
	}
	slot, _, ok := fs.lookup(want)
	if !ok {
		t.Fatalf("no field %q", want)
	}
	return in[slot], nil
}

func df(name, dataType, body string) string {
	optype := "continuous"
	if dataType == "string" || dataType == "boolean" {
		optype = "categorical"
	}
	return `<DerivedField name="` + name + `" optype="` + optype + `" dataType="` + dataType + `">` + body + `</DerivedField>`
}

func TestDerivedFields(t *testing.T) {
	norm := `<NormContinuous field="x" outliers="%s" mapMissingTo="-1"><LinearNorm orig="0" norm="0"/><LinearNorm orig="10" norm="1"/><LinearNorm orig="20" norm="3"/></NormContinuous>`
	disc := `<Discretize field="x" defaultValue="none" mapMissingTo="unknown" dataType="string">
<DiscretizeBin binValue="low"><Interval closure="closedOpen" rightMargin="10"/></DiscretizeBin>
<DiscretizeBin binValue="mid"><Interval closure="closedOpen" leftMargin="10" rightMargin="20"/></DiscretizeBin>
</Discretize>`
	mapv := `<MapValues outputColumn="out" defaultValue="0" mapMissingTo="-1" dataType="double">
<FieldColumnPair field="c" column="in"/>
<InlineTable><row><in>red</in><out>1</out></row><row><in>green</in><out>2</out></row></InlineTable>
</MapValues>`
	apply := func(fn string, args ...string) string {
		return `<Apply function="` + fn + `">` + strings.Join(args, "") + `</Apply>`
	}
	x := `<FieldRef field="x"/>`
	k := func(s string) string { return `<Constant>` + s + `</Constant>` }
	tests := []struct {
		name     string
		dataType string
		body     string
		x, c     value
		want     value
	}{
		{"FieldRef", "double", x, num(2.5), value{}, num(2.5)},
		{"FieldRef mapMissingTo", "double", `<FieldRef field="x" mapMissingTo="7"/>`, value{}, value{}, num(7)},
		{"Constant", "double", `<Constant dataType="double">1.5</Constant>`, num(0), value{}, num(1.5)},
		{"Constant missing", "double", `<Constant missing="true"/>`, num(0), value{}, value{}},
		{"NormContinuous inside", "double", strings.Replace(norm, "%s", "asIs", 1), num(15), value{}, num(2)},
		{"NormContinuous at a point", "double", strings.Replace(norm, "%s", "asIs", 1), num(10), value{}, num(1)},
		{"NormContinuous extrapolates", "double", strings.Replace(norm, "%s", "asIs", 1), num(30), value{}, num(5)},
		{"NormContinuous extreme", "double", strings.Replace(norm, "%s", "asExtremeValues", 1), num(-5), value{}, num(0)},
		{"NormContinuous outlier missing", "double", strings.Replace(norm, "%s", "asMissingValues", 1), num(25), value{}, value{}},
		{"NormContinuous missing", "double", strings.Replace(norm, "%s", "asIs", 1), value{}, value{}, num(-1)},
		{"NormDiscrete match", "double", `<NormDiscrete field="c" value="red"/>`, num(0), txt("red"), num(1)},
		{"NormDiscrete other", "double", `<NormDiscrete field="c" value="red"/>`, num(0), txt("blue"), num(0)},
		{"NormDiscrete missing", "double", `<NormDiscrete field="c" value="red" mapMissingTo="0.5"/>`, num(0), value{}, num(0.5)},
		{"Discretize low", "string", disc, num(-3), value{}, txt("low")},
		{"Discretize right margin open", "string", disc, num(10), value{}, txt("mid")},
		{"Discretize default", "string", disc, num(20), value{}, txt("none")},
		{"Discretize missing", "string", disc, value{}, value{}, txt("unknown")},
		{"MapValues", "double", mapv, num(0), txt("green"), num(2)},
		{"MapValues default", "double", mapv, num(0), txt("blue"), num(0)},
		{"MapValues missing", "double", mapv, num(0), value{}, num(-1)},
		{"plus", "double", apply("+", x, k("2")), num(3), value{}, num(5)},
		{"minus", "double", apply("-", x, k("2")), num(3), value{}, num(1)},
		{"times", "double", apply("*", x, k("2")), num(3), value{}, num(6)},
		{"divide", "double", apply("/", x, k("2")), num(3), value{}, num(1.5)},
		{"divide by zero is missing", "double", apply("/", x, k("0")), num(3), value{}, value{}},
		{"min", "double", apply("min", x, k("2"), k("5")), num(3), value{}, num(2)},
		{"max", "double", apply("max", x, k("2"), k("5")), num(3), value{}, num(5)},
		{"sum", "double", apply("sum", x, k("2"), k("5")), num(3), value{}, num(10)},
		{"avg", "double", apply("avg", x, k("2"), k("7")), num(3), value{}, num(4)},
		{"log10", "double", apply("log10", x), num(1000), value{}, num(3)},
		{"ln", "double", apply("ln", x), num(1), value{}, num(0)},
		{"exp", "double", apply("exp", x), num(0), value{}, num(1)},
		{"sqrt", "double", apply("sqrt", x), num(9), value{}, num(3)},
		{"abs", "double", apply("abs", x), num(-9), value{}, num(9)},
		{"pow", "double", apply("pow", x, k("3")), num(2), value{}, num(8)},
		{"threshold", "double", apply("threshold", x, k("3")), num(4), value{}, num(1)},
		{"floor", "double", apply("floor", x), num(-1.5), value{}, num(-2)},
		{"ceil", "double", apply("ceil", x), num(1.2), value{}, num(2)},
		{"round half up", "double", apply("round", x), num(2.5), value{}, num(3)},
		{"round negative half up", "double", apply("round", x), num(-2.5), value{}, num(-2)},
		{"isMissing", "boolean", apply("isMissing", x), value{}, value{}, txt("true")},
		{"isNotMissing", "boolean", apply("isNotMissing", x), value{}, value{}, txt("false")},
		{"equal text", "boolean", apply("equal", `<FieldRef field="c"/>`, k("red")), num(0), txt("red"), txt("true")},
		{"notEqual", "boolean", apply("notEqual", x, k("1")), num(1), value{}, txt("false")},
		{"lessThan", "boolean", apply("lessThan", x, k("1")), num(0.5), value{}, txt("true")},
		{"lessOrEqual", "boolean", apply("lessOrEqual", x, k("1")), num(1), value{}, txt("true")},
		{"greaterThan", "boolean", apply("greaterThan", x, k("1")), num(1), value{}, txt("false")},
		{"greaterOrEqual", "boolean", apply("greaterOrEqual", x, k("1")), num(1), value{}, txt("true")},
		{"and", "boolean", apply("and", apply("greaterThan", x, k("0")), apply("lessThan", x, k("2"))), num(1), value{}, txt("true")},
		{"or", "boolean", apply("or", apply("greaterThan", x, k("5")), apply("lessThan", x, k("0"))), num(1), value{}, txt("false")},
		{"not", "boolean", apply("not", apply("greaterThan", x, k("5"))), num(1), value{}, txt("true")},
		{"if then", "double", apply("if", apply("greaterThan", x, k("0")), k("10"), k("20")), num(1), value{}, num(10)},
		{"if else", "double", apply("if", apply("greaterThan", x, k("0")), k("10"), k("20")), num(-1), value{}, num(20)},
		{"if without else", "double", apply("if", apply("greaterThan", x, k("0")), k("10")), num(-1), value{}, value{}},
		{"missing argument", "double", apply("+", x, k("1")), value{}, value{}, value{}},
		{"Apply mapMissingTo", "double", `<Apply function="+" mapMissingTo="9">` + x + k("1") + `</Apply>`, value{}, value{}, num(9)},
		{"Apply defaultValue", "double", `<Apply function="/" defaultValue="8">` + x + k("0") + `</Apply>`, num(1), value{}, num(8)},
		{"text result cast to double", "double", `<Constant dataType="string">4.5</Constant>`, num(0), value{}, num(4.5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := derive(t, df("d", tt.dataType, tt.body), tt.x, tt.c, "d")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDerivedFieldsInAnyOrder(t *testing.T) {
	// b reads a, which the file lists after it.
	fields := df("b", "double", `<Apply function="*"><FieldRef field="a"/><Constant>2</Constant></Apply>`) +
		df("a", "double", `<Apply function="+"><FieldRef field="x"/><Constant>1</Constant></Apply>`)
	got, err := derive(t, fields, num(3), value{}, "b")
	if err != nil {
		t.Fatal(err)
	}
	if got != num(8) {
		t.Errorf("b = %+v, want 8", got)
	}
}

func TestExpressionsRefused(t *testing.T) {
	tests := []struct{ name, fields, want string }{
		{"extension function", df("d", "double", `<Apply function="x-foo"><FieldRef field="x"/></Apply>`), "the function x-foo (an extension of its producer) is not supported"},
		{"unknown function", df("d", "double", `<Apply function="median2"><FieldRef field="x"/></Apply>`), `the function "median2" is not supported`},
		{"arity", df("d", "double", `<Apply function="pow"><FieldRef field="x"/></Apply>`), "the function pow takes 2 arguments, not 1"},
		{"unknown element", df("d", "double", `<Aggregate field="x" function="sum"/>`), "PMML element Aggregate is not supported"},
		{"unknown field", df("d", "double", `<FieldRef field="zz"/>`), `field "zz", which is not defined`},
		{"cycle", df("a", "double", `<FieldRef field="b"/>`) + df("b", "double", `<FieldRef field="a"/>`), "computed from itself"},
		{"no expression", df("d", "double", ``), "holds 0 expressions"},
		{"table locator", df("d", "double", `<MapValues outputColumn="o"><FieldColumnPair field="c" column="i"/><TableLocator/></MapValues>`), "TableLocator"},
		{"norm points out of order", df("d", "double", `<NormContinuous field="x"><LinearNorm orig="1" norm="0"/><LinearNorm orig="0" norm="1"/></NormContinuous>`), "out of increasing order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := derive(t, tt.fields, num(0), value{}, "d")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
