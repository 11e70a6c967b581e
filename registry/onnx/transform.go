package onnx

import "math"

// The post-transforms of the ai.onnx.ml operators, computed in float32 as
// ONNX Runtime computes them.

type postTransform uint8

const (
	postNone postTransform = iota
	postLogistic
	postSoftmax
	postSoftmaxZero
	postProbit
)

func parsePostTransform(x *nodeCtx) (postTransform, error) {
	s, err := x.stringAttr("post_transform", "NONE")
	if err != nil {
		return 0, err
	}
	switch s {
	case "NONE":
		return postNone, nil
	case "LOGISTIC":
		return postLogistic, nil
	case "SOFTMAX":
		return postSoftmax, nil
	case "SOFTMAX_ZERO":
		return postSoftmaxZero, nil
	case "PROBIT":
		return postProbit, nil
	}
	return 0, x.errorf("post_transform %q is not supported", s)
}

func exp32(x float32) float32 { return float32(math.Exp(float64(x))) }

func logistic32(v float32) float32 {
	a := float32(1) / (1 + exp32(-float32(math.Abs(float64(v)))))
	if v < 0 {
		return 1 - a
	}
	return a
}

func erfInv32(x float32) float32 {
	sgn := float32(1)
	if x < 0 {
		sgn = -1
	}
	x = (1 - x) * (1 + x)
	lg := float32(math.Log(float64(x)))
	// Variables, not constants: Go evaluates constant expressions exactly,
	// C++ rounds each float operation.
	pi, a, one, two, half := float32(math.Pi), float32(0.147), float32(1), float32(2), float32(0.5)
	v := two/(pi*a) + half*lg
	v2 := one / a * lg
	v3 := -v + float32(math.Sqrt(float64(v*v-v2)))
	return sgn * float32(math.Sqrt(float64(v3)))
}

func probit32(v float32) float32 { return float32(math.Sqrt2) * erfInv32(2*v-1) }

// softmax32 normalizes v in place.
func softmax32(v []float32) {
	vmax := float32(-math.MaxFloat32)
	for _, x := range v {
		if x > vmax {
			vmax = x
		}
	}
	var sum float32
	for i, x := range v {
		v[i] = exp32(x - vmax)
		sum += v[i]
	}
	for i := range v {
		v[i] /= sum
	}
}

// softmaxZero32 is softmax32 leaving zeros at zero.
func softmaxZero32(v []float32) {
	vmax := float32(-math.MaxFloat32)
	for _, x := range v {
		if x > vmax {
			vmax = x
		}
	}
	expNeg := exp32(-vmax)
	var sum float32
	for i, x := range v {
		if x > 0.0000001 || x < -0.0000001 {
			v[i] = exp32(x - vmax)
			sum += v[i]
		} else {
			v[i] = x * expNeg
		}
	}
	for i := range v {
		v[i] /= sum
	}
}

// applyTransform applies t to the scores of one row with two or more
// scores.
func applyTransform(t postTransform, v []float32) {
	switch t {
	case postProbit:
		for i, x := range v {
			v[i] = probit32(x)
		}
	case postLogistic:
		for i, x := range v {
			v[i] = logistic32(x)
		}
	case postSoftmax:
		softmax32(v)
	case postSoftmaxZero:
		softmaxZero32(v)
	}
}
