package treeshap_test

import (
	"fmt"

	"github.com/scorehub/scorehub/internal/treeshap"
)

// A tree of two splits: feature 0 at the root, feature 1 below its left
// child. Of 10 training rows, 4 went left and 6 right; of the 4, 1 went
// left again.
func Example() {
	t := &treeshap.Tree{
		Left:    []int32{1, 3, -1, -1, -1},
		Right:   []int32{2, 4, -1, -1, -1},
		Feature: []int32{0, 1, 0, 0, 0},
		Cover:   []float64{10, 4, 6, 1, 3},
		Value:   []float64{0, 0, 2, -4, 1},
		Depth:   2,
	}
	// The row goes left, then left: to the leaf of value -4.
	hot := func(node int32) int32 { return t.Left[node] }
	phi := make([]float64, 2)
	var w treeshap.Walker
	w.Add(t, hot, 1, phi)
	fmt.Printf("mean %.3f, contributions %.3f, exact %.3f\n", t.Mean(), phi, treeshap.Exact(t, hot, 2))
	// Output:
	// mean 1.100, contributions [-2.475 -2.625], exact [-2.475 -2.625]
}
