package pmml

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/scorehub/scorehub/registry/process"
)

// errInvalidRow is what a model answers for a row holding a value its
// MiningSchema treats with returnInvalid: the row gets no prediction.
var errInvalidRow = errors.New("pmml: the row holds an invalid value")

// field is what the file declares about one field: its type, and which of
// its values are valid, invalid or missing.
type field struct {
	name     string
	optype   string // continuous, categorical or ordinal
	dataType string // string, integer, float, double, boolean
	// numeric reports whether values are numbers (dataType integer, float
	// or double).
	numeric bool
	// valid lists the valid values of a categorical or ordinal field in
	// the order declared; empty means every value is valid.
	valid []string
	// validSet, invalidSet and missingSet index the declared values.
	validSet, invalidSet, missingSet map[string]bool
	// intervals bound a continuous field's valid values; empty means all.
	intervals []interval
	// open marks a target whose classes the models found, not the
	// DataDictionary: every value of it is valid.
	open bool
}

// newField compiles a DataField.
func newField(d *dataField) (*field, error) {
	if d.Name == "" {
		return nil, invalidf("a DataField has no name")
	}
	f := &field{name: d.Name, optype: d.Optype, dataType: d.DataType}
	if err := f.checkTypes("DataField"); err != nil {
		return nil, err
	}
	for _, v := range d.Values {
		switch v.Property {
		case "", "valid":
			f.valid = append(f.valid, v.Value)
			f.validSet = setAdd(f.validSet, v.Value)
		case "invalid":
			f.invalidSet = setAdd(f.invalidSet, v.Value)
		case "missing":
			f.missingSet = setAdd(f.missingSet, v.Value)
		default:
			return nil, invalidf("the Value %q of field %q has property %q (valid, invalid or missing)", v.Value, d.Name, v.Property)
		}
	}
	if f.optype == "continuous" {
		f.valid, f.validSet = nil, nil // a continuous field's Values only name invalid and missing ones
		for _, iv := range d.Intervals {
			if err := checkInterval(iv, "field "+strconv.Quote(d.Name)); err != nil {
				return nil, err
			}
		}
		f.intervals = d.Intervals
	}
	return f, nil
}

// checkTypes checks f's optype and dataType, naming where they come from.
func (f *field) checkTypes(where string) error {
	switch f.optype {
	case "continuous", "categorical", "ordinal":
	case "":
		return invalidf("the %s %q has no optype", where, f.name)
	default:
		return invalidf("the %s %q has optype %q (continuous, categorical or ordinal)", where, f.name, f.optype)
	}
	switch f.dataType {
	case "integer", "float", "double":
		f.numeric = true
	case "string", "boolean":
	case "":
		return invalidf("the %s %q has no dataType", where, f.name)
	default:
		return unsupported("the dataType " + f.dataType + " of " + where + " " + strconv.Quote(f.name) + " is not supported (string, integer, float, double or boolean are)")
	}
	if f.optype == "continuous" && !f.numeric {
		return invalidf("the %s %q is continuous but its dataType is %s", where, f.name, f.dataType)
	}
	return nil
}

func setAdd(m map[string]bool, s string) map[string]bool {
	if m == nil {
		m = make(map[string]bool)
	}
	m[s] = true
	return m
}

// checkInterval checks an Interval's closure and margins.
func checkInterval(iv interval, where string) error {
	switch iv.Closure {
	case "openOpen", "openClosed", "closedOpen", "closedClosed":
	default:
		return invalidf("an Interval of %s has closure %q (openOpen, openClosed, closedOpen or closedClosed)", where, iv.Closure)
	}
	if iv.LeftMargin != nil && iv.RightMargin != nil && *iv.LeftMargin > *iv.RightMargin {
		return invalidf("an Interval of %s has its left margin %g above its right margin %g", where, *iv.LeftMargin, *iv.RightMargin)
	}
	return nil
}

// contains reports whether x lies in iv.
func (iv interval) contains(x float64) bool {
	if l := iv.LeftMargin; l != nil {
		if x < *l || (x == *l && (iv.Closure == "openOpen" || iv.Closure == "openClosed")) {
			return false
		}
	}
	if r := iv.RightMargin; r != nil {
		if x > *r || (x == *r && (iv.Closure == "openOpen" || iv.Closure == "closedOpen")) {
			return false
		}
	}
	return true
}

// cast returns v as f's dataType holds it: a text value of a numeric field
// is parsed (ok is false when it does not parse), a number of a text field
// is written as PMML writes numbers.
func (f *field) cast(v value) (value, bool) {
	switch {
	case v.kind == missing:
		return v, true
	case f.numeric && v.kind == text:
		x, err := strconv.ParseFloat(strings.TrimSpace(v.str), 64)
		if err != nil || math.IsNaN(x) {
			return v, false
		}
		return numValue(x), true
	case !f.numeric && v.kind == number:
		return textValue(v.asText()), true
	}
	return v, true
}

