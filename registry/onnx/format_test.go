package onnx

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

func load(t *testing.T, m tModel, meta process.ModelMetadata) *process.LoadedModel {
	t.Helper()
	lm, err := Format{}.Load(m.encode(), meta)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return lm
}

func score(t *testing.T, lm *process.LoadedModel, cols ...process.Column) *process.Table {
	t.Helper()
	out, err := lm.Process.Score(context.Background(), process.Input{Table: tabletest.Must(cols[0].Len(), cols...)})
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6 || (math.IsNaN(a) && math.IsNaN(b)) }

func checkNumbers(t *testing.T, out *process.Table, name string, want ...float64) {
	t.Helper()
	c, ok := out.Lookup(name)
	if !ok {
		t.Fatalf("no column %q", name)
	}
	for i, w := range want {
		if !near(c.Numbers[i], w) {
			t.Errorf("%s row %d = %v, want %v", name, i, c.Numbers[i], w)
		}
	}
}

func checkTexts(t *testing.T, out *process.Table, name string, want ...string) {
	t.Helper()
	c, ok := out.Lookup(name)
	if !ok {
		t.Fatalf("no column %q", name)
	}
	for i, w := range want {
		got, present := c.Text(i)
		if w == "" && present || w != "" && got != w {
			t.Errorf("%s row %d = %q (present %v), want %q", name, i, got, present, w)
		}
	}
}

// forest is a two-tree forest of two classes, as a random forest is
// written: class weights divided by the trees, a ZipMap after it.
func forest() tModel {
	return tModel{
		producer: "test",
		nodes: []tNode{
			ml("TreeEnsembleClassifier", []string{"X"}, []string{"label", "scores"},
				aInts("nodes_treeids", 0, 0, 0, 1, 1, 1),
				aInts("nodes_nodeids", 0, 1, 2, 0, 1, 2),
				aInts("nodes_featureids", 0, 0, 0, 1, 0, 0),
				aStrings("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"),
				aFloats("nodes_values", 0.5, 0, 0, 2, 0, 0),
				aInts("nodes_truenodeids", 1, 0, 0, 1, 0, 0),
				aInts("nodes_falsenodeids", 2, 0, 0, 2, 0, 0),
				aInts("nodes_missing_value_tracks_true", 0, 0, 0, 1, 0, 0),
				aInts("class_treeids", 0, 0, 0, 0, 1, 1, 1, 1),
				aInts("class_nodeids", 1, 1, 2, 2, 1, 1, 2, 2),
				aInts("class_ids", 0, 1, 0, 1, 0, 1, 0, 1),
				aFloats("class_weights", 0.4, 0.1, 0.1, 0.4, 0.5, 0, 0.05, 0.45),
				aStrings("classlabels_strings", "a", "b"),
				aString("post_transform", "NONE")),
			ml("ZipMap", []string{"scores"}, []string{"probabilities"}, aStrings("classlabels_strings", "a", "b")),
		},
		inputs:  []tValue{floatIn("X", 2)},
		outputs: []tValue{{name: "label", elem: onnxString, dims: []int64{-1}}, {name: "probabilities", elem: onnxFloat, dims: []int64{-1, 2}}},
	}
}

func TestTreeEnsembleClassifier(t *testing.T) {
	lm := load(t, forest(), process.ModelMetadata{Label: "kind"})
	s := lm.Schema
	if s.Task != process.Classification || s.Trees != 2 || strings.Join(s.Classes, ",") != "a,b" || s.Producer != "test" {
		t.Fatalf("schema = %+v", s)
	}
	if len(s.Inputs) != 2 || s.Inputs[0].Name != "f0" || s.Inputs[1].Name != "f1" {
		t.Fatalf("inputs = %+v", s.Inputs)
	}
	out := score(t, lm,
		process.NumberColumn("f0", []float64{0.2, 0.7, 0.7}, nil),
		process.NumberColumn("f1", []float64{1, 3, math.NaN()}, nil))
	checkTexts(t, out, "prediction(kind)", "a", "b", "a")
	checkNumbers(t, out, "confidence(a)", 0.9, 0.15, 0.6)
	checkNumbers(t, out, "confidence(b)", 0.1, 0.85, 0.4)
}

