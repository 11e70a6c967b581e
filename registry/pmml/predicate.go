package pmml

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// tri is a predicate's answer: true, false, or unknown when it reads a
// missing value.
type tri uint8

const (
	isFalse tri = iota
	isTrue
	unknown
)

// predFn evaluates a predicate for one row.
type predFn func(in []value) tri

func triOf(b bool) tri {
	if b {
		return isTrue
	}
	return isFalse
}

// isPredicate reports whether name is a predicate element.
func isPredicate(name string) bool {
	switch name {
	case "SimplePredicate", "CompoundPredicate", "SimpleSetPredicate", "True", "False":
		return true
	}
	return false
}

// predicateOf returns the one predicate among children (Node and Segment
// children other than the ones their structs name), refusing any other
// element by name.
func predicateOf(children []*pred, where string) (*pred, error) {
	var p *pred
	for _, c := range children {
		switch name := c.XMLName.Local; {
		case isPredicate(name):
			if p != nil {
				return nil, invalidf("%s has more than one predicate", where)
			}
			p = c
		case name == "Extension":
		default:
			return nil, unsupported("PMML element " + name + " is not supported")
		}
	}
	if p == nil {
		return nil, invalidf("%s has no predicate", where)
	}
	return p, nil
}

// predicateReads appends to dst the slots of the fields p reads, each
// once: a CompoundPredicate's operands' fields. Unknown fields are
// skipped; compiling p refuses them.
func predicateReads(p *pred, fs *fieldSet, dst []int) []int {
	switch p.XMLName.Local {
	case "SimplePredicate", "SimpleSetPredicate":
		if slot, _, ok := fs.lookup(p.Field); ok && !slices.Contains(dst, slot) {
			dst = append(dst, slot)
		}
	case "CompoundPredicate":
		for _, q := range p.Preds {
			if isPredicate(q.XMLName.Local) {
				dst = predicateReads(q, fs, dst)
			}
		}
	}
	return dst
}

// compilePredicate compiles a predicate element in fs.
func compilePredicate(p *pred, fs *fieldSet) (predFn, error) {
	switch p.XMLName.Local {
	case "True":
		return func([]value) tri { return isTrue }, nil
	case "False":
		return func([]value) tri { return isFalse }, nil
	case "SimplePredicate":
		return simplePredicate(p, fs)
	case "SimpleSetPredicate":
		return simpleSetPredicate(p, fs)
	case "CompoundPredicate":
		return compoundPredicate(p, fs)
	}
	return nil, unsupported("PMML element " + p.XMLName.Local + " is not supported")
}

func simplePredicate(p *pred, fs *fieldSet) (predFn, error) {
	slot, f, err := fs.mustLookup(p.Field, "a SimplePredicate")
	if err != nil {
		return nil, err
	}
	switch p.Operator {
	case "isMissing":
		return func(in []value) tri { return triOf(in[slot].kind == missing) }, nil
	case "isNotMissing":
		return func(in []value) tri { return triOf(in[slot].kind != missing) }, nil
	}
	want, ok := f.cast(textValue(p.Value))
	if !ok {
		return nil, invalidf("a SimplePredicate compares the %s field %q with %q, which is not a number", f.dataType, f.name, p.Value)
	}
	mc := fs.math
	want = mc.value(want)
	var test func(c int) bool
	switch p.Operator {
	case "equal":
		return func(in []value) tri {
			v := in[slot]
			if v.kind == missing {
				return unknown
			}
			return triOf(equalValues(mc.value(v), want))
		}, nil
	case "notEqual":
		return func(in []value) tri {
			v := in[slot]
			if v.kind == missing {
				return unknown
			}
			return triOf(!equalValues(mc.value(v), want))
		}, nil
	case "lessThan":
		test = func(c int) bool { return c < 0 }
	case "lessOrEqual":
		test = func(c int) bool { return c <= 0 }
	case "greaterThan":
		test = func(c int) bool { return c > 0 }
	case "greaterOrEqual":
		test = func(c int) bool { return c >= 0 }
	default:
		return nil, invalidf("a SimplePredicate on field %q has operator %q", f.name, p.Operator)
	}
	if want.kind == number {
		// The common case, a split on a number, without the generic compare.
		x := want.num
		switch p.Operator {
		case "lessOrEqual":
			return func(in []value) tri {
				v := in[slot]
				if v.kind == number {
					return triOf(mc.round(v.num) <= x)
				}
				return numericTri(v, x, test)
			}, nil
		case "lessThan":
			return func(in []value) tri {
				v := in[slot]
				if v.kind == number {
					return triOf(mc.round(v.num) < x)
				}
				return numericTri(v, x, test)
			}, nil
		}
	}
	return func(in []value) tri {
		v := in[slot]
		if v.kind == missing {
			return unknown
		}
		c, ok := compareValues(mc.value(v), want)
		if !ok {
			return isFalse
		}
		return triOf(test(c))
	}, nil
}

// numericTri compares a value that is not a number with x.
func numericTri(v value, x float64, test func(int) bool) tri {
	if v.kind == missing {
		return unknown
	}
	c, ok := compareValues(v, numValue(x))
	if !ok {
		return isFalse
	}
	return triOf(test(c))
}

