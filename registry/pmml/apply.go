package pmml

import (
	"math"
	"strconv"
	"strings"
)

// builtin is a PMML built-in function: its arity and its body. A body
// receives its arguments evaluated; those with lazy set receive nil and
// evaluate what they need.
type builtin struct {
	min, max int // number of arguments; max -1 is unbounded
	// missingIn is true when the function answers missing values itself;
	// otherwise a missing argument makes the result missing.
	missingIn bool
	fn        func(args []value) value
}

func num1(f func(float64) float64) builtin {
	return builtin{min: 1, max: 1, fn: func(a []value) value {
		x, ok := a[0].asNumber()
		if !ok {
			return value{}
		}
		return finite(f(x))
	}}
}

func num2(f func(x, y float64) float64) builtin {
	return builtin{min: 2, max: 2, fn: func(a []value) value {
		x, okx := a[0].asNumber()
		y, oky := a[1].asNumber()
		if !okx || !oky {
			return value{}
		}
		return finite(f(x, y))
	}}
}

// numN folds its numeric arguments.
func numN(f func(xs []float64) float64) builtin {
	return builtin{min: 1, max: -1, fn: func(a []value) value {
		var buf [8]float64
		xs := buf[:0]
		for _, v := range a {
			x, ok := v.asNumber()
			if !ok {
				return value{}
			}
			xs = append(xs, x)
		}
		return finite(f(xs))
	}}
}

func compare(test func(int) bool) builtin {
	return builtin{min: 2, max: 2, fn: func(a []value) value {
		c, ok := compareValues(a[0], a[1])
		if !ok {
			return value{}
		}
		return boolValue(test(c))
	}}
}

// logic folds boolean arguments with and (all) or or (any).
func logic(all bool) builtin {
	return builtin{min: 2, max: -1, fn: func(a []value) value {
		res := all
		for _, v := range a {
			b, ok := v.asBool()
			if !ok {
				return value{}
			}
			if all {
				res = res && b
			} else {
				res = res || b
			}
		}
		return boolValue(res)
	}}
}

// javaRound rounds half up, as Java's Math.round and PMML producers do.
func javaRound(x float64) float64 { return math.Floor(x + 0.5) }

// builtins are the PMML built-in functions this reader evaluates.
var builtins = map[string]builtin{
	"+": num2(func(x, y float64) float64 { return x + y }),
	"-": num2(func(x, y float64) float64 { return x - y }),
	"*": num2(func(x, y float64) float64 { return x * y }),
	"/": num2(func(x, y float64) float64 { return x / y }),
	"min": numN(func(xs []float64) float64 {
		m := xs[0]
		for _, x := range xs[1:] {
			m = math.Min(m, x)
		}
		return m
	}),
	"max": numN(func(xs []float64) float64 {
		m := xs[0]
		for _, x := range xs[1:] {
			m = math.Max(m, x)
		}
		return m
	}),
	"sum": numN(func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s
	}),
	"avg": numN(func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}),
	"product": numN(func(xs []float64) float64 {
		p := 1.0
		for _, x := range xs {
			p *= x
		}
		return p
	}),
	"log10": num1(math.Log10),
	"ln":    num1(math.Log),
	"exp":   num1(math.Exp),
	"expm1": num1(math.Expm1),
	"ln1p":  num1(math.Log1p),
	"sqrt":  num1(math.Sqrt),
	"abs":   num1(math.Abs),
	"floor": num1(math.Floor),
	"ceil":  num1(math.Ceil),
	"round": num1(javaRound),
	"rint":  num1(math.RoundToEven),
	"pow":   num2(math.Pow),
	"threshold": num2(func(x, y float64) float64 {
		if x > y {
			return 1
		}
		return 0
	}),
	"isMissing": {min: 1, max: 1, missingIn: true, fn: func(a []value) value {
		return boolValue(a[0].kind == missing)
	}},
	"isNotMissing": {min: 1, max: 1, missingIn: true, fn: func(a []value) value {
		return boolValue(a[0].kind != missing)
	}},
	"equal":          {min: 2, max: 2, fn: func(a []value) value { return boolValue(equalValues(a[0], a[1])) }},
	"notEqual":       {min: 2, max: 2, fn: func(a []value) value { return boolValue(!equalValues(a[0], a[1])) }},
	"lessThan":       compare(func(c int) bool { return c < 0 }),
	"lessOrEqual":    compare(func(c int) bool { return c <= 0 }),
	"greaterThan":    compare(func(c int) bool { return c > 0 }),
	"greaterOrEqual": compare(func(c int) bool { return c >= 0 }),
	"and":            logic(true),
	"or":             logic(false),
	"not": {min: 1, max: 1, fn: func(a []value) value {
		b, ok := a[0].asBool()
		if !ok {
			return value{}
		}
		return boolValue(!b)
	}},
	"isIn": {min: 2, max: -1, fn: func(a []value) value {
		for _, v := range a[1:] {
			if v.kind != missing && equalValues(a[0], v) {
				return boolValue(true)
			}
		}
		return boolValue(false)
	}},
	"isNotIn": {min: 2, max: -1, fn: func(a []value) value {
		for _, v := range a[1:] {
			if v.kind != missing && equalValues(a[0], v) {
				return boolValue(false)
			}
		}
		return boolValue(true)
	}},
	"uppercase": {min: 1, max: 1, fn: func(a []value) value { return textValue(strings.ToUpper(a[0].asText())) }},
	"lowercase": {min: 1, max: 1, fn: func(a []value) value { return textValue(strings.ToLower(a[0].asText())) }},
	"trimBlanks": {min: 1, max: 1, fn: func(a []value) value {
		return textValue(strings.TrimSpace(a[0].asText()))
	}},
	"concat": {min: 1, max: -1, fn: func(a []value) value {
		var b strings.Builder
		for _, v := range a {
			b.WriteString(v.asText())
		}
		return textValue(b.String())
	}},
}