func TestTreeEnsembleClassifierBinaryLogistic(t *testing.T) {
	// One score per row for two classes, as gradient boosting is written:
	// ONNX Runtime answers the logistic of minus and plus the score.
	m := tModel{
		nodes: []tNode{ml("TreeEnsembleClassifier", []string{"X"}, []string{"label", "p"},
			aInts("nodes_treeids", 0, 0, 0), aInts("nodes_nodeids", 0, 1, 2), aInts("nodes_featureids", 0, 0, 0),
			aStrings("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF"), aFloats("nodes_values", 0, 0, 0),
			aInts("nodes_truenodeids", 1, 0, 0), aInts("nodes_falsenodeids", 2, 0, 0),
			aInts("class_treeids", 0, 0), aInts("class_nodeids", 1, 2), aInts("class_ids", 0, 0),
			aFloats("class_weights", -1, 2), aFloats("base_values", 0.1),
			aInts("classlabels_int64s", 0, 1), aString("post_transform", "LOGISTIC"))},
		inputs:  []tValue{floatIn("X", 1)},
		outputs: []tValue{{name: "label", elem: onnxInt64, dims: []int64{-1}}, {name: "p", elem: onnxFloat, dims: []int64{-1, 2}}},
	}
	lm := load(t, m, process.ModelMetadata{})
	out := score(t, lm, process.NumberColumn("f0", []float64{-1, 1}, nil))
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	checkTexts(t, out, "prediction(label)", "0", "1")
	checkNumbers(t, out, "confidence(1)", sig(-0.9), sig(2.1))
	checkNumbers(t, out, "confidence(0)", sig(0.9), sig(-2.1))
}

func regressorModel(agg string, extra ...tAttr) tModel {
	attrs := append([]tAttr{
		aInts("nodes_treeids", 0, 0, 0, 1, 1, 1), aInts("nodes_nodeids", 0, 1, 2, 0, 1, 2),
		aInts("nodes_featureids", 0, 0, 0, 0, 0, 0),
		aStrings("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_GT", "LEAF", "LEAF"),
		aInts("nodes_truenodeids", 1, 0, 0, 1, 0, 0), aInts("nodes_falsenodeids", 2, 0, 0, 2, 0, 0),
		aInts("target_treeids", 0, 0, 1, 1), aInts("target_nodeids", 1, 2, 1, 2), aInts("target_ids", 0, 0, 0, 0),
		aFloats("target_weights", 1, 2, 10, 20), aFloats("base_values", 10), aInt("n_targets", 1),
		aString("aggregate_function", agg)}, extra...)
	return tModel{
		nodes:   []tNode{ml("TreeEnsembleRegressor", []string{"X"}, []string{"y"}, attrs...)},
		inputs:  []tValue{floatIn("X", 1)},
		outputs: []tValue{{name: "y", elem: onnxFloat, dims: []int64{-1, 1}}},
	}
}

func TestTreeEnsembleRegressor(t *testing.T) {
	for _, c := range []struct {
		agg  string
		want []float64
	}{
		{"SUM", []float64{31, 32, 22}},
		{"AVERAGE", []float64{20.5, 21, 16}},
		{"MIN", []float64{11, 12, 12}},
		{"MAX", []float64{30, 30, 20}},
	} {
		t.Run(c.agg, func(t *testing.T) {
			lm := load(t, regressorModel(c.agg, aFloats("nodes_values", 1, 0, 0, 5, 0, 0)), process.ModelMetadata{Label: "price"})
			if lm.Schema.Task != process.Regression || lm.Schema.Outputs[0].Name != "prediction(price)" {
				t.Fatalf("schema = %+v", lm.Schema)
			}
			out := score(t, lm, process.NumberColumn("f0", []float64{0, 3, 6}, nil))
			checkNumbers(t, out, "prediction(price)", c.want...)
		})
	}
}

