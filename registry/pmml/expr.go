package pmml

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// eval computes an expression for one row.
type eval func(in []value) value

// exprCompiler compiles expressions in a field set, recording the slots
// they read so derived fields can be ordered.
type exprCompiler struct {
	fs   *fieldSet
	deps map[int]bool
}

// ref resolves a field an expression reads.
func (c *exprCompiler) ref(name, where string) (int, *field, error) {
	slot, f, err := c.fs.mustLookup(name, where)
	if err == nil && c.deps != nil {
		c.deps[slot] = true
	}
	return slot, f, err
}

// exprs returns the expression elements among children, skipping
// Extension and Value elements.
func exprs(children []*expr) []*expr {
	var out []*expr
	for _, e := range children {
		switch e.XMLName.Local {
		case "Extension", "Value":
		default:
			out = append(out, e)
		}
	}
	return out
}

// one returns the single expression among children.
func one(children []*expr, where string) (*expr, error) {
	es := exprs(children)
	if len(es) != 1 {
		return nil, invalidf("%s holds %d expressions, want 1", where, len(es))
	}
	return es[0], nil
}

// mapMissing wraps ev so that a missing value maps to the expression's
// mapMissingTo, when it has one.
func mapMissing(e *expr) *value {
	if e.MapMissingTo == nil {
		return nil
	}
	v := constant(*e.MapMissingTo, e.DataType)
	return &v
}

// constant reads a literal: a number when dataType says so or, without a
// dataType, when it parses as one.
func constant(s, dataType string) value {
	switch dataType {
	case "string", "boolean":
		return textValue(s)
	}
	if x, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		return numValue(x)
	}
	return textValue(s)
}

// compile compiles one expression element.
func (c *exprCompiler) compile(e *expr) (eval, error) {
	name := e.XMLName.Local
	switch name {
	case "Constant":
		if e.IsMissing == "true" {
			return func([]value) value { return value{} }, nil
		}
		v := constant(e.Text, e.DataType)
		if e.DataType != "" && e.DataType != "string" && e.DataType != "boolean" && v.kind != number {
			return nil, invalidf("the Constant %q is not a %s", e.Text, e.DataType)
		}
		return func([]value) value { return v }, nil
	case "FieldRef":
		slot, _, err := c.ref(e.Field, "a FieldRef")
		if err != nil {
			return nil, err
		}
		mm := mapMissing(e)
		return func(in []value) value {
			if v := in[slot]; v.kind != missing || mm == nil {
				return v
			}
			return *mm
		}, nil
	case "NormContinuous":
		return c.normContinuous(e)
	case "NormDiscrete":
		slot, f, err := c.ref(e.Field, "a NormDiscrete")
		if err != nil {
			return nil, err
		}
		want, _ := f.cast(textValue(e.Value))
		mm := mapMissing(e)
		return func(in []value) value {
			v := in[slot]
			if v.kind == missing {
				if mm != nil {
					return *mm
				}
				return v
			}
			if equalValues(v, want) {
				return numValue(1)
			}
			return numValue(0)
		}, nil
	case "Discretize":
		return c.discretize(e)
	case "MapValues":
		return c.mapValues(e)
	case "Apply":
		return c.apply(e)
	}
	return nil, unsupported("PMML element " + name + " is not supported")
}

// normContinuous compiles a piecewise linear map.
func (c *exprCompiler) normContinuous(e *expr) (eval, error) {
	slot, _, err := c.ref(e.Field, "a NormContinuous")
	if err != nil {
		return nil, err
	}
	pts := e.LinearNorms
	if len(pts) < 2 {
		return nil, invalidf("the NormContinuous of field %q has %d LinearNorm elements, want at least 2", e.Field, len(pts))
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].Orig <= pts[i-1].Orig {
			return nil, invalidf("the NormContinuous of field %q has LinearNorm orig values out of increasing order", e.Field)
		}
	}
	switch e.Outliers {
	case "", "asIs", "asMissingValues", "asExtremeValues":
	default:
		return nil, invalidf("the NormContinuous of field %q has outliers %q (asIs, asMissingValues or asExtremeValues)", e.Field, e.Outliers)
	}
	mm := mapMissing(e)
	outliers := e.Outliers
	interp := func(a, b linearNorm, x float64) float64 {
		return a.Norm + (x-a.Orig)/(b.Orig-a.Orig)*(b.Norm-a.Norm)
	}
	last := len(pts) - 1
	return func(in []value) value {
		x, ok := in[slot].asNumber()
		if !ok {
			if mm != nil {
				return *mm
			}
			return value{}
		}
		if x < pts[0].Orig || x > pts[last].Orig {
			switch outliers {
			case "asMissingValues":
				return value{}
			case "asExtremeValues":
				if x < pts[0].Orig {
					return numValue(pts[0].Norm)
				}
				return numValue(pts[last].Norm)
			}
			if x < pts[0].Orig {
				return numValue(interp(pts[0], pts[1], x))
			}
			return numValue(interp(pts[last-1], pts[last], x))
		}
		i := sort.Search(len(pts), func(i int) bool { return pts[i].Orig >= x })
		if pts[i].Orig == x {
			return numValue(pts[i].Norm)
		}
		return numValue(interp(pts[i-1], pts[i], x))
	}, nil
}

