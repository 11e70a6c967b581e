package xgboost

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// randomTree is a random tree over nf features, as XGBoost's arrays, with
// a categorical split now and then when cats is set.
type randomTree struct {
	left, right, feat, dflt, kind []int
	cond                          []float32
	cats                          map[int][]int
}

func newRandomTree(rng *rand.Rand, nf, maxDepth int, cats bool) *randomTree {
	t := &randomTree{cats: map[int][]int{}}
	alloc := func() int {
		t.left, t.right, t.feat, t.dflt, t.kind = append(t.left, -1), append(t.right, -1), append(t.feat, 0), append(t.dflt, 0), append(t.kind, 0)
		t.cond = append(t.cond, float32(rng.NormFloat64()))
		return len(t.left) - 1
	}
	// Children are numbered in pairs, as XGBoost numbers them, but
	// depth first, unlike the reader's own breadth-first order.
	var grow func(i, depth int)
	grow = func(i, depth int) {
		if depth == maxDepth || (depth > 0 && rng.IntN(4) == 0) {
			return
		}
		t.feat[i], t.dflt[i] = rng.IntN(nf), rng.IntN(2)
		if cats && rng.IntN(3) == 0 {
			t.kind[i], t.cond[i] = 1, 0
			t.cats[i] = []int{rng.IntN(4), rng.IntN(4) + 2}
		}
		l, r := alloc(), alloc()
		t.left[i], t.right[i] = l, r
		grow(l, depth+1)
		grow(r, depth+1)
	}
	grow(alloc(), 0)
	return t
}

// leaf is a plain walk of the tree, as XGBoost 1.7 describes it.
func (t *randomTree) leaf(x []float32) float32 {
	i := 0
	for t.left[i] != -1 {
		v := x[t.feat[i]]
		switch {
		case math.IsNaN(float64(v)):
			if t.dflt[i] == 1 {
				i = t.left[i]
			} else {
				i = t.right[i]
			}
		case t.kind[i] == 1:
			if v >= 0 && v < 1<<24 && slices.Contains(t.cats[i], int(v)) {
				i = t.right[i]
			} else {
				i = t.left[i]
			}
		case v < t.cond[i]:
			i = t.left[i]
		default:
			i = t.right[i]
		}
	}
	return t.cond[i]
}

func (t *randomTree) obj() obj {
	o := treeOf(t.left, t.right, t.feat, t.cond, t.dflt)
	o["split_type"] = t.kind
	nodes, segs, sizes, all := []int{}, []int{}, []int{}, []int{}
	for i := range t.left {
		if c, ok := t.cats[i]; ok {
			nodes, segs, sizes = append(nodes, i), append(segs, len(all)), append(sizes, len(c))
			all = append(all, c...)
		}
	}
	o["categories_nodes"], o["categories_segments"], o["categories_sizes"], o["categories"] = nodes, segs, sizes, all
	return o
}

// TestWalksAgree scores random forests, row by row and in tables of many
// rows, and compares every prediction with a plain walk of each tree:
// lockstep walks over rows and over trees, deep trees and categorical
// splits must all reach the same leaves, added in the same order.
func TestWalksAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const nf = 5
	for _, tc := range []struct {
		name  string
		trees int
		depth int
		cats  bool
		dart  bool
	}{
		{"shallow", 21, 4, false, false},
		{"deep", 19, 20, false, false},
		{"categorical", 17, 5, true, false},
		{"dart", 26, 6, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var trees []*randomTree
			var objs []obj
			var weights []float32
			for range tc.trees {
				rt := newRandomTree(rng, nf, tc.depth, tc.cats)
				trees, objs = append(trees, rt), append(objs, rt.obj())
				weights = append(weights, float32(rng.Float64()))
			}
			m := modelOf("reg:squarederror", 0, objs...)
			at(m, "learner", "learner_model_param")["num_feature"] = itoa(nf)
			if tc.dart {
				at(m, "learner")["gradient_booster"] = obj{"name": "dart", "gbtree": at(m, "learner", "gradient_booster"), "weight_drop": weights}
			}
			lm := load(t, m, process.ModelMetadata{})

			const rows = 37
			cols := make([][]float64, nf)
			for f := range cols {
				cols[f] = make([]float64, rows)
				for r := range rows {
					switch rng.IntN(6) {
					case 0:
						cols[f][r] = math.NaN()
					case 1:
						cols[f][r] = float64(rng.IntN(7) - 1)
					default:
						cols[f][r] = rng.NormFloat64()
					}
				}
			}
			want := make([]float64, rows)
			for r := range rows {
				x := make([]float32, nf)
				for f := range x {
					x[f] = float32(cols[f][r])
				}
				sum := float32(0.5)
				for i, rt := range trees {
					v := rt.leaf(x)
					if tc.dart {
						v = float32(v * weights[i])
					}
					sum += v
				}
				want[r] = float64(sum)
			}
			table := func(first, last int) *process.Table {
				var cs []process.Column
				for f := range cols {
					cs = append(cs, process.NumberColumn(lm.Schema.Inputs[f].Name, cols[f][first:last], nil))
				}
				return tabletest.Must(last-first, cs...)
			}
			got := score(t, lm, table(0, rows))["prediction(label)"]
			for r := range rows {
				if got[r] != want[r] {
					t.Errorf("row %d of %d: prediction %v, want %v", r, rows, got[r], want[r])
				}
				if one := score(t, lm, table(r, r+1))["prediction(label)"][0]; one != want[r] {
					t.Errorf("row %d alone: prediction %v, want %v", r, one, want[r])
				}
			}
		})
	}
}