// classify tells whether v (already cast) is a missing, valid or invalid
// value of f.
func (f *field) classify(v value) (value, bool) {
	if v.kind == missing {
		return v, true
	}
	if f.missingSet != nil && f.missingSet[v.asText()] {
		return value{}, true
	}
	if f.invalidSet != nil && f.invalidSet[v.asText()] {
		return v, false
	}
	if f.validSet != nil && !f.open && !f.validSet[v.asText()] {
		return v, false
	}
	if len(f.intervals) > 0 {
		for _, iv := range f.intervals {
			if iv.contains(v.num) {
				return v, true
			}
		}
		return v, false
	}
	return v, true
}

// fieldSet names the fields a model can read and gives each a slot in the
// []value a row is evaluated in. A nested model's set extends its parent's:
// it sees the parent's fields, and its own derived fields and treated
// copies of fields take new slots, so models never overwrite each other's
// values. All the sets of one file share one slot counter.
type fieldSet struct {
	parent *fieldSet
	byName map[string]int
	fields *[]*field // by slot, shared by all the sets of a file
	lim    Limits
	// globals compute the TransformationDictionary's fields (root only).
	globals []step
	// validated marks the slots the top-level model checks with
	// returnInvalid, which nested models need not check again.
	validated *map[int]bool
	// math is the arithmetic of the model element whose set this is: the
	// predicates compiled in it compare as that model does.
	math mathContext
	// warnings collect, for the whole file, what was read leniently
	// (process.ModelSchema.Warnings).
	warnings *[]string
	// reads maps a derived field's slot to the slots its expression
	// reads, for the whole file.
	reads map[int][]int
}