// A double input with double thresholds compares as scikit-learn does; a
// float input rounds the value to float32 first, as ONNX Runtime does.
func TestTreeThresholdPrecision(t *testing.T) {
	x := 0.100000001 // above 0.1, below float32(0.1)
	m := regressorModel("SUM", aTensor("nodes_values_as_tensor", tTensor{dt: onnxDouble, dims: []int64{6}, doubles: []float64{0.1, 0, 0, 5, 0, 0}}))
	for i := range m.nodes[0].attrs {
		a := &m.nodes[0].attrs[i]
		if a.name == "base_values" {
			*a = aTensor("base_values_as_tensor", tTensor{dt: onnxDouble, dims: []int64{1}, doubles: []float64{10}})
		}
		if a.name == "target_weights" {
			*a = aTensor("target_weights_as_tensor", tTensor{dt: onnxDouble, dims: []int64{4}, doubles: []float64{1, 2, 10, 20}})
		}
	}
	m.inputs = []tValue{{name: "X", elem: onnxDouble, dims: []int64{-1, 1}}}
	out := score(t, load(t, m, process.ModelMetadata{}), process.NumberColumn("f0", []float64{x}, nil))
	checkNumbers(t, out, "prediction(label)", 32)

	f := regressorModel("SUM", aFloats("nodes_values", 0.1, 0, 0, 5, 0, 0))
	out = score(t, load(t, f, process.ModelMetadata{}), process.NumberColumn("f0", []float64{x}, nil))
	checkNumbers(t, out, "prediction(label)", 31)

	// A float input cannot read double thresholds: ONNX Runtime refuses it.
	m.inputs = []tValue{floatIn("X", 1)}
	if _, err := (Format{}).Load(m.encode(), process.ModelMetadata{}); !errors.Is(err, process.ErrModelInvalid) {
		t.Fatalf("Load of double thresholds for a float input = %v", err)
	}
}

// linearSoftmax is a three-class linear classifier.
func linearSoftmax() tModel {
	return tModel{
		nodes: []tNode{ml("LinearClassifier", []string{"X"}, []string{"label", "p"},
			aFloats("coefficients", 1, 0, 0, 1, -1, -1), aFloats("intercepts", 0, 0, 0),
			aInts("classlabels_ints", 3, 5, 7), aString("post_transform", "SOFTMAX"))},
		inputs:  []tValue{floatIn("X", 2)},
		outputs: []tValue{{name: "p", elem: onnxFloat, dims: []int64{-1, 3}}},
	}
}

func TestLinearClassifierSoftmax(t *testing.T) {
	m := linearSoftmax()
	lm := load(t, m, process.ModelMetadata{Features: []string{"x", "y"}})
	out := score(t, lm, process.NumberColumn("x", []float64{1}, nil), process.NumberColumn("y", []float64{2}, nil))
	e1, e2, e3 := math.Exp(-1), 1.0, math.Exp(-5)
	sum := e1 + e2 + e3
	checkTexts(t, out, "prediction(label)", "5")
	checkNumbers(t, out, "confidence(3)", e1/sum)
	checkNumbers(t, out, "confidence(5)", e2/sum)
	checkNumbers(t, out, "confidence(7)", e3/sum)
}

// pipeline reads a string and a number, one input each: the string is
// one-hot encoded, the number imputed and scaled, and a linear regression
// reads them concatenated.
func pipeline() tModel {
	return tModel{
		nodes: []tNode{
			ml("OneHotEncoder", []string{"color"}, []string{"oh"}, aStrings("cats_strings", "red", "blue"), aInt("zeros", 1)),
			std("Flatten", []string{"oh"}, []string{"ohf"}, aInt("axis", 1)),
			ml("Imputer", []string{"size"}, []string{"si"}, aFloats("imputed_value_floats", 5), tAttr{name: "replaced_value_float", typ: attrFloat, f: float32(math.NaN())}),
			ml("Scaler", []string{"si"}, []string{"ss"}, aFloats("offset", 1), aFloats("scale", 2)),
			std("Concat", []string{"ohf", "ss"}, []string{"all"}, aInt("axis", 1)),
			ml("LinearRegressor", []string{"all"}, []string{"y"}, aFloats("coefficients", 10, 20, 1), aFloats("intercepts", 0.5)),
		},
		inputs:  []tValue{{name: "color", elem: onnxString, dims: []int64{-1, 1}}, floatIn("size", 1)},
		outputs: []tValue{{name: "y", elem: onnxFloat, dims: []int64{-1, 1}}},
	}
}

func TestPipelineOfSeveralInputs(t *testing.T) {
	lm := load(t, pipeline(), process.ModelMetadata{})
	in := lm.Schema.Inputs
	if len(in) != 2 || in[0] != (process.ColumnSpec{Name: "color", Kind: process.Text}) || in[1] != (process.ColumnSpec{Name: "size", Kind: process.Number}) {
		t.Fatalf("inputs = %+v", in)
	}
	out := score(t, lm,
		process.TextColumn("color", []string{"red", "green", "", "blue"}, []bool{false, false, true, false}),
		process.NumberColumn("size", []float64{3, 1, 2, math.NaN()}, nil))
	// red: 10 + (3-1)*2 + 0.5; green (unknown): 0 + 0 + 0.5; a missing
	// string: no prediction; blue with a missing size imputed to 5.
	checkNumbers(t, out, "prediction(label)", 14.5, 0.5, math.NaN(), 28.5)

	if _, err := (Format{}).Load(pipeline().encode(), process.ModelMetadata{Features: []string{"colour", "size"}}); !errors.Is(err, process.ErrModelInvalid) {
		t.Fatalf("Load renaming the inputs = %v", err)
	}
}

