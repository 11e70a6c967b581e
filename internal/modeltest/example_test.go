package modeltest_test

import (
	"fmt"

	"github.com/scorehub/scorehub/internal/modeltest"
)

// A class is only checked where the library's answer is not a tie within
// the tolerance: there a build that sums in another order may pick either.
func ExampleTied() {
	for _, probs := range [][]float64{{0.2, 0.8}, {0.5, 0.5000001}} {
		fmt.Println(modeltest.MostProbable(probs), modeltest.Tied(probs))
	}
	// Output:
	// 1 false
	// 1 true
}
