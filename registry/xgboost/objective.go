package xgboost

import (
	"math"
	"strings"
)

// link is how an objective turns base_score, which XGBoost keeps in the
// units of its predictions, into a margin (XGBoost's ProbToMargin).
type link uint8

const (
	linkIdentity link = iota
	linkLogit         // logistic objectives: -log(1/p - 1)
	linkLog           // count:poisson, reg:gamma, reg:tweedie: log(p)
)

// transform is how an objective turns margins into predictions (XGBoost's
// PredTransform).
type transform uint8

const (
	outIdentity transform = iota
	outSigmoid
	outExp
	outHinge   // binary:hinge: 1 when the margin is positive, else 0
	outSoftmax // multi:softprob and multi:softmax (see doc.go)
)

// objective is what the reader knows of one XGBoost objective.
type objective struct {
	link  link
	out   transform
	class bool // a classifier
	multi bool // one output group per class
}

// objectives lists the objectives this reader scores, for messages.
const objectives = "binary:logistic, binary:logitraw, binary:hinge, multi:softprob, multi:softmax, " +
	"reg:squarederror, reg:linear, reg:squaredlogerror, reg:pseudohubererror, reg:absoluteerror, " +
	"reg:logistic, count:poisson, reg:gamma, reg:tweedie"

// lookupObjective returns the objective named name, or false when this
// reader does not score it.
func lookupObjective(name string) (objective, bool) {
	switch name {
	case "binary:logistic":
		return objective{link: linkLogit, out: outSigmoid, class: true}, true
	case "binary:logitraw":
		// The margin is a log-odds, but XGBoost starts it from base_score
		// as it is; classes are scored as binary:logistic would (doc.go).
		return objective{out: outSigmoid, class: true}, true
	case "binary:hinge":
		return objective{out: outHinge, class: true}, true
	case "multi:softprob", "multi:softmax":
		return objective{out: outSoftmax, class: true, multi: true}, true
	case "reg:squarederror", "reg:linear", "reg:squaredlogerror", "reg:pseudohubererror", "reg:absoluteerror":
		return objective{}, true
	case "reg:logistic":
		return objective{link: linkLogit, out: outSigmoid}, true
	case "count:poisson", "reg:gamma", "reg:tweedie":
		return objective{link: linkLog, out: outExp}, true
	}
	return objective{}, false
}

// unsupportedObjective explains why name is refused.
func unsupportedObjective(name string) string {
	switch {
	case strings.HasPrefix(name, "rank:"):
		return "ranking objective " + quote(name) + " is not supported: its scores only order rows within a query group"
	case strings.HasPrefix(name, "survival:"):
		return "survival objective " + quote(name) + " is not supported"
	}
	return "objective " + quote(name) + " is not supported (supported: " + objectives + ")"
}

func quote(s string) string { return `"` + s + `"` }

// margin turns base_score into a margin as XGBoost's ProbToMargin does, in
// float32, and reports false when base_score is outside the link's domain
// (XGBoost refuses such a model too).
func (l link) margin(p float32) (float32, bool) {
	switch l {
	case linkLogit:
		if !(p > 0 && p < 1) {
			return 0, false
		}
		return -logf(1/p - 1), true
	case linkLog:
		if !(p > 0) {
			return 0, false
		}
		return logf(p), true
	}
	return p, !math.IsNaN(float64(p))
}

// logf and expf are C's logf and expf: the float64 result rounded once to
// float32, which is what glibc's correctly rounded ones return.
func logf(x float32) float32 { return float32(math.Log(float64(x))) }
func expf(x float32) float32 { return float32(math.Exp(float64(x))) }

// sigmoid is XGBoost's common::Sigmoid: 1/(1+expf(-x)), with -x clamped at
// 88.7 so that expf does not overflow.
func sigmoid(x float32) float32 {
	return 1 / (expf(min(-x, 88.7)) + 1)
}

// softmax is XGBoost's common::Softmax, in place: float32 exponentials of
// the differences from the largest margin, summed in float64.
func softmax(p []float32) {
	wmax := p[0]
	for _, v := range p[1:] {
		wmax = fmaxf(v, wmax)
	}
	var sum float64
	for i, v := range p {
		p[i] = expf(v - wmax)
		sum += float64(p[i])
	}
	for i := range p {
		p[i] /= float32(sum)
	}
}

// fmaxf is C's fmaxf: the larger, ignoring a NaN.
func fmaxf(a, b float32) float32 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	case a > b:
		return a
	}
	return b
}
