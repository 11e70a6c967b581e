package modeltest

import (
	"encoding/json"
	"strconv"
)

// XGBoostClasses returns the file of an XGBoost 1.7 multi:softprob model
// of k classes over the features f0 and f1, one stump a class, as
// XGBoost writes them. Its answer has 1 + k result columns: the model of
// the tests of what a request may make the server build.
func XGBoostClasses(k int) []byte {
	type obj = map[string]any
	trees := make([]obj, k)
	info := make([]int, k)
	for i := range trees {
		info[i] = i
		trees[i] = obj{
			"base_weights": []float32{0, 0, 0}, "categories": []int{}, "categories_nodes": []int{},
			"categories_segments": []int{}, "categories_sizes": []int{},
			"default_left": []int{1, 0, 0}, "id": i,
			"left_children": []int{1, -1, -1}, "right_children": []int{2, -1, -1},
			"split_conditions": []float32{float32(i % 7), -0.5, float32(i%5) / 10},
			"split_indices":    []int{i % 2, 0, 0}, "split_type": []int{0, 0, 0},
			"tree_param": obj{"num_deleted": "0", "num_feature": "2", "num_nodes": "3", "size_leaf_vector": "0"},
		}
	}
	m := obj{
		"learner": obj{
			"attributes": obj{}, "feature_names": []string{}, "feature_types": []string{},
			"gradient_booster": obj{
				"model": obj{
					"gbtree_model_param": obj{"num_parallel_tree": "1", "num_trees": strconv.Itoa(k), "size_leaf_vector": "0"},
					"tree_info":          info,
					"trees":              trees,
				},
				"name": "gbtree",
			},
			"learner_model_param": obj{"base_score": "5E-1", "boost_from_average": "1", "num_class": strconv.Itoa(k),
				"num_feature": "2", "num_target": "1"},
			"objective": obj{"name": "multi:softprob", "softmax_multiclass_param": obj{"num_class": strconv.Itoa(k)}},
		},
		"version": []int{1, 7, 4},
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // maps of numbers and strings always marshal
	}
	return b
}