// discretize compiles a map from intervals to values.
func (c *exprCompiler) discretize(e *expr) (eval, error) {
	slot, _, err := c.ref(e.Field, "a Discretize")
	if err != nil {
		return nil, err
	}
	type bin struct {
		iv  interval
		out value
	}
	bins := make([]bin, len(e.DiscretizeBins))
	for i, b := range e.DiscretizeBins {
		if b.Interval == nil {
			return nil, invalidf("a DiscretizeBin of field %q has no Interval", e.Field)
		}
		if err := checkInterval(*b.Interval, "a Discretize of field "+strconv.Quote(e.Field)); err != nil {
			return nil, err
		}
		bins[i] = bin{*b.Interval, constant(b.BinValue, e.DataType)}
	}
	mm := mapMissing(e)
	var def *value
	if e.DefaultValue != nil {
		v := constant(*e.DefaultValue, e.DataType)
		def = &v
	}
	return func(in []value) value {
		x, ok := in[slot].asNumber()
		if !ok {
			if mm != nil {
				return *mm
			}
			return value{}
		}
		for _, b := range bins {
			if b.iv.contains(x) {
				return b.out
			}
		}
		if def != nil {
			return *def
		}
		return value{}
	}, nil
}

// mapValues compiles a lookup in an InlineTable.
func (c *exprCompiler) mapValues(e *expr) (eval, error) {
	if e.InlineTable == nil {
		return nil, unsupported("a MapValues without an InlineTable (a TableLocator) is not supported")
	}
	if len(e.FieldColumnPairs) == 0 {
		return nil, invalidf("a MapValues has no FieldColumnPair")
	}
	slots := make([]int, len(e.FieldColumnPairs))
	for i, p := range e.FieldColumnPairs {
		slot, _, err := c.ref(p.Field, "a MapValues")
		if err != nil {
			return nil, err
		}
		slots[i] = slot
	}
	// rows[r][i] is the cell of row r in the column of pair i; out[r] is
	// the row's output.
	var rows [][]value
	var out []value
	for _, r := range e.InlineTable.Rows {
		keys := make([]value, len(slots))
		found := make([]bool, len(slots))
		var res *value
		for _, cell := range r.Cells {
			if cell.XMLName.Local == e.OutputColumn {
				v := constant(cell.Text, e.DataType)
				res = &v
			}
			for i, p := range e.FieldColumnPairs {
				if cell.XMLName.Local == p.Column {
					keys[i], found[i] = constant(cell.Text, ""), true
				}
			}
		}
		if res == nil {
			continue // a row without the output column never answers
		}
		ok := true
		for _, f := range found {
			ok = ok && f
		}
		if ok {
			rows = append(rows, keys)
			out = append(out, *res)
		}
	}
	mm := mapMissing(e)
	var def *value
	if e.DefaultValue != nil {
		v := constant(*e.DefaultValue, e.DataType)
		def = &v
	}
	return func(in []value) value {
		for _, s := range slots {
			if in[s].kind == missing {
				if mm != nil {
					return *mm
				}
				return value{}
			}
		}
	rows:
		for r, keys := range rows {
			for i, s := range slots {
				if !equalValues(in[s], keys[i]) {
					continue rows
				}
			}
			return out[r]
		}
		if def != nil {
			return *def
		}
		return value{}
	}, nil
}

// equalValues compares two present values: as numbers when both are, else
// as PMML writes them.
func equalValues(a, b value) bool {
	if a.kind == number && b.kind == number {
		return a.num == b.num
	}
	if a.kind == number || b.kind == number {
		x, okx := a.asNumber()
		y, oky := b.asNumber()
		if okx && oky {
			return x == y
		}
	}
	return a.asText() == b.asText()
}

// compareValues orders two present values, as numbers when both are
// numbers, else as text; ok is false when they cannot be ordered.
func compareValues(a, b value) (int, bool) {
	x, okx := a.asNumber()
	y, oky := b.asNumber()
	if okx && oky {
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	}
	if a.kind == text && b.kind == text {
		return strings.Compare(a.str, b.str), true
	}
	return 0, false
}

// boolValue is a PMML boolean: the text "true" or "false".
func boolValue(b bool) value {
	if b {
		return textValue("true")
	}
	return textValue("false")
}

// asBool reads a boolean: "true"/"false", or a number (non-zero is true).
func (v value) asBool() (bool, bool) {
	switch v.kind {
	case text:
		switch v.str {
		case "true":
			return true, true
		case "false":
			return false, true
		}
		if x, err := strconv.ParseFloat(v.str, 64); err == nil {
			return x != 0, true
		}
	case number:
		return v.num != 0, true
	}
	return false, false
}

// finite returns x as a number value, or missing when it is not finite
// (a division by zero, the log of a negative number).
func finite(x float64) value {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return value{}
	}
	return numValue(x)
}
