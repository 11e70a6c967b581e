package onnx

import (
	"context"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// coveredStump is a regressor of one tree over an [N,2] input: x0 ≤ 0.5
// to a leaf of -1, else to a leaf of 1, onto a base value of 0.25; of 4
// training rows 1 went left and 3 right (nodes_hitrates 4, 1, 3). extra
// replaces or adds attributes.
func coveredStump(extra ...tAttr) tModel {
	attrs := withAttrs([]tAttr{
		aInts("nodes_treeids", 0, 0, 0), aInts("nodes_nodeids", 0, 1, 2), aInts("nodes_featureids", 0, 0, 0),
		aStrings("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF"), aFloats("nodes_values", 0.5, 0, 0),
		aInts("nodes_truenodeids", 1, 0, 0), aInts("nodes_falsenodeids", 2, 0, 0), aFloats("nodes_hitrates", 4, 1, 3),
		aInts("target_treeids", 0, 0), aInts("target_nodeids", 1, 2), aInts("target_ids", 0, 0),
		aFloats("target_weights", -1, 1), aFloats("base_values", 0.25), aInt("n_targets", 1)}, extra...)
	return tModel{
		nodes:   []tNode{ml("TreeEnsembleRegressor", []string{"X"}, []string{"y"}, attrs...)},
		inputs:  []tValue{floatIn("X", 2)},
		outputs: []tValue{{name: "y", elem: onnxFloat, dims: []int64{-1, 1}}},
	}
}

// coveredClassifier is stumpClassifier's tree with its covers.
func coveredClassifier(extra ...tAttr) tModel {
	m := stumpClassifier()
	m.nodes[0].attrs = withAttrs(m.nodes[0].attrs, append([]tAttr{aFloats("nodes_hitrates", 4, 1, 3)}, extra...)...)
	return m
}

// withAttrs returns attrs with each of extra in place of the attribute of
// its name, or added; an extra of type 0 removes the attribute.
func withAttrs(attrs []tAttr, extra ...tAttr) []tAttr {
	out := slices.Clone(attrs)
	for _, a := range extra {
		i := slices.IndexFunc(out, func(b tAttr) bool { return b.name == a.name })
		switch {
		case a.typ == 0 && i >= 0:
			out = slices.Delete(out, i, i+1)
		case a.typ == 0:
		case i >= 0:
			out[i] = a
		default:
			out = append(out, a)
		}
	}
	return out
}

// TestExplainStump: a stump's explanation is its leaf's distance from the
// mean by cover, (1·-1 + 3·1)/4 = 0.5, given to the feature it splits
// on, and the base value plus that mean as the bias; a missing value goes
// where nodes_missing_value_tracks_true sends it, and the other feature
// has no part. A row the graph cannot score (an integer missing) has no
// margin and no contributions.
func TestExplainStump(t *testing.T) {
	x0 := []float64{0, 2, math.NaN()}
	ints := coveredStump()
	ints.inputs = []tValue{{name: "X", elem: onnxInt64, dims: []int64{-1, 2}}}
	for _, c := range []struct {
		name string
		m    tModel
		want [][]float64 // by row: x0's, x1's, the bias; nil for none
	}{
		{"missing to the false branch", coveredStump(), [][]float64{{-1.5, 0, 0.75}, {0.5, 0, 0.75}, {0.5, 0, 0.75}}},
		{"missing tracks true", coveredStump(aInts("nodes_missing_value_tracks_true", 1, 0, 0)),
			[][]float64{{-1.5, 0, 0.75}, {0.5, 0, 0.75}, {-1.5, 0, 0.75}}},
		{"averaged over two trees", coveredStump(
			aInts("nodes_treeids", 0, 0, 0, 1), aInts("nodes_nodeids", 0, 1, 2, 0), aInts("nodes_featureids", 0, 0, 0, 0),
			aStrings("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF", "LEAF"), aFloats("nodes_values", 0.5, 0, 0, 0),
			aInts("nodes_truenodeids", 1, 0, 0, 0), aInts("nodes_falsenodeids", 2, 0, 0, 0), aFloats("nodes_hitrates", 4, 1, 3, 4),
			aInts("target_treeids", 0, 0, 1), aInts("target_nodeids", 1, 2, 0), aInts("target_ids", 0, 0, 0),
			aFloats("target_weights", -1, 1, 3), aString("aggregate_function", "AVERAGE")),
			// (leaf + 3)/2 + 0.25: the stump's contributions halved, the
			// second tree's 3 in the bias.
			[][]float64{{-0.75, 0, 0.25 + (0.5+3)/2}, {0.25, 0, 0.25 + (0.5+3)/2}, {0.25, 0, 0.25 + (0.5+3)/2}}},
		{"an int64 input", ints, [][]float64{{-1.5, 0, 0.75}, {0.5, 0, 0.75}, nil}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lm := load(t, c.m, process.ModelMetadata{})
			ex, ok := lm.Process.(process.Explainer)
			if !ok {
				t.Fatalf("the model does not explain: %s", lm.Schema.Unexplained)
			}
			tab := tabletest.Must(3, process.NumberColumn("f0", x0, []bool{false, false, true}),
				process.NumberColumn("f1", []float64{7, 7, 7}, nil))
			e, err := ex.Explain(context.Background(), process.Input{Table: tab})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Check(3); err != nil {
				t.Error(err)
			}
			if !slices.Equal(e.Features, []string{"f0", "f1"}) || !slices.Equal(e.Groups, []string{""}) {
				t.Errorf("features %q, groups %q; want [f0 f1], [\"\"]", e.Features, e.Groups)
			}
			out := score(t, lm, process.NumberColumn("f0", x0, nil), process.NumberColumn("f1", []float64{7, 7, 7}, nil))
			for r, w := range c.want {
				got, m, p := e.Row(0, r), e.Margins[0][r], out.Column(0).Numbers[r]
				if w == nil {
					if !math.IsNaN(m) || !math.IsNaN(p) || slices.ContainsFunc(got, func(v float64) bool { return !math.IsNaN(v) }) {
						t.Errorf("row %d: %v, margin %v, prediction %v; want none", r, got, m, p)
					}
					continue
				}
				if !slices.Equal(got, w) {
					t.Errorf("row %d: %v; want %v", r, got, w)
				}
				if m != p {
					t.Errorf("row %d: margin %v, prediction %v", r, m, p)
				}
			}
		})
	}
}

