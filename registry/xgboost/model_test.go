package xgboost

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry/process"
)

func TestDefaultDirection(t *testing.T) {
	nan := math.NaN()
	for _, dflt := range []int{0, 1} {
		// f0 < 0.5 → -1, else +1; reg:squarederror from base_score 0.5.
		lm := load(t, modelOf("reg:squarederror", 0, stump(0, 0.5, -1, 1, dflt)), process.ModelMetadata{})
		missingLeaf := 1.5
		if dflt == 1 {
			missingLeaf = -0.5
		}
		in := tabletest.Must(4,
			process.NumberColumn("f0", []float64{0.2, 0.5, nan, 0.1}, []bool{false, false, false, true}),
		)
		got := score(t, lm, in)["prediction(label)"]
		want := []float64{-0.5, 1.5, missingLeaf, missingLeaf}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("default_left %d: predictions (-want +got):\n%s", dflt, diff)
		}
	}
}

func TestThresholdIsFloat32(t *testing.T) {
	// 0.1 rounds to float32 0.100000001490116…: a float64 0.1 is below
	// it, but XGBoost rounds the feature to the same float32 first, so the
	// value is not below the threshold and goes right.
	lm := load(t, modelOf("reg:squarederror", 0, stump(0, 0.1, -1, 1, 1)), process.ModelMetadata{})
	got := score(t, lm, rowsOf([2]float64{0.1, 0}, [2]float64{0.09999999, 0}))["prediction(label)"]
	if got[0] != 1.5 || got[1] != -0.5 {
		t.Errorf("predictions %v, want [1.5 -0.5]", got)
	}
}

func TestObjectives(t *testing.T) {
	// One stump on f0 at 0 with leaves -0.25 and 0.75; rows go left and
	// right. base_score is each case's.
	left, right := -0.25, 0.75
	for _, tc := range []struct {
		objective string
		base      string
		want      func(leaf float64) float64 // the regressor's answer or the second class's confidence
		class     bool
	}{
		{"reg:squarederror", "5E-1", func(l float64) float64 { return 0.5 + l }, false},
		{"reg:linear", "2E0", func(l float64) float64 { return 2 + l }, false},
		{"reg:absoluteerror", "1E1", func(l float64) float64 { return 10 + l }, false},
		{"reg:squaredlogerror", "5E-1", func(l float64) float64 { return 0.5 + l }, false},
		{"reg:pseudohubererror", "5E-1", func(l float64) float64 { return 0.5 + l }, false},
		{"reg:logistic", "2E-1", func(l float64) float64 { return sig(math.Log(0.2/0.8) + l) }, false},
		{"count:poisson", "3E0", func(l float64) float64 { return math.Exp(math.Log(3) + l) }, false},
		{"reg:gamma", "3E0", func(l float64) float64 { return math.Exp(math.Log(3) + l) }, false},
		{"reg:tweedie", "5E-1", func(l float64) float64 { return math.Exp(math.Log(0.5) + l) }, false},
		{"binary:logistic", "2E-1", func(l float64) float64 { return sig(math.Log(0.2/0.8) + l) }, true},
		// logitraw starts from base_score itself, not its logit.
		{"binary:logitraw", "2E-1", func(l float64) float64 { return sig(0.2 + l) }, true},
		{"binary:hinge", "5E-1", func(l float64) float64 {
			if 0.5+l > 0 {
				return 1
			}
			return 0
		}, true},
	} {
		t.Run(tc.objective, func(t *testing.T) {
			m := modelOf(tc.objective, 0, stump(0, 0, float32(left), float32(right), 0))
			at(m, "learner", "learner_model_param")["base_score"] = tc.base
			lm := load(t, m, process.ModelMetadata{Label: "y"})
			cols := score(t, lm, rowsOf([2]float64{-1, 0}, [2]float64{1, 0}))
			for i, leaf := range []float64{left, right} {
				want := tc.want(leaf)
				if tc.class {
					if got := cols["confidence(1)"][i]; !near(got, want) {
						t.Errorf("row %d: confidence(1) = %v, want %v", i, got, want)
					}
					if got := cols["confidence(0)"][i]; !near(got, 1-want) {
						t.Errorf("row %d: confidence(0) = %v, want %v", i, got, 1-want)
					}
					continue
				}
				if got := cols["prediction(y)"][i]; !near(got, want) {
					t.Errorf("row %d: prediction = %v, want %v", i, got, want)
				}
			}
		})
	}
}

