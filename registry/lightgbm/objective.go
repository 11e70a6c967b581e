package lightgbm

import (
	"math"
	"strconv"
	"strings"
)

// transform is how an objective turns raw scores into predictions
// (LightGBM's ConvertOutput).
type transform uint8

const (
	outIdentity   transform = iota
	outSquare               // regression with sqrt: sign(x)·x·x
	outExp                  // poisson, gamma, tweedie
	outSigmoid              // binary, multiclassova: 1/(1+exp(-σx))
	outSoftmax              // multiclass
	outLog1pExp             // cross_entropy_lambda: log(1+exp(x))
	outSigmoidOne           // cross_entropy: 1/(1+exp(-x))
)

// objective is what the reader knows of a model's objective.
type objective struct {
	name     string // the objective's name, its first word in the file
	out      transform
	sigmoid  float64 // σ of outSigmoid
	class    bool    // a classifier
	numClass int     // num_class the objective names; 0 where it names none
}

// objectives lists the objectives this reader scores, for messages.
const objectives = "regression, regression_l1, huber, fair, quantile, mape, poisson, gamma, tweedie, " +
	"binary, multiclass, multiclassova, cross_entropy, cross_entropy_lambda, lambdarank, rank_xendcg"

// parseObjective reads the header's objective line as LightGBM's
// objective constructors do: a name, then words such as "sqrt",
// "sigmoid:1" or "num_class:3".
func parseObjective(s string) (objective, error) {
	words := strings.Split(s, " ")
	o := objective{name: words[0], sigmoid: -1}
	sqrt := false
	for _, w := range words[1:] {
		k, v, ok := strings.Cut(w, ":")
		switch {
		case w == "sqrt":
			sqrt = true
		case ok && k == "sigmoid":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return o, invalid("objective %q: sigmoid %q is not a number", s, v)
			}
			o.sigmoid = f
		case ok && k == "num_class":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return o, invalid("objective %q: num_class %q is not a count", s, v)
			}
			o.numClass = n
		}
	}
	switch o.name {
	case "regression", "regression_l1", "fair", "quantile", "mape":
		if sqrt {
			o.out = outSquare
		}
	case "huber", "lambdarank", "rank_xendcg":
		// huber ignores sqrt; a ranking score is the raw score.
	case "poisson", "gamma", "tweedie":
		o.out = outExp
	case "binary", "multiclassova":
		if !(o.sigmoid > 0) {
			return o, invalid("objective %q needs a sigmoid greater than zero", s)
		}
		o.out, o.class = outSigmoid, true
		if o.name == "multiclassova" && o.numClass == 0 {
			return o, invalid("objective %q names no num_class", s)
		}
	case "multiclass":
		if o.numClass == 0 {
			return o, invalid("objective %q names no num_class", s)
		}
		o.out, o.class = outSoftmax, true
	case "cross_entropy":
		o.out = outSigmoidOne
	case "cross_entropy_lambda":
		o.out = outLog1pExp
	case "custom":
		return o, invalid("the model was trained with a custom objective; its predictions are whatever the training code made of raw scores, which this reader cannot know")
	default:
		return o, invalid("objective %q is not supported (supported: %s)", o.name, objectives)
	}
	return o, nil
}

// convert turns the raw scores of one row into predictions, in place,
// with the arithmetic of LightGBM's ConvertOutput (in float64).
func (o *objective) convert(v []float64) {
	switch o.out {
	case outSquare:
		x := v[0]
		v[0] = sign(x) * x * x
	case outExp:
		v[0] = exp(v[0])
	case outSigmoid:
		for i, x := range v {
			v[i] = 1 / (1 + exp(-o.sigmoid*x))
		}
	case outSigmoidOne:
		v[0] = 1 / (1 + exp(-v[0]))
	case outLog1pExp:
		v[0] = math.Log1p(exp(v[0]))
	case outSoftmax:
		wmax := v[0]
		for _, x := range v[1:] {
			if !(x < wmax) { // std::max(x, wmax)
				wmax = x
			}
		}
		sum := 0.0
		for i, x := range v {
			v[i] = exp(x - wmax)
			sum += v[i]
		}
		for i := range v {
			v[i] /= sum
		}
	}
}

// sign is LightGBM's Common::Sign: 1, -1 or 0.
func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
