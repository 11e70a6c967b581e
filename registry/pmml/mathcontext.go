package pmml

import "strconv"

// mathContext is the arithmetic a model element computes in, as JPMML's
// producers say with the attribute x-mathContext: "double" (the default)
// or "float", for a model whose producer computes in float32 (XGBoost).
// A float model reads every number as a float32 — its field values, and
// the thresholds, scores, coefficients and weights of its own element —
// and rounds the result of every operation to float32: each comparison,
// sum, product and the steps of its normalization, in the order the
// element defines them. Its nested models compute in their own context.
type mathContext bool

const (
	float64Math mathContext = false
	float32Math mathContext = true
)

// parseMathContext reads an x-mathContext attribute of the element name.
func parseMathContext(s, name string) (mathContext, error) {
	switch s {
	case "", "double":
		return float64Math, nil
	case "float":
		return float32Math, nil
	}
	return float64Math, unsupported("a " + name + " with x-mathContext " + strconv.Quote(s) + " is not supported (double or float are)")
}

// round returns x as the context holds it: rounded to float32 in a float
// context, unchanged in a double one.
func (c mathContext) round(x float64) float64 {
	if c == float32Math {
		return float64(float32(x))
	}
	return x
}

// value returns v with its number rounded as the context holds it.
func (c mathContext) value(v value) value {
	if c == float32Math && v.kind == number {
		v.num = float64(float32(v.num))
	}
	return v
}
