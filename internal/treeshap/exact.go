package treeshap

import "math"

// Exact returns the contributions of t's output for one row over nFeat
// features by the definition of Shapley values: every subset S of the
// other features, each feature's marginal effect weighted by
// |S|!(nFeat−|S|−1)!/nFeat!, the value of a subset the tree's output
// expected by cover when only the subset's features are known. It takes
// time exponential in nFeat and is meant to check [Walker.Add].
func Exact(t *Tree, hot func(node int32) int32, nFeat int) []float64 {
	if nFeat > 20 {
		panic("treeshap: Exact enumerates 2^nFeat subsets; too many features")
	}
	value := make([]float64, 1<<nFeat)
	for s := range value {
		value[s] = t.expect(0, uint(s), hot)
	}
	weight := make([]float64, nFeat) // by |S|
	for k := range weight {
		weight[k] = math.Exp(lgamma(k+1) + lgamma(nFeat-k) - lgamma(nFeat+1))
	}
	phi := make([]float64, nFeat)
	for f := range nFeat {
		bit := 1 << f
		for s := range value {
			if s&bit != 0 {
				continue
			}
			phi[f] += weight[popcount(s)] * (value[s|bit] - value[s])
		}
	}
	return phi
}

// expect is the output expected below node i when only the features in
// the set known are known: a split on a known feature follows the row,
// any other weighs its children by cover.
func (t *Tree) expect(i int32, known uint, hot func(int32) int32) float64 {
	if t.Left[i] < 0 {
		return t.Value[i]
	}
	if known&(1<<uint(t.Feature[i])) != 0 {
		return t.expect(hot(i), known, hot)
	}
	l, r := t.Left[i], t.Right[i]
	return (t.expect(l, known, hot)*t.Cover[l] + t.expect(r, known, hot)*t.Cover[r]) / t.Cover[i]
}

func lgamma(n int) float64 {
	v, _ := math.Lgamma(float64(n))
	return v
}

func popcount(s int) int {
	n := 0
	for ; s != 0; s &= s - 1 {
		n++
	}
	return n
}
