package lightgbm

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// small is a hand-written model of two features: a numerical split on a
// (NaN missing type, default left), then a categorical split on b whose
// bitset holds categories 1 and 33.
const small = `tree
version=v4
num_class=1
num_tree_per_iteration=1
label_index=0
max_feature_idx=1
objective=regression
feature_names=a b
feature_infos=[0:10] 1:33:2

Tree=0
num_leaves=3
num_cat=1
split_feature=0 1
split_gain=1 1
threshold=5 0
decision_type=10 1
left_child=1 -1
right_child=-3 -2
leaf_value=1 2 3
leaf_weight=1 1 1
leaf_count=1 1 1
internal_value=0 0
internal_weight=0 0
internal_count=2 2
cat_boundaries=0 2
cat_threshold=2 2
is_linear=0
shrinkage=1


end of trees

feature_importances:
a=1

parameters:
[boosting: gbdt]
end of parameters
`

// scoreText scores rows of (a, b) with the model text and returns the
// predictions.
func scoreText(t *testing.T, text string, a, b []float64) []float64 {
	t.Helper()
	lm, err := Format{}.Load([]byte(text), process.ModelMetadata{})
	if err != nil {
		t.Fatal(err)
	}
	in := tabletest.Must(len(a), process.NumberColumn("a", a, nil), process.NumberColumn("b", b, nil))
	out, err := lm.Process.Score(context.Background(), process.Input{Table: in})
	if err != nil {
		t.Fatal(err)
	}
	return out.Column(0).Numbers
}