// labelArith encodes a string, casts it and computes sigmoid((2c-1)·0.5).
func labelArith() tModel {
	return tModel{
		nodes: []tNode{
			ml("LabelEncoder", []string{"s"}, []string{"code"}, aStrings("keys_strings", "lo", "hi"), aInts("values_int64s", 1, 3)),
			std("Cast", []string{"code"}, []string{"codef"}, aInt("to", onnxFloat)),
			std("Mul", []string{"codef", "w"}, []string{"m"}),
			std("Add", []string{"m", "b"}, []string{"a"}),
			std("MatMul", []string{"a", "k"}, []string{"mm"}),
			std("Sigmoid", []string{"mm"}, []string{"y"}),
		},
		inits: []tTensor{
			{name: "w", dt: onnxFloat, dims: []int64{1}, floats: []float32{2}},
			{name: "b", dt: onnxFloat, dims: []int64{1, 1}, floats: []float32{-1}},
			{name: "k", dt: onnxFloat, dims: []int64{1, 1}, floats: []float32{0.5}},
		},
		opsets:  map[string]int64{"": 13, domainML: 2},
		inputs:  []tValue{{name: "s", elem: onnxString, dims: []int64{-1, 1}}},
		outputs: []tValue{{name: "y", elem: onnxFloat, dims: []int64{-1, 1}}},
	}
}

func TestLabelEncoderAndArithmetic(t *testing.T) {
	m := labelArith()
	out := score(t, load(t, m, process.ModelMetadata{}), process.TextColumn("f0", []string{"lo", "hi", "zz"}, nil))
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	// (code*2-1)*0.5, the default code being -1.
	checkNumbers(t, out, "prediction(label)", sig(0.5), sig(2.5), sig(-1.5))
}

func TestRefusals(t *testing.T) {
	f := forest()
	withNode := func(n tNode) tModel { m := forest(); m.nodes = append(m.nodes, n); return m }
	unknownOp := withNode(std("TopK", []string{"scores"}, []string{"top"}))
	badOpset := forest()
	badOpset.opsets = map[string]int64{"": 15, domainML: 9}
	badType := forest()
	badType.inputs = []tValue{{name: "X", elem: 10, dims: []int64{-1, 2}}}
	badShape := forest()
	badShape.inputs = []tValue{{name: "X", elem: onnxFloat, dims: []int64{-1, -1}}}
	undefined := forest()
	undefined.nodes[1].in = []string{"nothing"}
	cycle := forest()
	cycle.nodes[0].in = []string{"probabilities"}
	cycle.inputs = []tValue{floatIn("Y", 2)}
	badAttr := withNode(std("Identity", []string{"scores"}, []string{"copy"}, aInt("colour", 1)))
	external := regressorModel("SUM", aFloats("nodes_values", 1, 0, 0, 5, 0, 0))
	external.nodes = append(external.nodes, std("Add", []string{"y", "c"}, []string{"z"}))
	external.inits = []tTensor{{name: "c", dt: onnxFloat, dims: []int64{1}, external: true}}
	enc := f.encode()
	for _, c := range []struct {
		name  string
		file  []byte
		lim   Limits
		kind  error
		words string
	}{
		{"unknown operator", unknownOp.encode(), Limits{}, process.ErrModelInvalid, `operator "TopK" (domain "") is not supported`},
		{"bad opset", badOpset.encode(), Limits{}, process.ErrModelInvalid, `opset 9 of domain "ai.onnx.ml" is not supported`},
		{"bad type", badType.encode(), Limits{}, process.ErrModelInvalid, "float16, which is not supported"},
		{"bad shape", badShape.encode(), Limits{}, process.ErrModelInvalid, "known number of features"},
		{"undefined input", undefined.encode(), Limits{}, process.ErrModelInvalid, `reads "nothing", which no node`},
		{"cycle", cycle.encode(), Limits{}, process.ErrModelInvalid, "cycle"},
		{"bad attribute", badAttr.encode(), Limits{}, process.ErrModelInvalid, `attribute "colour" is not supported`},
		{"external data", external.encode(), Limits{}, process.ErrModelInvalid, "external file"},
		{"truncated", enc[:len(enc)-7], Limits{}, process.ErrModelInvalid, "malformed protobuf"},
		{"garbage", []byte{0x08, 0x08, 0x3a, 0xff, 0xff, 0x01}, Limits{}, process.ErrModelInvalid, "malformed protobuf"},
		{"too large", enc, Limits{MaxBytes: 100}, process.ErrModelLimit, "more than the limit of 100"},
		{"too many tree nodes", enc, Limits{MaxTreeNodes: 5}, process.ErrModelLimit, "tree nodes"},
		{"too many values", enc, Limits{MaxElements: 20}, process.ErrModelLimit, "more than 20 values"},
		{"too many classes", enc, Limits{MaxClasses: 1}, process.ErrModelLimit, "classes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Format{Limits: c.lim}.Load(c.file, process.ModelMetadata{})
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("Load = %v; want %v saying %q", err, c.kind, c.words)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	if !(Format{}).Detect(forest().encode()) {
		t.Fatal("Detect does not claim an ONNX model")
	}
	files, _ := filepath.Glob("../xgboost/testdata/*")
	more, _ := filepath.Glob("../pmml/testdata/*")
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no XGBoost or PMML files to check")
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			continue // a directory
		}
		if (Format{}).Detect(b) {
			t.Errorf("Detect claims %s", name)
		}
	}
	for _, b := range [][]byte{nil, {0x08}, {0x08, 0x07}, []byte(`{"learner":{}}`), []byte("<PMML/>")} {
		if (Format{}).Detect(b) {
			t.Errorf("Detect claims %q", b)
		}
	}
}