// newFieldSet returns the root set: one slot per DataField, in order.
func newFieldSet(dd *dataDictionary, lim Limits) (*fieldSet, error) {
	fs := &fieldSet{byName: make(map[string]int), fields: new([]*field), lim: lim, validated: &map[int]bool{}, warnings: new([]string), reads: make(map[int][]int)}
	for _, d := range dd.DataFields {
		f, err := newField(d)
		if err != nil {
			return nil, err
		}
		if _, err := fs.add(f); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

// child returns a set extending fs.
func (fs *fieldSet) child() *fieldSet {
	return &fieldSet{parent: fs, byName: make(map[string]int), fields: fs.fields, lim: fs.lim, validated: fs.validated, math: fs.math, warnings: fs.warnings, reads: fs.reads}
}

// add gives f a new slot in fs, refusing a name fs already defines.
func (fs *fieldSet) add(f *field) (int, error) {
	if _, ok := fs.byName[f.name]; ok {
		return 0, invalidf("the field %q is defined twice", f.name)
	}
	if len(*fs.fields) >= fs.lim.MaxFields {
		return 0, limitf("the file has more than %d fields, the limit", fs.lim.MaxFields)
	}
	slot := len(*fs.fields)
	*fs.fields = append(*fs.fields, f)
	fs.byName[f.name] = slot
	return slot, nil
}

// lookup returns the slot and declaration of the field name.
func (fs *fieldSet) lookup(name string) (int, *field, bool) {
	for s := fs; s != nil; s = s.parent {
		if slot, ok := s.byName[name]; ok {
			return slot, (*s.fields)[slot], true
		}
	}
	return 0, nil, false
}

// mustLookup is lookup refusing an unknown field, saying where it is used.
func (fs *fieldSet) mustLookup(name, where string) (int, *field, error) {
	slot, f, ok := fs.lookup(name)
	if !ok {
		return 0, nil, invalidf("%s refers to the field %q, which is not defined", where, name)
	}
	return slot, f, nil
}

// warn records a sentence for the model's warnings, once.
func (fs *fieldSet) warn(sentence string) {
	if !slices.Contains(*fs.warnings, sentence) {
		*fs.warnings = append(*fs.warnings, sentence)
	}
}

// slots returns how many slots the file's sets use so far.
func (fs *fieldSet) slots() int { return len(*fs.fields) }

// step is one thing a model does to a row's values before it predicts:
// treat a field as its MiningSchema says, or compute a derived field.
type step interface {
	run(in []value) error
}

// treatment applies a MiningField to one field: outliers, invalid values
// and missing values, reading slot from and writing slot to.
type treatment struct {
	from, to int
	f        *field
	// outliers is asIs, asMissingValues or asExtremeValues.
	outliers  string
	low, high float64
	// invalid is returnInvalid, asIs, asMissing or asValue.
	invalid     string
	invalidWith value
	// replace, when set, replaces a missing value.
	replace *value
}

func (t *treatment) run(in []value) error {
	v, ok := t.f.cast(in[t.from])
	if ok {
		v, ok = t.f.classify(v)
	}
	if !ok {
		switch t.invalid {
		case "returnInvalid":
			return errInvalidRow
		case "asMissing":
			v = value{}
		case "asValue":
			v = t.invalidWith
		case "asIs":
			v = in[t.from]
		}
	}
	if v.kind == number && t.outliers != "asIs" && (v.num < t.low || v.num > t.high) {
		switch {
		case t.outliers == "asMissingValues":
			v = value{}
		case v.num < t.low:
			v.num = t.low
		default:
			v.num = t.high
		}
	}
	if v.kind == missing && t.replace != nil {
		v = *t.replace
	}
	in[t.to] = v
	return nil
}

// miningSchema compiles a model's MiningSchema in fs: a treatment for
// every field it uses (none is needed for a field used as is). With
// inPlace, treatments write the field's own slot (the top-level model, the
// first to read the row); otherwise a treated field takes a new slot in fs.
// It returns the active fields' slots in order and the target field.
func (fs *fieldSet) miningSchema(ms *miningSchema, inPlace bool) (steps []step, active []int, target *field, err error) {
	if ms == nil {
		return nil, nil, nil, invalidf("a model has no MiningSchema")
	}
	for _, mf := range ms.MiningFields {
		where := "the MiningField " + strconv.Quote(mf.Name)
		slot, f, err := fs.mustLookup(mf.Name, "a MiningSchema")
		if err != nil {
			return nil, nil, nil, err
		}
		switch mf.UsageType {
		case "", "active":
		case "target", "predicted":
			if target != nil {
				return nil, nil, nil, unsupported("a model with more than one target field (" + target.name + " and " + f.name + ") is not supported")
			}
			target = f
			continue
		case "supplementary", "group", "order", "frequencyWeight", "analysisWeight":
			continue
		default:
			return nil, nil, nil, invalidf("%s has usageType %q", where, mf.UsageType)
		}
		if mf.Optype != "" && mf.Optype != f.optype {
			return nil, nil, nil, unsupported(where + " overrides the field's optype " + f.optype + " with " + mf.Optype + ", which is not supported")
		}
		t := &treatment{from: slot, to: slot, f: f, outliers: "asIs", invalid: "returnInvalid", low: math.Inf(-1), high: math.Inf(1)}
		switch mf.Outliers {
		case "", "asIs":
		case "asMissingValues", "asExtremeValues":
			t.outliers = mf.Outliers
			if mf.LowValue == nil || mf.HighValue == nil {
				return nil, nil, nil, invalidf("%s treats outliers %s without lowValue and highValue", where, mf.Outliers)
			}
			t.low, t.high = *mf.LowValue, *mf.HighValue
		default:
			return nil, nil, nil, invalidf("%s has outliers %q (asIs, asMissingValues or asExtremeValues)", where, mf.Outliers)
		}
		switch mf.InvalidValueTreatment {
		case "", "returnInvalid":
		case "asIs", "asMissing":
			t.invalid = mf.InvalidValueTreatment
		case "asValue":
			if mf.InvalidValueReplacement == nil {
				return nil, nil, nil, invalidf("%s treats invalid values asValue without an invalidValueReplacement", where)
			}
			v, ok := f.cast(textValue(*mf.InvalidValueReplacement))
			if !ok {
				return nil, nil, nil, invalidf("%s has invalidValueReplacement %q, which is not a %s", where, *mf.InvalidValueReplacement, f.dataType)
			}
			t.invalid, t.invalidWith = "asValue", v
		default:
			return nil, nil, nil, invalidf("%s has invalidValueTreatment %q (returnInvalid, asIs, asMissing or asValue)", where, mf.InvalidValueTreatment)
		}
		if r := mf.MissingValueReplacement; r != nil {
			v, ok := f.cast(textValue(*r))
			if !ok {
				return nil, nil, nil, invalidf("%s has missingValueReplacement %q, which is not a %s", where, *r, f.dataType)
			}
			t.replace = &v
		}
		if !inPlace {
			// A nested model treats its own copy; a model that only reads
			// the field needs no step when nothing about it changes.
			if t.outliers == "asIs" && t.invalid != "asMissing" && t.invalid != "asValue" && t.replace == nil {
				if t.invalid == "returnInvalid" && !(*fs.validated)[slot] {
					// It only refuses values: it may check the shared slot.
					steps = append(steps, t)
				}
				active = append(active, slot)
				continue
			}
			copyField := *f
			to, err := fs.add(&copyField)
			if err != nil {
				return nil, nil, nil, err
			}
			t.to = to
		}
		if inPlace && t.invalid == "returnInvalid" {
			(*fs.validated)[slot] = true
		}
		steps = append(steps, t)
		active = append(active, t.to)
	}
	return steps, active, target, nil
}

// readColumn turns row i of c into the value of f, as a request sends it.
func readColumn(c *process.Column, i int) value {
	if c == nil || c.IsMissing(i) {
		return value{}
	}
	if c.Kind == process.Number {
		return numValue(c.Numbers[i])
	}
	return textValue(c.Texts[i])
}

// inputKind is the column kind a request sends f's values as.
func inputKind(f *field) process.Kind {
	if f.numeric {
		return process.Number
	}
	return process.Text
}

// runSteps runs steps on a row in order.
func runSteps(steps []step, in []value) error {
	for _, s := range steps {
		if err := s.run(in); err != nil {
			return err
		}
	}
	return nil
}