func TestMultiClass(t *testing.T) {
	// Three classes, two rounds: tree_info gives trees 0..5 the classes
	// 0,1,2,0,1,2. Each tree splits f0 at 0.
	var trees []obj
	leaves := [][2]float32{{1, -1}, {0.5, 0.5}, {-1, 1}, {0.25, 0}, {0, 0.25}, {0, 0}}
	for _, l := range leaves {
		trees = append(trees, stump(0, 0, l[0], l[1], 1))
	}
	for _, objective := range []string{"multi:softprob", "multi:softmax"} {
		t.Run(objective, func(t *testing.T) {
			m := modelOf(objective, 3, trees...)
			at(m, "learner", "gradient_booster", "model")["tree_info"] = []int{0, 1, 2, 0, 1, 2}
			lm := load(t, m, process.ModelMetadata{Label: "species", Classes: []string{"a", "b", "c"}})
			out, err := lm.Process.Score(context.Background(), process.Input{Table: rowsOf([2]float64{-1, 0}, [2]float64{1, 0})})
			if err != nil {
				t.Fatal(err)
			}
			for row, side := range []int{0, 1} {
				var m [3]float64
				for i, l := range leaves {
					m[i%3] += float64(l[side])
				}
				// base_score 0.5 is added to every class: softmax ignores it.
				sum := math.Exp(m[0]) + math.Exp(m[1]) + math.Exp(m[2])
				for k, c := range []string{"a", "b", "c"} {
					got, _ := out.Row(row).Number("confidence(" + c + ")")
					if want := math.Exp(m[k]) / sum; !near(got, want) {
						t.Errorf("row %d: confidence(%s) = %v, want %v", row, c, got, want)
					}
				}
			}
			if p, _ := out.Row(0).Text("prediction(species)"); p != "a" {
				t.Errorf("row 0 predicted %q, want a", p)
			}
			if p, _ := out.Row(1).Text("prediction(species)"); p != "c" {
				t.Errorf("row 1 predicted %q, want c", p)
			}
		})
	}
}

func TestDartWeights(t *testing.T) {
	gb := modelOf("reg:squarederror", 0, stump(0, 0, 1, 2, 0), stump(1, 0, 10, 20, 0))
	booster := at(gb, "learner")["gradient_booster"].(obj)
	at(gb, "learner")["gradient_booster"] = obj{"name": "dart", "gbtree": booster, "weight_drop": []float32{0.5, 0.25}}
	lm := load(t, gb, process.ModelMetadata{})
	got := score(t, lm, rowsOf([2]float64{-1, -1}, [2]float64{1, 1}))["prediction(label)"]
	want := []float64{0.5 + 0.5*1 + 0.25*10, 0.5 + 0.5*2 + 0.25*20}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dart predictions (-want +got):\n%s", diff)
	}
}

func TestDartWeightsInGBTree(t *testing.T) {
	// XGBoost 3.3 saves a dart model as a gbtree with weight_drop beside
	// its model; 3.4 inside it.
	for _, inside := range []bool{false, true} {
		m := modelOf("reg:squarederror", 0, stump(0, 0, 1, 2, 0), stump(1, 0, 10, 20, 0))
		if inside {
			at(m, "learner", "gradient_booster", "model")["weight_drop"] = []float32{0.5, 0.25}
		} else {
			at(m, "learner", "gradient_booster")["weight_drop"] = []float32{0.5, 0.25}
		}
		got := score(t, load(t, m, process.ModelMetadata{}), rowsOf([2]float64{1, -1}))["prediction(label)"][0]
		if want := 0.5 + 0.5*2 + 0.25*10; got != want {
			t.Errorf("weight_drop inside the model %v: prediction %v, want %v", inside, got, want)
		}
	}
}