func TestSplits(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		a, b float64
		want float64
	}{
		{"a above the threshold goes right", 6, 1, 3},
		{"a at the threshold goes left", 5, 1, 1},
		{"a missing takes the default branch, left", nan, 1, 1},
		{"category 1 is in the bitset: left", 0, 1, 1},
		{"category 33 is in the second word: left", 0, 33, 1},
		{"category 2 is not: right", 0, 2, 2},
		{"the integer part is the category", 0, 1.9, 1},
		{"-0.5 truncates to category 0: right", 0, -0.5, 2},
		{"a category past the bitset goes right", 0, 64, 2},
		{"a negative category goes right", 0, -1, 2},
		{"a missing category goes right", 0, nan, 2},
		{"a category beyond a C int goes right", 0, 1 << 32, 2},
		{"an infinite category goes right", 0, math.Inf(1), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scoreText(t, small, []float64{tt.a}, []float64{tt.b})[0]; got != tt.want {
				t.Errorf("a=%v b=%v: %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

// TestMissingTypes: a numerical split's missing type decides what NaN and
// zero are, as LightGBM's NumericalDecision does.
func TestMissingTypes(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name      string
		threshold string
		dt        string // decision_type of the split on a
		a         float64
		want      float64
	}{
		{"none: NaN reads as 0, compared", "-1", "0", nan, 3},
		{"none: NaN reads as 0, compared, left", "1", "0", nan, 1},
		{"zero: 0 takes the default branch, right", "1", "4", 0, 3},
		{"zero: NaN is 0, default right", "1", "4", nan, 3},
		{"zero: 1e-36 is 0, default left", "-1", "6", 1e-36, 1},
		{"zero: 1e-30 is compared", "-1", "6", 1e-30, 3},
		{"NaN: NaN takes the default branch, right", "-1", "8", nan, 3},
		{"NaN: 0 is compared", "1", "8", 0, 1},
		{"the zero band is zero for a comparison too", "0", "0", -1e-36, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(small, "threshold=5 0\ndecision_type=10 1", "threshold="+tt.threshold+" 0\ndecision_type="+tt.dt+" 1", 1)
			if got := scoreText(t, text, []float64{tt.a}, []float64{1})[0]; got != tt.want {
				t.Errorf("a=%v: %v, want %v", tt.a, got, tt.want)
			}
		})
	}
}

// TestMalformed: each broken file is refused with an error of the kind a
// client is told, naming what is wrong.
func TestMalformed(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		kind     error
		says     string
	}{
		{"not a model", "tree\nversion=v4", "forest\nversion=v4", process.ErrModelFormat, "not a LightGBM text model"},
		{"unknown version", "version=v4", "version=v9", process.ErrModelInvalid, `"v9"`},
		{"no num_class", "num_class=1\n", "", process.ErrModelInvalid, "num_class"},
		{"custom objective", "objective=regression", "objective=custom", process.ErrModelInvalid, "custom objective"},
		{"unknown objective", "objective=regression", "objective=magic", process.ErrModelInvalid, `"magic"`},
		{"binary without sigmoid", "objective=regression", "objective=binary", process.ErrModelInvalid, "sigmoid"},
		{"too many features", "max_feature_idx=1", "max_feature_idx=20000", process.ErrModelLimit, "features"},
		{"names and features differ", "feature_names=a b", "feature_names=a", process.ErrModelInvalid, "feature_names"},
		{"multiclass with one class", "objective=regression", "objective=multiclass num_class:3", process.ErrModelInvalid, "num_class"},
		{"no trees", "Tree=0\n", "", process.ErrModelInvalid, "no trees"},
		{"no end of trees", "end of trees", "", process.ErrModelInvalid, "end of trees"},
		{"a short array", "leaf_value=1 2 3", "leaf_value=1 2", process.ErrModelInvalid, "leaf_value"},
		{"a number that is not", "threshold=5 0", "threshold=five 0", process.ErrModelInvalid, "threshold"},
		{"feature out of range", "split_feature=0 1", "split_feature=0 2", process.ErrModelInvalid, "feature 2"},
		{"a leaf reached twice", "right_child=-3 -2", "right_child=-1 -2", process.ErrModelInvalid, "reached twice"},
		{"a cycle", "left_child=1 -1", "left_child=1 0", process.ErrModelInvalid, "reached twice"},
		{"a category set out of range", "threshold=5 0", "threshold=5 1", process.ErrModelInvalid, "category set"},
		{"bitset words missing", "cat_threshold=2 2", "cat_threshold=2", process.ErrModelInvalid, "cat_threshold"},
		{"unknown missing type", "decision_type=10 1", "decision_type=14 1", process.ErrModelInvalid, "decision_type"},
		{"too many leaves", "num_leaves=3", "num_leaves=300000", process.ErrModelLimit, "leaves"},
		{"tree sizes that do not match", "feature_infos=[0:10] 1:33:2\n", "feature_infos=[0:10] 1:33:2\ntree_sizes=10\n", process.ErrModelInvalid, "tree_sizes"},
		{"pandas lists for no categorical feature", "end of parameters\n", "end of parameters\n\npandas_categorical:[[\"x\"], [\"y\"]]\n", process.ErrModelInvalid, "pandas_categorical"},
		{"pandas line not JSON", "end of parameters\n", "end of parameters\n\npandas_categorical:[[\n", process.ErrModelInvalid, "pandas_categorical"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(small, tt.old, tt.new, 1)
			if text == small {
				t.Fatalf("%q is not in the model", tt.old)
			}
			_, err := Format{}.Load([]byte(text), process.ModelMetadata{})
			if !errors.Is(err, tt.kind) {
				t.Fatalf("Load: %v, want an error of kind %v", err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Load: %q does not say %q", err, tt.says)
			}
		})
	}
}

// TestPandasCategories: with pandas_categorical, the categorical feature
// is a text column of the category names, turned into their codes; an
// unknown name goes where a missing category goes.
func TestPandasCategories(t *testing.T) {
	text := small + "\npandas_categorical:[[\"zero\", \"one\", \"two\"]]\n"
	lm, err := Format{}.Load([]byte(text), process.ModelMetadata{})
	if err != nil {
		t.Fatal(err)
	}
	if k := lm.Schema.Inputs[1].Kind; k != process.Text {
		t.Fatalf("input b is %v, want text", k)
	}
	in := tabletest.Must(4, process.NumberColumn("a", []float64{0, 0, 0, 0}, nil),
		process.TextColumn("b", []string{"one", "two", "three", ""}, []bool{false, false, false, true}))
	out, err := lm.Process.Score(context.Background(), process.Input{Table: in})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out.Column(0).Numbers, []float64{1, 2, 2, 2}; !slicesEqual(got, want) {
		t.Errorf("predictions %v, want %v", got, want)
	}
	// Codes still score as numbers.
	if got := scoreTextModel(t, lm, []float64{0}, []float64{1})[0]; got != 1 {
		t.Errorf("code 1: %v, want 1", got)
	}
}

func scoreTextModel(t *testing.T, lm *process.LoadedModel, a, b []float64) []float64 {
	t.Helper()
	in := tabletest.Must(len(a), process.NumberColumn("a", a, nil), process.NumberColumn("b", b, nil))
	out, err := lm.Process.Score(context.Background(), process.Input{Table: in})
	if err != nil {
		t.Fatal(err)
	}
	return out.Column(0).Numbers
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSchema(t *testing.T) {
	lm, err := Format{}.Load([]byte(small), process.ModelMetadata{Label: "price"})
	if err != nil {
		t.Fatal(err)
	}
	s := lm.Schema
	if s.Task != process.Regression || s.Objective != "regression" || s.Trees != 1 || s.Outputs[0].Name != "prediction(price)" {
		t.Errorf("schema %+v", s)
	}
	if got, want := string(lm.Sample), `[{"a":5,"b":1}]`; got != want {
		t.Errorf("sample %s, want %s", got, want)
	}
}

// TestVersions: LightGBM 2.x and 3.x wrote the same text format under
// versions v2 and v3; a model reads alike under each.
func TestVersions(t *testing.T) {
	for _, v := range []string{"v2", "v3", "v4"} {
		text := strings.Replace(small, "version=v4", "version="+v, 1)
		if got := scoreText(t, text, []float64{6, 0}, []float64{1, 1}); !slicesEqual(got, []float64{3, 1}) {
			t.Errorf("version %s: %v, want [3 1]", v, got)
		}
	}
}

// TestPandasWithoutCategories: the Python package writes an empty list
// (or null) for a frame without pandas categorical columns; the model's
// categorical features then take codes.
func TestPandasWithoutCategories(t *testing.T) {
	for _, line := range []string{"pandas_categorical:[]", "pandas_categorical:null"} {
		lm, err := Format{}.Load([]byte(small+"\n"+line+"\n"), process.ModelMetadata{})
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if k := lm.Schema.Inputs[1].Kind; k != process.Number {
			t.Errorf("%s: input b is %v, want a number", line, k)
		}
	}
}

// TestObjectives: each objective's transform of a raw score, as LightGBM's
// ConvertOutput computes it, on a model whose one tree answers -1.5.
func TestObjectives(t *testing.T) {
	const raw = -1.5
	sigmoid := func(s float64) float64 { return 1 / (1 + exp(-s*raw)) }
	tests := []struct {
		objective string
		want      float64
	}{
		{"regression", raw},
		{"regression sqrt", -raw * raw},
		{"regression_l1 sqrt", -raw * raw},
		{"huber sqrt", raw}, // huber ignores sqrt
		{"fair", raw},
		{"quantile", raw},
		{"mape", raw},
		{"poisson", exp(raw)},
		{"gamma", exp(raw)},
		{"tweedie", exp(raw)},
		{"cross_entropy", sigmoid(1)},
		{"cross_entropy_lambda", math.Log1p(exp(raw))},
		{"lambdarank", raw},
		{"rank_xendcg", raw},
		{"binary sigmoid:2", sigmoid(2)},
	}
	for _, tt := range tests {
		t.Run(tt.objective, func(t *testing.T) {
			text := strings.Replace(small, "objective=regression", "objective="+tt.objective, 1)
			text = strings.Replace(text, "leaf_value=1 2 3", "leaf_value=-1.5 -1.5 -1.5", 1)
			lm, err := Format{}.Load([]byte(text), process.ModelMetadata{})
			if err != nil {
				t.Fatal(err)
			}
			col := "prediction(label)"
			if lm.Schema.Task == process.Classification {
				col = "confidence(1)"
			}
			out := scoreRow(t, lm)
			c, _ := out.Lookup(col)
			if got := c.Numbers[0]; got != tt.want {
				t.Errorf("%s: %v, want %v", col, got, tt.want)
			}
		})
	}
}

func scoreRow(t *testing.T, lm *process.LoadedModel) *process.Table {
	t.Helper()
	in := tabletest.Must(1, process.NumberColumn("a", []float64{0}, nil), process.NumberColumn("b", []float64{1}, nil))
	out, err := lm.Process.Score(context.Background(), process.Input{Table: in})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