// apply compiles an Apply element: a built-in function of its arguments.
func (c *exprCompiler) apply(e *expr) (eval, error) {
	fname := e.Function
	if fname == "if" {
		return c.applyIf(e)
	}
	b, ok := builtins[fname]
	if !ok {
		if strings.HasPrefix(fname, "x-") {
			return nil, unsupported("the function " + fname + " (an extension of its producer) is not supported")
		}
		return nil, unsupported("the function " + strconv.Quote(fname) + " is not supported")
	}
	switch e.InvalidValueTreatment {
	case "", "returnInvalid", "asMissing":
	default:
		return nil, unsupported("an Apply of " + fname + " with invalidValueTreatment " + e.InvalidValueTreatment + " is not supported")
	}
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	if len(args) < b.min || (b.max >= 0 && len(args) > b.max) {
		return nil, invalidf("the function %s takes %s, not %d", fname, arity(b), len(args))
	}
	mm := mapMissing(e)
	var def *value
	if e.DefaultValue != nil {
		v := constant(*e.DefaultValue, e.DataType)
		def = &v
	}
	return func(in []value) value {
		var buf [4]value
		vals := buf[:0]
		for _, a := range args {
			v := a(in)
			if v.kind == missing && !b.missingIn {
				if mm != nil {
					return *mm
				}
				return value{}
			}
			vals = append(vals, v)
		}
		v := b.fn(vals)
		if v.kind == missing && def != nil {
			return *def
		}
		return v
	}, nil
}

// applyIf compiles if(condition, then[, else]), evaluating only the branch
// taken.
func (c *exprCompiler) applyIf(e *expr) (eval, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	if len(args) != 2 && len(args) != 3 {
		return nil, invalidf("the function if takes 2 or 3 arguments, not %d", len(args))
	}
	mm := mapMissing(e)
	return func(in []value) value {
		cond, ok := args[0](in).asBool()
		if !ok {
			if mm != nil {
				return *mm
			}
			return value{}
		}
		if cond {
			return args[1](in)
		}
		if len(args) == 3 {
			return args[2](in)
		}
		return value{}
	}, nil
}

// args compiles an Apply's arguments in order.
func (c *exprCompiler) args(e *expr) ([]eval, error) {
	es := exprs(e.Args)
	out := make([]eval, len(es))
	for i, a := range es {
		ev, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		out[i] = ev
	}
	return out, nil
}

// arity says how many arguments b takes.
func arity(b builtin) string {
	switch {
	case b.max < 0:
		return "at least " + strconv.Itoa(b.min) + " arguments"
	case b.min == b.max && b.min == 1:
		return "1 argument"
	case b.min == b.max:
		return strconv.Itoa(b.min) + " arguments"
	}
	return strconv.Itoa(b.min) + " to " + strconv.Itoa(b.max) + " arguments"
}