func TestParallelTrees(t *testing.T) {
	// A boosted forest: two trees a round, one round; both add.
	m := modelOf("reg:squarederror", 0, stump(0, 0, 1, 2, 0), stump(1, 0, 10, 20, 0))
	at(m, "learner", "gradient_booster", "model", "gbtree_model_param")["num_parallel_tree"] = "2"
	at(m, "learner", "gradient_booster", "model")["iteration_indptr"] = []int{0, 2}
	lm := load(t, m, process.ModelMetadata{})
	got := score(t, lm, rowsOf([2]float64{-1, 1}))["prediction(label)"]
	if want := 0.5 + 1 + 20; got[0] != want {
		t.Errorf("prediction %v, want %v", got[0], want)
	}
	if lm.Schema.Trees != 2 {
		t.Errorf("schema counts %d trees, want 2", lm.Schema.Trees)
	}
}

func TestLinear(t *testing.T) {
	linear := func(objective string, classes int, weights ...float32) obj {
		m := modelOf(objective, classes)
		at(m, "learner")["gradient_booster"] = obj{"name": "gblinear", "model": obj{"boosted_rounds": 3, "weights": weights}}
		return m
	}
	nan := math.NaN()
	// prediction = base_score + bias + 2·f0 − f1; a missing feature adds
	// nothing.
	lm := load(t, linear("reg:squarederror", 0, 2, -1, 0.25), process.ModelMetadata{})
	got := score(t, lm, rowsOf([2]float64{1, 3}, [2]float64{nan, 3}, [2]float64{nan, nan}))["prediction(label)"]
	if diff := cmp.Diff([]float64{0.5 + 0.25 + 2 - 3, 0.5 + 0.25 - 3, 0.75}, got); diff != "" {
		t.Errorf("gblinear predictions (-want +got):\n%s", diff)
	}
	if lm.Schema.Trees != 0 {
		t.Errorf("a linear model counts %d trees", lm.Schema.Trees)
	}
	// Three classes: weights[f*3+k] for feature f and class k, then the
	// biases.
	lm = load(t, linear("multi:softprob", 3, 1, 0, -1, 0, 2, 0, 0.5, 0, 0), process.ModelMetadata{})
	cols := score(t, lm, rowsOf([2]float64{1, 1}))
	m := []float64{0.5 + 1, 2, -1}
	sum := math.Exp(m[0]) + math.Exp(m[1]) + math.Exp(m[2])
	for k := range m {
		if got, want := cols["confidence("+itoa(k)+")"][0], math.Exp(m[k])/sum; !near(got, want) {
			t.Errorf("class %d: confidence %v, want %v", k, got, want)
		}
	}
}

func TestBaseScorePerClass(t *testing.T) {
	// XGBoost 3.1 and later keep a multi-class model's intercept per
	// class, as margins: each class starts from its own.
	m := modelOf("multi:softprob", 3, stump(0, 0, 1, 2, 0), stump(0, 0, 1, 2, 0), stump(0, 0, 1, 2, 0))
	at(m, "learner", "gradient_booster", "model")["tree_info"] = []int{0, 1, 2}
	at(m, "learner", "learner_model_param")["base_score"] = "[-1E0,0E0,2.5E-1]"
	cols := score(t, load(t, m, process.ModelMetadata{}), rowsOf([2]float64{1, 0}))
	margins := []float64{-1 + 2, 0 + 2, 0.25 + 2}
	sum := math.Exp(margins[0]) + math.Exp(margins[1]) + math.Exp(margins[2])
	for k, mk := range margins {
		if got, want := cols["confidence("+itoa(k)+")"][0], math.Exp(mk)/sum; !near(got, want) {
			t.Errorf("class %d: confidence %v, want %v", k, got, want)
		}
	}
}

