package treeshap

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomTree grows a tree of the given depth over nFeat features, leaves
// cut off at random, features repeated on paths as often as chance has it,
// covers that split each node's at random.
func randomTree(rng *rand.Rand, depth, nFeat int) *Tree {
	t := &Tree{}
	var grow func(d int, cover float64) int32
	grow = func(d int, cover float64) int32 {
		i := int32(len(t.Left))
		t.Left = append(t.Left, -1)
		t.Right = append(t.Right, -1)
		t.Feature = append(t.Feature, 0)
		t.Cover = append(t.Cover, cover)
		t.Value = append(t.Value, rng.NormFloat64())
		if d == depth || (d > 0 && rng.IntN(4) == 0) {
			return i
		}
		t.Depth = max(t.Depth, d+1)
		t.Feature[i] = int32(rng.IntN(nFeat))
		share := 0.05 + 0.9*rng.Float64()
		l := grow(d+1, cover*share)
		r := grow(d+1, cover*(1-share))
		t.Left[i], t.Right[i] = l, r
		return i
	}
	grow(0, 100)
	return t
}

// TestAgainstExact: on random trees and rows, TreeSHAP gives every
// feature the Shapley value the definition gives it, and the
// contributions add up to the leaf's value less the tree's mean.
func TestAgainstExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var w Walker
	for trial := range 300 {
		nFeat := 1 + rng.IntN(10)
		tr := randomTree(rng, 1+rng.IntN(8), nFeat)
		// A row is, at each split, a coin toss; the same toss for a
		// feature's every split would not cover paths that go left then
		// right on one feature, which TreeSHAP must handle too.
		side := make([]bool, len(tr.Left))
		for i := range side {
			side[i] = rng.IntN(2) == 0
		}
		hot := func(i int32) int32 {
			if side[i] {
				return tr.Right[i]
			}
			return tr.Left[i]
		}
		phi := make([]float64, nFeat)
		w.Add(tr, hot, 1, phi)
		want := Exact(tr, hot, nFeat)
		sum := 0.0
		for f := range phi {
			sum += phi[f]
			if math.Abs(phi[f]-want[f]) > 1e-9*(1+math.Abs(want[f])) {
				t.Fatalf("trial %d: feature %d: TreeSHAP %v, exact %v", trial, f, phi[f], want[f])
			}
		}
		leaf := int32(0)
		for tr.Left[leaf] >= 0 {
			leaf = hot(leaf)
		}
		if d := tr.Value[leaf] - tr.Mean(); math.Abs(sum-d) > 1e-9*(1+math.Abs(d)) {
			t.Fatalf("trial %d: contributions sum to %v; the leaf is %v from the mean", trial, sum, d)
		}
	}
}