// stumpClassifier is one stump of two classes whose leaves give weights
// 0.25 (x ≤ 0) and 0.75 (x > 0) to class 1 alone.
func stumpClassifier(extra ...tAttr) tModel {
	attrs := append([]tAttr{
		aInts("nodes_treeids", 0, 0, 0), aInts("nodes_nodeids", 0, 1, 2), aInts("nodes_featureids", 0, 0, 0),
		aStrings("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF"), aFloats("nodes_values", 0, 0, 0),
		aInts("nodes_truenodeids", 1, 0, 0), aInts("nodes_falsenodeids", 2, 0, 0),
		aInts("class_treeids", 0, 0), aInts("class_nodeids", 1, 2), aInts("class_ids", 1, 1),
		aFloats("class_weights", 0.25, 0.75), aStrings("classlabels_strings", "no", "yes")}, extra...)
	return tModel{
		nodes:   []tNode{ml("TreeEnsembleClassifier", []string{"X"}, []string{"label", "p"}, attrs...)},
		inputs:  []tValue{floatIn("X", 1)},
		outputs: []tValue{{name: "p", elem: onnxFloat, dims: []int64{-1, 2}}},
	}
}

// Two classes with weights for one of them follow ONNX Runtime's special
// cases (checked against ONNX Runtime 1.24): a class no weight reaches
// scores 0 whatever base value was added to it, and with two base values
// the second is added to the first class's score.
func TestTwoClassSpecialCases(t *testing.T) {
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	for _, c := range []struct {
		name   string
		m      tModel
		no     []float64
		yes    []float64
		labels []string
	}{
		{"no base value", stumpClassifier(), []float64{0, 0}, []float64{0.25, 0.75}, []string{"yes", "yes"}},
		{"one base value", stumpClassifier(aFloats("base_values", 0.05)), []float64{0, 0}, []float64{0.25, 0.75}, []string{"yes", "yes"}},
		{"two base values", stumpClassifier(aFloats("base_values", 0.05, 0.3), aString("post_transform", "LOGISTIC")),
			[]float64{0.5, 0.5}, []float64{sig(0.3), sig(0.3)}, []string{"yes", "yes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := score(t, load(t, c.m, process.ModelMetadata{}), process.NumberColumn("f0", []float64{-1, 1}, nil))
			checkNumbers(t, out, "confidence(no)", c.no...)
			checkNumbers(t, out, "confidence(yes)", c.yes...)
			checkTexts(t, out, "prediction(label)", c.labels...)
		})
	}
}