func simpleSetPredicate(p *pred, fs *fieldSet) (predFn, error) {
	slot, f, err := fs.mustLookup(p.Field, "a SimpleSetPredicate")
	if err != nil {
		return nil, err
	}
	var in bool
	switch p.BooleanOperator {
	case "isIn":
		in = true
	case "isNotIn":
	default:
		return nil, invalidf("a SimpleSetPredicate on field %q has booleanOperator %q (isIn or isNotIn)", f.name, p.BooleanOperator)
	}
	if p.Array == nil {
		return nil, invalidf("a SimpleSetPredicate on field %q has no Array", f.name)
	}
	items, note, err := parseArray(p.Array)
	if err != nil {
		return nil, err
	}
	if note != "" {
		fs.warn("the SimpleSetPredicate on " + strconv.Quote(f.name) + ": " + note)
	}
	set := make(map[string]bool, len(items))
	nums := make(map[float64]bool)
	mc := fs.math
	for _, it := range items {
		v, ok := f.cast(constant(it, arrayDataType(p.Array.Type)))
		if !ok {
			return nil, invalidf("the Array of a SimpleSetPredicate on the %s field %q holds %q", f.dataType, f.name, it)
		}
		v = mc.value(v)
		if v.kind == number {
			nums[v.num] = true
		} else {
			set[v.str] = true
		}
	}
	return func(row []value) tri {
		v := mc.value(row[slot])
		var found bool
		switch v.kind {
		case missing:
			return unknown
		case number:
			found = nums[v.num] || set[v.asText()]
		default:
			found = set[v.str]
			if !found && len(nums) > 0 {
				if x, ok := v.asNumber(); ok {
					found = nums[mc.round(x)]
				}
			}
		}
		return triOf(found == in)
	}, nil
}

func arrayDataType(t string) string {
	if t == "string" {
		return "string"
	}
	return ""
}

// parseArray splits an Array's text: values separated by white space, a
// value holding white space written in double quotes with \" inside.
//
// An Array holding fewer values than its n says (R's pmml package writes
// some so) is read as the values it holds, as other evaluators read it,
// and note says so; the values are unambiguous, as none was split apart.
// One holding more is refused: a value holding white space that its
// producer did not quote would read as several, and which belong together
// cannot be told.
func parseArray(a *array) (values []string, note string, err error) {
	switch a.Type {
	case "string", "int", "real":
	default:
		return nil, "", invalidf("an Array has type %q (string, int or real)", a.Type)
	}
	var out []string
	s := a.Text
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		if s == "" {
			break
		}
		if s[0] == '"' {
			var b strings.Builder
			i := 1
			for ; i < len(s); i++ {
				if s[i] == '\\' && i+1 < len(s) && s[i+1] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				if s[i] == '"' {
					break
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, "", invalidf("an Array has an unterminated quoted value")
			}
			out = append(out, b.String())
			s = s[i+1:]
			continue
		}
		end := strings.IndexAny(s, " \t\r\n")
		if end < 0 {
			end = len(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	if a.N != nil && *a.N < len(out) {
		return nil, "", invalidf("an Array says it holds %d values but holds %d", *a.N, len(out))
	}
	if a.N != nil && *a.N > len(out) {
		note = fmt.Sprintf("an Array says it holds %d values but holds %d; the %d it holds were read", *a.N, len(out), len(out))
	}
	if a.Type != "string" {
		for _, v := range out {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return nil, "", invalidf("an Array of type %s holds %q", a.Type, v)
			}
		}
	}
	return out, note, nil
}

func compoundPredicate(p *pred, fs *fieldSet) (predFn, error) {
	var ops []predFn
	for _, c := range p.Preds {
		if c.XMLName.Local == "Extension" {
			continue
		}
		fn, err := compilePredicate(c, fs)
		if err != nil {
			return nil, err
		}
		ops = append(ops, fn)
	}
	if len(ops) < 2 {
		return nil, invalidf("a CompoundPredicate has %d predicates, want at least 2", len(ops))
	}
	switch p.BooleanOperator {
	case "and":
		return func(in []value) tri {
			res := isTrue
			for _, op := range ops {
				switch op(in) {
				case isFalse:
					return isFalse
				case unknown:
					res = unknown
				}
			}
			return res
		}, nil
	case "or":
		return func(in []value) tri {
			res := isFalse
			for _, op := range ops {
				switch op(in) {
				case isTrue:
					return isTrue
				case unknown:
					res = unknown
				}
			}
			return res
		}, nil
	case "xor":
		return func(in []value) tri {
			res := false
			for _, op := range ops {
				switch op(in) {
				case isTrue:
					res = !res
				case unknown:
					return unknown
				}
			}
			return triOf(res)
		}, nil
	case "surrogate":
		return func(in []value) tri {
			for _, op := range ops {
				if r := op(in); r != unknown {
					return r
				}
			}
			return unknown
		}, nil
	}
	return nil, invalidf("a CompoundPredicate has booleanOperator %q (and, or, xor or surrogate)", p.BooleanOperator)
}