func TestBaseScoreForms(t *testing.T) {
	for _, form := range []any{"5E-1", 0.5, []float32{0.5}, "[5E-1]", " 0.5 ", "[5E-1, 5E-1]"} {
		m := modelOf("reg:squarederror", 0, stump(0, 0, 1, 2, 0))
		at(m, "learner", "learner_model_param")["base_score"] = form
		if s, ok := form.(string); ok && strings.Contains(s, ",") {
			// A list per class is read only for as many classes.
			m = modelOf("multi:softprob", 2, stump(0, 0, 1, 2, 0), stump(0, 0, 1, 2, 0))
			at(m, "learner", "learner_model_param")["base_score"] = form
			at(m, "learner", "gradient_booster", "model")["tree_info"] = []int{0, 1}
			load(t, m, process.ModelMetadata{})
			continue
		}
		lm := load(t, m, process.ModelMetadata{})
		if got := score(t, lm, rowsOf([2]float64{1, 0}))["prediction(label)"][0]; got != 2.5 {
			t.Errorf("base_score %#v: prediction %v, want 2.5", form, got)
		}
	}
}

func TestCategoricalSplit(t *testing.T) {
	// Node 0 splits categorical feature 0: categories 1 and 3 go right
	// (leaf 2), others left (leaf 1); missing values go left.
	tr := treeOf([]int{1, -1, -1}, []int{2, -1, -1}, []int{0, 0, 0}, []float32{0, 1, 2}, []int{0, 0, 0})
	tr["split_type"] = []int{1, 0, 0}
	tr["categories_nodes"] = []int{0}
	tr["categories_segments"] = []int{0}
	tr["categories_sizes"] = []int{2}
	tr["categories"] = []int{3, 1}
	m := modelOf("reg:squarederror", 0, tr)
	at(m, "learner")["feature_types"] = []string{"c", "float"}
	lm := load(t, m, process.ModelMetadata{})
	nan := math.NaN()
	in := []float64{0, 1, 2, 3, 4, 1.9, -1, -0.5, 1 << 24, 1e30, nan}
	want := []float64{1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 2}
	for i := range want {
		want[i] += 0.5
	}
	// A missing category takes the default branch, right here.
	got := score(t, lm, tabletest.Must(len(in), process.NumberColumn("f0", in, nil)))["prediction(label)"]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("categorical predictions for %v (-want +got):\n%s", in, diff)
	}
}

func TestSchema(t *testing.T) {
	m := modelOf("binary:logistic", 0, stump(0, 0, 1, 2, 0), stump(1, 0, 1, 2, 0))
	at(m, "learner")["feature_names"] = []string{"age", "income"}
	lm := load(t, m, process.ModelMetadata{Label: "churn", Classes: []string{"no", "yes"}})
	want := process.ModelSchema{
		Format: "xgboost", Producer: "xgboost 1.7.4", Objective: "binary:logistic",
		Task: process.Classification, Label: "churn", Classes: []string{"no", "yes"},
		Inputs: []process.ColumnSpec{{Name: "age", Kind: process.Number}, {Name: "income", Kind: process.Number}},
		Outputs: []process.ColumnSpec{
			{Name: "prediction(churn)", Kind: process.Text},
			{Name: "confidence(no)", Kind: process.Number},
			{Name: "confidence(yes)", Kind: process.Number},
		},
		Trees:       2,
		Unexplained: "its trees do not hold every node's cover (sum_hessian), which TreeSHAP weighs by; XGBoost's save_model writes them in its JSON and UBJSON files",
	}
	if diff := cmp.Diff(want, lm.Schema); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
	// The metadata's feature names win over the file's.
	lm = load(t, m, process.ModelMetadata{Features: []string{"a", "b"}})
	if lm.Schema.Inputs[0].Name != "a" || lm.Schema.Classes[1] != "1" || lm.Schema.Label != "label" {
		t.Errorf("schema with metadata features: %+v", lm.Schema)
	}
	// Without names anywhere, features are f0, f1, … .
	lm = load(t, modelOf("reg:gamma", 0, stump(0, 0, 1, 2, 0)), process.ModelMetadata{})
	if lm.Schema.Inputs[1].Name != "f1" || lm.Schema.Task != process.Regression || len(lm.Schema.Outputs) != 1 {
		t.Errorf("schema of a regressor: %+v", lm.Schema)
	}
}