// TestModelLocalFunctionsAreRefused: a ModelProto whose functions redefine
// an operator its nodes call (here the ai.onnx.ml Scaler) is refused as the
// package documents, naming the function, rather than loaded with the
// built-in operator silently standing in for the model's own.
func TestModelLocalFunctionsAreRefused(t *testing.T) {
	fn := protowire.AppendTag(nil, 1, protowire.BytesType)
	fn = protowire.AppendString(fn, "Scaler")
	fn = protowire.AppendTag(fn, 10, protowire.BytesType)
	fn = protowire.AppendString(fn, "ai.onnx.ml")
	plain := forest().encode()
	if _, err := (Format{}).Load(plain, process.ModelMetadata{}); err != nil {
		t.Fatalf("the model without functions: %v", err)
	}
	withFn := protowire.AppendTag(plain, 25, protowire.BytesType) // ModelProto.functions
	withFn = protowire.AppendBytes(withFn, fn)
	_, err := Format{}.Load(withFn, process.ModelMetadata{})
	if !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), `"Scaler" of domain "ai.onnx.ml"`) {
		t.Errorf("a model-local Scaler: %v, want ErrModelInvalid naming it", err)
	}
}

// binaryLogistic is TestTreeEnsembleClassifierBinaryLogistic's model: two
// classes labelled by the integers 0 and 1.
func binaryLogistic(labels ...int64) tModel {
	return tModel{
		nodes: []tNode{ml("TreeEnsembleClassifier", []string{"X"}, []string{"label", "p"},
			aInts("nodes_treeids", 0, 0, 0), aInts("nodes_nodeids", 0, 1, 2), aInts("nodes_featureids", 0, 0, 0),
			aStrings("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF"), aFloats("nodes_values", 0, 0, 0),
			aInts("nodes_truenodeids", 1, 0, 0), aInts("nodes_falsenodeids", 2, 0, 0),
			aInts("class_treeids", 0, 0), aInts("class_nodeids", 1, 2), aInts("class_ids", 0, 0),
			aFloats("class_weights", -1, 2), aFloats("base_values", 0.1),
			aInts("classlabels_int64s", labels...), aString("post_transform", "LOGISTIC"))},
		inputs:  []tValue{floatIn("X", 1)},
		outputs: []tValue{{name: "label", elem: onnxInt64, dims: []int64{-1}}, {name: "p", elem: onnxFloat, dims: []int64{-1, 2}}},
	}
}

// TestIntegerLabelsNamed: metadata names a classifier's integer labels
// 0..k-1 in order, as it names an XGBoost classifier's classes; other
// labels it can only repeat.
func TestIntegerLabelsNamed(t *testing.T) {
	lm := load(t, binaryLogistic(0, 1), process.ModelMetadata{Label: "diagnosis", Classes: []string{"benign", "malignant"}})
	if want := []string{"benign", "malignant"}; !slices.Equal(lm.Schema.Classes, want) {
		t.Errorf("schema classes %q, want %q", lm.Schema.Classes, want)
	}
	out := score(t, lm, process.NumberColumn("f0", []float64{-1, 1}, nil))
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	checkTexts(t, out, "prediction(diagnosis)", "benign", "malignant")
	checkNumbers(t, out, "confidence(malignant)", sig(-0.9), sig(2.1))
	checkNumbers(t, out, "confidence(benign)", sig(0.9), sig(-2.1))

	// Repeating the model's own labels is naming them too.
	if lm := load(t, linearSoftmax(), process.ModelMetadata{Classes: []string{"3", "5", "7"}}); !slices.Equal(lm.Schema.Classes, []string{"3", "5", "7"}) {
		t.Errorf("schema classes %q, want the model's", lm.Schema.Classes)
	}

	for _, c := range []struct {
		name  string
		m     tModel
		meta  []string
		words string
	}{
		{"labels other than 0..k-1", linearSoftmax(), []string{"a", "b", "c"}, `integers other than 0..2 in order`},
		{"labels out of order", binaryLogistic(1, 0), []string{"a", "b"}, `integers other than 0..1 in order`},
		{"text labels", forest(), []string{"x", "y"}, `an ONNX file names its own classes`},
		{"too many names", binaryLogistic(0, 1), []string{"a", "b", "c"}, `names 3 classes, but the model's are 2`},
		{"too few names", binaryLogistic(0, 1), []string{"a"}, `names 1 classes, but the model's are 2`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Format{}.Load(c.m.encode(), process.ModelMetadata{Classes: c.meta})
			if !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("Load = %v, want an invalid model saying %q", err, c.words)
			}
		})
	}
}
