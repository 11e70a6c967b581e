package lightgbm_test

import (
	"context"
	"fmt"
	"math"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/lightgbm"
	"github.com/scorehub/scorehub/registry/process"
)

// stump is a binary classifier of one split, as LightGBM writes it: a
// radius above 15 raises the raw score, and a missing radius goes left.
const stump = `tree
version=v4
num_class=1
num_tree_per_iteration=1
label_index=0
max_feature_idx=0
objective=binary sigmoid:1
feature_names=radius
feature_infos=[6.98:28.11]
tree_sizes=268

Tree=0
num_leaves=2
num_cat=0
split_feature=0
split_gain=100
threshold=15.000000000000002
decision_type=10
left_child=-1
right_child=-2
leaf_value=-1.5 2
leaf_weight=10 10
leaf_count=10 10
internal_value=0
internal_weight=0
internal_count=20
is_linear=0
shrinkage=1


end of trees
`

// A LightGBM text model is loaded and scored like any process: the
// confidence of class 1 is LightGBM's prediction, the sigmoid of the sum
// of the trees.
func Example() {
	lm, err := lightgbm.Format{}.Load([]byte(stump), process.ModelMetadata{Label: "malignant"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(lm.Schema.Task, lm.Schema.Objective, lm.Schema.Classes)
	fmt.Println(string(lm.Sample))
	radius := []float64{12, 20, math.NaN()}
	in := tabletest.Must(3, process.NumberColumn("radius", radius, nil))
	out, err := lm.Process.Score(context.Background(), process.Input{Table: in})
	if err != nil {
		fmt.Println(err)
		return
	}
	predicted, _ := out.Lookup("prediction(malignant)")
	confidence, _ := out.Lookup("confidence(1)")
	for i, r := range radius {
		fmt.Printf("radius %v: class %s, confidence %.4f\n", r, predicted.Texts[i], confidence.Numbers[i])
	}
	// Output:
	// classification binary sigmoid:1 [0 1]
	// [{"radius":17.545}]
	// radius 12: class 0, confidence 0.1824
	// radius 20: class 1, confidence 0.8808
	// radius NaN: class 0, confidence 0.1824
}