func TestLoadRefuses(t *testing.T) {
	base := func() obj { return modelOf("binary:logistic", 0, stump(0, 0, 1, 2, 0)) }
	gbModel := func(m obj) obj { return at(m, "learner", "gradient_booster", "model") }
	tree0 := func(m obj) obj { return gbModel(m)["trees"].([]obj)[0] }
	same := func(m obj) obj { return m }
	deep := func(depth int) obj {
		// A chain: node 2k splits, its left child 2k+1 is a leaf.
		n := 2*depth + 1
		left, right, feat, dflt := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
		cond := make([]float32, n)
		for i := range n {
			left[i], right[i] = -1, -1
		}
		for k := range depth {
			left[2*k], right[2*k] = 2*k+1, 2*k+2
		}
		return modelOf("reg:squarederror", 0, treeOf(left, right, feat, cond, dflt))
	}
	for _, tc := range []struct {
		name   string
		edit   func(m obj) obj
		meta   process.ModelMetadata
		limits Limits
		kind   error
		says   string
	}{
		{"multi-target", func(m obj) obj { at(m, "learner", "learner_model_param")["num_target"] = "2"; return m }, process.ModelMetadata{}, Limits{},
			process.ErrModelInvalid, "2 targets"},
		{"gblinear weights missing", func(m obj) obj {
			at(m, "learner")["gradient_booster"] = obj{"name": "gblinear", "model": obj{"weights": []float32{1, 2}}}
			return m
		}, process.ModelMetadata{}, Limits{}, process.ErrModelInvalid, "gblinear holds 2 weights; 2 features and 1 outputs need 3"},
		{"unknown booster", func(m obj) obj { at(m, "learner", "gradient_booster")["name"] = "gbforest"; return m }, process.ModelMetadata{}, Limits{},
			process.ErrModelInvalid, `"gbforest"`},
		{"unknown objective", func(m obj) obj { at(m, "learner", "objective")["name"] = "reg:cubic"; return m }, process.ModelMetadata{}, Limits{},
			process.ErrModelInvalid, `"reg:cubic"`},
		{"ranking", func(m obj) obj { at(m, "learner", "objective")["name"] = "rank:pairwise"; return m }, process.ModelMetadata{}, Limits{},
			process.ErrModelInvalid, `ranking objective "rank:pairwise"`},
		{"newer version", func(m obj) obj { m["version"] = []int{4, 0, 0}; return m }, process.ModelMetadata{}, Limits{},
			process.ErrModelInvalid, "xgboost 4.0.0"},
		{"arrays of different lengths", func(m obj) obj { tree0(m)["split_conditions"] = []float32{0, 1}; return m }, process.ModelMetadata{}, Limits{},
			process.ErrModelInvalid, "tree 0 has 3 left_children but 2 split_conditions"},
		{"child out of range", func(m obj) obj { tree0(m)["right_children"] = []int{7, -1, -1}; return m }, process.ModelMetadata{}, Limits{},
			process.ErrModelInvalid, "tree 0 node 0 has child 7"},
		{"cycle", func(m obj) obj {
			tree0(m)["left_children"] = []int{1, 0, -1}
			tree0(m)["right_children"] = []int{2, 2, -1}
			return m
		},
			process.ModelMetadata{}, Limits{}, process.ErrModelInvalid, "tree 0 node 1 has child 0, which is reached twice"},
		{"right child not after the left", func(m obj) obj {
			gbModel(m)["trees"] = []obj{treeOf([]int{2, -1, -1}, []int{1, -1, -1}, make([]int, 3), make([]float32, 3), make([]int, 3))}
			return m
		}, process.ModelMetadata{}, Limits{}, process.ErrModelInvalid, "tree 0 node 0 has children 2 and 1"},
		{"split without a right child", func(m obj) obj {
			gbModel(m)["trees"] = []obj{treeOf([]int{1, 3, -1, -1}, []int{2, -1, -1, -1}, []int{0, 0, 0, 0}, make([]float32, 4), make([]int, 4))}
			return m
		}, process.ModelMetadata{}, Limits{}, process.ErrModelInvalid, "tree 0 node 1 has child -1"},
		{"shared child", func(m obj) obj {
			gbModel(m)["trees"] = []obj{treeOf([]int{1, 3, 3, -1, -1}, []int{2, 4, 4, -1, -1}, make([]int, 5), make([]float32, 5), make([]int, 5))}
			return m
		}, process.ModelMetadata{}, Limits{}, process.ErrModelInvalid, "tree 0 node 2 has child 3, which is reached twice"},
		{"feature out of range", func(m obj) obj { tree0(m)["split_indices"] = []int{2, 0, 0}; return m }, process.ModelMetadata{}, Limits{},
			process.ErrModelInvalid, "tree 0 node 0 splits on feature 2; the model has 2 features"},
		{"tree_info short", func(m obj) obj { gbModel(m)["tree_info"] = []int{}; return m }, process.ModelMetadata{}, Limits{},
			process.ErrModelInvalid, "tree_info has 0 entries for 1 trees"},
		{"tree_info out of range", func(m obj) obj { gbModel(m)["tree_info"] = []int{1}; return m }, process.ModelMetadata{}, Limits{},
			process.ErrModelInvalid, "output group 1"},
		{"weight_drop short", func(m obj) obj { at(m, "learner", "gradient_booster")["weight_drop"] = []float32{1, 2}; return m },
			process.ModelMetadata{}, Limits{}, process.ErrModelInvalid, "weight_drop has 2 weights for 1 trees"},
		{"base_score outside the logistic range", func(m obj) obj { at(m, "learner", "learner_model_param")["base_score"] = "1.5E0"; return m },
			process.ModelMetadata{}, Limits{}, process.ErrModelInvalid, "base_score 1.5"},
		{"base_score not a number", func(m obj) obj { at(m, "learner", "learner_model_param")["base_score"] = "half"; return m },
			process.ModelMetadata{}, Limits{}, process.ErrModelInvalid, `base_score is "half"`},
		{"base_score per class of a binary model", func(m obj) obj {
			at(m, "learner", "learner_model_param")["base_score"] = "[2E-1,8E-1]"
			return m
		}, process.ModelMetadata{}, Limits{}, process.ErrModelInvalid, "base_score holds 2 values for a model of 1 outputs"},
		{"categorical split on a leaf list", func(m obj) obj { tree0(m)["split_type"] = []int{2, 0, 0}; return m }, process.ModelMetadata{}, Limits{},
			process.ErrModelInvalid, "tree 0 node 0 has split type 2"},
		{"categories out of order", func(m obj) obj {
			tr := tree0(m)
			tr["split_type"] = []int{1, 0, 0}
			tr["categories_nodes"], tr["categories_segments"], tr["categories_sizes"], tr["categories"] = []int{0}, []int{1}, []int{1}, []int{4, 5}
			return m
		}, process.ModelMetadata{}, Limits{}, process.ErrModelInvalid, "tree 0 node 0: its categories (from 1, 1 of them) do not follow"},
		{"vector leaves", func(m obj) obj { tree0(m)["tree_param"].(obj)["size_leaf_vector"] = "3"; return m }, process.ModelMetadata{}, Limits{},
			process.ErrModelInvalid, "tree 0 has leaves of 3 values"},
		{"too few feature names", same, process.ModelMetadata{Features: []string{"a"}}, Limits{},
			process.ErrModelInvalid, "the metadata names 1 features; the model has 2"},
		{"feature names repeated", same, process.ModelMetadata{Features: []string{"a", "a"}}, Limits{},
			process.ErrModelInvalid, `feature name "a" appears twice`},
		{"feature name empty", same, process.ModelMetadata{Features: []string{"a", ""}}, Limits{},
			process.ErrModelInvalid, "feature 1 has an empty name"},
		{"file's feature names too few", func(m obj) obj { at(m, "learner")["feature_names"] = []string{"x"}; return m }, process.ModelMetadata{}, Limits{},
			process.ErrModelInvalid, "the file's feature_names names 1 features"},
		{"too many classes named", same, process.ModelMetadata{Classes: []string{"a", "b", "c"}}, Limits{},
			process.ErrModelInvalid, "the metadata names 3 classes; the model has 2"},
		{"classes repeated", same, process.ModelMetadata{Classes: []string{"a", "a"}}, Limits{},
			process.ErrModelInvalid, `class name "a" appears twice`},
		{"classes for a regressor", func(m obj) obj { at(m, "learner", "objective")["name"] = "reg:squarederror"; return m },
			process.ModelMetadata{Classes: []string{"a", "b"}}, Limits{}, process.ErrModelInvalid, "the model is a regressor"},
		{"bytes", same, process.ModelMetadata{}, Limits{MaxBytes: 100}, process.ErrModelLimit, "more than the limit of 100"},
		{"trees", func(obj) obj { return modelOf("reg:squarederror", 0, stump(0, 0, 1, 2, 0), stump(0, 0, 1, 2, 0)) },
			process.ModelMetadata{}, Limits{MaxTrees: 1}, process.ErrModelLimit, "2 or more trees, more than the limit of 1"},
		{"nodes", same, process.ModelMetadata{}, Limits{MaxNodes: 2}, process.ErrModelLimit, "tree 0 has 3 or more nodes, more than the limit of 2"},
		{"depth", func(obj) obj { return deep(5) }, process.ModelMetadata{}, Limits{MaxDepth: 4}, process.ErrModelLimit, "tree 0 is deeper than the limit of 4"},
		{"features", same, process.ModelMetadata{}, Limits{MaxFeatures: 1}, process.ErrModelLimit, "2 features, more than the limit of 1"},
		{"classes", func(obj) obj { return modelOf("multi:softprob", 3, stump(0, 0, 1, 2, 0)) }, process.ModelMetadata{}, Limits{MaxClasses: 2}, process.ErrModelLimit, "3 classes, more than the limit of 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, enc := range []string{"JSON", "UBJSON"} {
				m := tc.edit(base())
				b := encodeJSON(t, m)
				if enc == "UBJSON" {
					b = encodeUBJ(m)
				}
				lm, err := Format{Limits: tc.limits}.Load(b, tc.meta)
				if err == nil {
					t.Fatalf("%s: Load accepted the model: %+v", enc, lm.Schema)
				}
				if !errors.Is(err, tc.kind) {
					t.Errorf("%s: error %v does not match %v", enc, err, tc.kind)
				}
				var msg *problem.Error
				if !errors.As(err, &msg) || !strings.Contains(msg.Message, tc.says) {
					t.Errorf("%s: error %q does not say %q", enc, err, tc.says)
				}
			}
		})
	}
}