// TestUnexplained: a model that cannot explain its predictions loads and
// scores, is no Explainer, and its schema says why in a sentence; a kind
// of model that never explains (a linear one) says nothing.
func TestUnexplained(t *testing.T) {
	const fix = "; writing each node's cover (XGBoost's cover, LightGBM's count) into nodes_hitrates makes it explainable"
	file := func(name string) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			b, err := os.ReadFile("testdata/" + name)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	built := func(m tModel) func(*testing.T) []byte { return func(*testing.T) []byte { return m.encode() } }
	scaled := coveredStump()
	scaled.nodes = append([]tNode{ml("Scaler", []string{"X"}, []string{"S"}, aFloats("offset", 1, 2), aFloats("scale", 2, 3))}, scaled.nodes...)
	scaled.nodes[1].in = []string{"S"}
	squashed := coveredStump()
	squashed.nodes[0].out = []string{"raw"}
	squashed.nodes = append(squashed.nodes, std("Sigmoid", []string{"raw"}, []string{"y"}))
	for _, c := range []struct {
		name  string
		model func(*testing.T) []byte
		want  string
	}{
		{"converter hitrates of 1.0", built(coveredStump(aFloats("nodes_hitrates", 1, 1, 1))),
			"its tree ensemble's nodes_hitrates are not covers: node 0 of tree 0 has 1, its children 1 and 1, " +
				"where a cover is the sum of its children's (converters write 1.0 for every node)" + fix},
		{"no hitrates", built(coveredStump(tAttr{name: "nodes_hitrates"})),
			"its tree ensemble has no nodes_hitrates, the covers (how much training data reached each node) TreeSHAP weighs by" + fix},
		{"a scikit-learn forest as export.py converts it", file("iris_forest.onnx"),
			"its tree ensemble has no nodes_hitrates, the covers (how much training data reached each node) TreeSHAP weighs by" + fix},
		{"hitrates for two nodes of three", built(coveredStump(aFloats("nodes_hitrates", 4, 1))),
			"its tree ensemble's nodes_hitrates has 2 entries for 3 nodes" + fix},
		{"a leaf's hitrate of 0", built(coveredStump(aFloats("nodes_hitrates", 3, 0, 3))),
			"its tree ensemble's nodes_hitrates are not covers: node 1 of tree 0 has 0, and a cover is a positive amount of training data" + fix},
		{"hitrates as floats and as a tensor", built(coveredStump(aTensor("nodes_hitrates_as_tensor",
			tTensor{dt: onnxDouble, dims: []int64{3}, doubles: []float64{4, 1, 3}}))),
			"its tree ensemble gives nodes_hitrates both as floats and as a tensor" + fix},
		{"a Scaler before the trees", built(scaled),
			"its tree ensemble reads what node 0 (Scaler) computes from the model's inputs, not the inputs themselves; contributions go to " +
				"inputs the trees read as they are, through Identity, Cast, Concat, Reshape, Flatten or ArrayFeatureExtractor only"},
		{"an imputing and encoding pipeline", file("diabetes_columns.onnx"),
			"its tree ensemble reads what node 1 (Imputer) computes from the model's inputs, not the inputs themselves; contributions go to " +
				"inputs the trees read as they are, through Identity, Cast, Concat, Reshape, Flatten or ArrayFeatureExtractor only"},
		{"a Sigmoid after the trees", built(squashed),
			"its answer is computed from its tree ensemble's scores by node 1 (Sigmoid), and only an ensemble's own scores can be explained"},
		{"trees aggregated by MAX", built(coveredStump(aString("aggregate_function", "MAX"))),
			"its trees are aggregated by MAX, and TreeSHAP attributes only their sum (SUM) or average (AVERAGE)"},
		{"a TreeEnsemble of opset 5", built(treeEnsembleV5(onnxDouble)),
			"it is a TreeEnsemble of ai.onnx.ml 5, whose nodes_hitrates give its branches' covers but not its leaves', which TreeSHAP weighs by too"},
		{"two classes of two base values", built(coveredClassifier(aFloats("base_values", 0.5, 0.5))),
			"it has a base value for each of its two classes, which ONNX Runtime does not add to the classes' scores " +
				"(it makes the second class's score from the first's), so no margin sums its trees; one base value, the first class's, would explain"},
		{"one score for two classes through PROBIT", built(coveredClassifier(aInts("class_ids", 0, 0), aString("post_transform", "PROBIT"))),
			"its one score for two classes goes through PROBIT, which ONNX Runtime answers as the first class's confidence alone"},
		{"two scores through SOFTMAX_ZERO", built(coveredClassifier(aInts("class_treeids", 0, 0, 0, 0), aInts("class_nodeids", 1, 2, 1, 2),
			aInts("class_ids", 0, 0, 1, 1), aFloats("class_weights", 0.75, 0.25, 0.25, 0.75), aString("post_transform", "SOFTMAX_ZERO"))),
			"its two class scores go through SOFTMAX_ZERO, which keeps a score of 0 at 0 and so answers no function of one margin"},
		{"a linear model", built(linearSoftmax()), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			lm, err := Format{}.Load(c.model(t), process.ModelMetadata{})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if _, ok := lm.Process.(process.Explainer); ok {
				t.Error("the model explains")
			}
			if lm.Schema.Unexplained != c.want {
				t.Errorf("unexplained:\n%q\nwant\n%q", lm.Schema.Unexplained, c.want)
			}
			var cols []process.Column
			for _, in := range lm.Schema.Inputs {
				if in.Kind == process.Text {
					cols = append(cols, process.TextColumn(in.Name, []string{"a", "b"}, nil))
				} else {
					cols = append(cols, process.NumberColumn(in.Name, []float64{0.25, 3}, nil))
				}
			}
			score(t, lm, cols...)
		})
	}
}