func TestLoadRefusesMalformed(t *testing.T) {
	valid := encodeJSON(t, modelOf("binary:logistic", 0, stump(0, 0, 1, 2, 0)))
	for _, tc := range []struct{ name, file, says string }{
		{"truncated", string(valid[:len(valid)-1]), "not valid JSON"},
		{"trailing garbage", string(valid) + "x", "bytes follow the document"},
		{"trailing comma", strings.Replace(string(valid), `"version":[1,7,4]`, `"version":[1,7,4,]`, 1), "trailing comma"},
		{"no learner", `{"learner_":{}, "learner":1}`, "learner is a number, not an object"},
		{"wrong type", strings.Replace(string(valid), `"left_children":[1,-1,-1]`, `"left_children":"1"`, 1), "left_children is a string, not an array"},
		{"fraction where an integer belongs", strings.Replace(string(valid), `"left_children":[1,-1,-1]`, `"left_children":[1.5,-1,-1]`, 1), "expected an integer"},
		{"repeated key", strings.Replace(string(valid), `"version":[1,7,4]`, `"version":[1,7,4],"version":[2,0,0]`, 1), `the file has the key "version" twice`},
		{"no trees", strings.Replace(string(valid), `"trees":`, `"trees_":`, 1), "holds no trees"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Format{}.Load([]byte(tc.file), process.ModelMetadata{})
			if !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Load: %v; want invalid_model saying %q", err, tc.says)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	m := modelOf("binary:logistic", 0, stump(0, 0, 1, 2, 0))
	for _, tc := range []struct {
		name string
		file []byte
		want bool
	}{
		{"JSON", encodeJSON(t, m), true},
		{"indented JSON", []byte("{\n  \"learner\": {}\n}"), true},
		{"UBJSON", encodeUBJ(m), true},
		{"UBJSON, short key lengths", []byte("{i\x07learner{}}"), true},
		{"other JSON", []byte(`{"name": "x", "values": [1, 2]}`), false},
		{"JSON array", []byte(`[{"learner": 1}]`), false},
		{"UBJSON, another key", []byte("{i\x04name"), false},
		{"pickle", []byte("\x80\x04\x95learner"), false},
		{"empty", nil, false},
	} {
		if got := (Format{}).Detect(tc.file); got != tc.want {
			t.Errorf("Detect(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestScoreTextColumn(t *testing.T) {
	lm := load(t, modelOf("reg:squarederror", 0, stump(0, 0, 1, 2, 0)), process.ModelMetadata{})
	in := tabletest.Must(1, process.TextColumn("f0", []string{"x"}, nil))
	if _, err := lm.Process.Score(context.Background(), process.Input{Table: in}); err == nil || !strings.Contains(err.Error(), `"f0" holds text`) {
		t.Errorf("Score with a text feature: %v", err)
	}
}

func TestScoreHonoursContext(t *testing.T) {
	lm := load(t, modelOf("binary:logistic", 0, stump(0, 0, 1, 2, 0)), process.ModelMetadata{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lm.Process.Score(ctx, process.Input{Table: rowsOf([2]float64{1, 1})}); !errors.Is(err, context.Canceled) {
		t.Errorf("Score with a cancelled context: %v", err)
	}
}

func TestScoreConcurrently(t *testing.T) {
	lm := load(t, modelOf("reg:squarederror", 0, stump(0, 0, 1, 2, 0), stump(1, 0, 10, 20, 1)), process.ModelMetadata{})
	rows := make([][2]float64, 300)
	want := make([]float64, len(rows))
	for i := range rows {
		rows[i] = [2]float64{float64(i%3) - 1, float64(i%5) - 2}
		want[i] = 0.5 + 10
		if rows[i][0] >= 0 {
			want[i]++
		}
		want[i]++
		if rows[i][1] >= 0 {
			want[i] += 10
		}
	}
	in := rowsOf(rows...)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if diff := cmp.Diff(want, score(t, lm, in)["prediction(label)"]); diff != "" {
				t.Errorf("concurrent predictions (-want +got):\n%s", diff)
			}
		})
	}
	wg.Wait()
}
