package onnx

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

func TestNormalizer(t *testing.T) {
	for _, c := range []struct {
		norm string
		want []float64
	}{
		{"MAX", []float64{-0.75, 1}},
		{"L1", []float64{-3.0 / 7, 4.0 / 7}},
		{"L2", []float64{-0.6, 0.8}},
	} {
		t.Run(c.norm, func(t *testing.T) {
			m := tModel{
				nodes: []tNode{
					ml("Normalizer", []string{"X"}, []string{"n"}, aString("norm", c.norm)),
					ml("ArrayFeatureExtractor", []string{"n", "i0"}, []string{"a"}),
					ml("ArrayFeatureExtractor", []string{"n", "i1"}, []string{"b"}),
					std("Concat", []string{"a", "b"}, []string{"ab"}, aInt("axis", -1)),
					std("Reshape", []string{"ab", "shape"}, []string{"r"}),
					std("Flatten", []string{"r"}, []string{"flat"}),
					ml("LinearRegressor", []string{"flat"}, []string{"y"}, aFloats("coefficients", 1, 0, 0, 1), aInt("targets", 2)),
					ml("ArrayFeatureExtractor", []string{"y", "i0"}, []string{"first"}),
					ml("ArrayFeatureExtractor", []string{"y", "i1"}, []string{"second"}),
				},
				inits: []tTensor{
					{name: "i0", dt: onnxInt64, dims: []int64{1}, ints: []int64{0}},
					{name: "i1", dt: onnxInt64, dims: []int64{1}, ints: []int64{1}},
					{name: "shape", dt: onnxInt64, dims: []int64{3}, ints: []int64{-1, 2, 1}},
				},
				inputs:  []tValue{floatIn("X", 2)},
				outputs: []tValue{{name: "first", elem: onnxFloat, dims: []int64{-1, 1}}, {name: "second", elem: onnxFloat, dims: []int64{-1, 1}}},
			}
			lm := load(t, m, process.ModelMetadata{})
			out := score(t, lm, process.NumberColumn("f0", []float64{-3}, nil), process.NumberColumn("f1", []float64{4}, nil))
			checkNumbers(t, out, "prediction(label)", c.want[0])
			// The second output is the same graph's second value.
			m.outputs = m.outputs[1:]
			out = score(t, load(t, m, process.ModelMetadata{}), process.NumberColumn("f0", []float64{-3}, nil), process.NumberColumn("f1", []float64{4}, nil))
			checkNumbers(t, out, "prediction(label)", c.want[1])
		})
	}
}

func TestSoftmaxOperatorMakesAClassifierThroughZipMap(t *testing.T) {
	for _, opset := range []int64{11, 13} {
		m := tModel{
			nodes: []tNode{
				std("MatMul", []string{"X", "W"}, []string{"z"}),
				std("Softmax", []string{"z"}, []string{"p"}),
				ml("ZipMap", []string{"p"}, []string{"probs"}, aInts("classlabels_int64s", 10, 20)),
			},
			inits:   []tTensor{{name: "W", dt: onnxFloat, dims: []int64{1, 2}, floats: []float32{1, -1}}},
			opsets:  map[string]int64{"": opset, domainML: 1},
			inputs:  []tValue{floatIn("X", 1)},
			outputs: []tValue{{name: "probs", elem: onnxFloat, dims: []int64{-1, 2}}},
		}
		lm := load(t, m, process.ModelMetadata{})
		out := score(t, lm, process.NumberColumn("f0", []float64{0.5, -1}, nil))
		checkTexts(t, out, "prediction(label)", "10", "20")
		checkNumbers(t, out, "confidence(10)", 1/(1+math.Exp(-1)), 1/(1+math.Exp(2)))
	}
}

func TestLabelEncoderOpset1AndOneHotZeros(t *testing.T) {
	m := tModel{
		nodes: []tNode{
			ml("LabelEncoder", []string{"s"}, []string{"code"}, aStrings("classes_strings", "a", "b", "c"), aInt("default_int64", 7)),
			ml("OneHotEncoder", []string{"code"}, []string{"oh"}, aInts("cats_int64s", 0, 1, 2), aInt("zeros", 0)),
			std("Reshape", []string{"oh", "shape"}, []string{"flat"}),
			ml("LinearRegressor", []string{"flat"}, []string{"y"}, aFloats("coefficients", 1, 2, 3)),
		},
		inits:   []tTensor{{name: "shape", dt: onnxInt64, dims: []int64{2}, ints: []int64{-1, 3}}},
		opsets:  map[string]int64{"": 9, domainML: 1},
		inputs:  []tValue{{name: "s", elem: onnxString, dims: []int64{-1}}},
		outputs: []tValue{{name: "y", elem: onnxFloat, dims: []int64{-1, 1}}},
	}
	out := score(t, load(t, m, process.ModelMetadata{}), process.TextColumn("f0", []string{"a", "c", "zzz", "b"}, nil))
	// "zzz" is coded 7, a category the encoder (zeros=0) refuses: that row
	// has no prediction, the others do.
	checkNumbers(t, out, "prediction(label)", 1, 3, math.NaN(), 2)
}

func TestIntegerInputs(t *testing.T) {
	m := tModel{
		nodes: []tNode{
			std("Cast", []string{"n"}, []string{"nf"}, aInt("to", onnxFloat)),
			std("Cast", []string{"flag"}, []string{"ff"}, aInt("to", onnxFloat)),
			std("Concat", []string{"nf", "ff"}, []string{"x"}, aInt("axis", 1)),
			ml("LinearRegressor", []string{"x"}, []string{"y"}, aFloats("coefficients", 1, 100)),
		},
		inputs:  []tValue{{name: "n", elem: onnxInt64, dims: []int64{-1, 1}}, {name: "flag", elem: onnxBool, dims: []int64{-1, 1}}},
		outputs: []tValue{{name: "y", elem: onnxFloat, dims: []int64{-1, 1}}},
	}
	lm := load(t, m, process.ModelMetadata{})
	out := score(t, lm,
		process.NumberColumn("n", []float64{3, 2.5, math.NaN(), 4, 5}, nil),
		process.NumberColumn("flag", []float64{1, 0, 0, 2, 0}, nil))
	// A fraction, a missing integer and a bool that is neither 0 nor 1
	// cannot be given to the graph: those rows answer nothing.
	checkNumbers(t, out, "prediction(label)", 103, math.NaN(), math.NaN(), math.NaN(), 5)
}

func TestMetadataChecks(t *testing.T) {
	for _, c := range []struct {
		name  string
		m     tModel
		meta  process.ModelMetadata
		words string
	}{
		{"too few features", forest(), process.ModelMetadata{Features: []string{"a"}}, "names 1 features; the model's input \"X\" has 2"},
		{"repeated feature", forest(), process.ModelMetadata{Features: []string{"a", "a"}}, "repeated"},
		{"other classes", forest(), process.ModelMetadata{Classes: []string{"x", "y"}}, "the model's are [\"a\" \"b\"]"},
		{"classes of a regressor", regressorModel("SUM", aFloats("nodes_values", 1, 0, 0, 5, 0, 0)), process.ModelMetadata{Classes: []string{"x"}}, "regressor"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Format{}.Load(c.m.encode(), c.meta)
			if !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("Load = %v, want an invalid model saying %q", err, c.words)
			}
		})
	}
}

func TestMoreRefusals(t *testing.T) {
	noOutput := forest()
	noOutput.outputs = noOutput.outputs[:1]
	treeCycle := regressorModel("SUM", aFloats("nodes_values", 1, 0, 0, 5, 0, 0))
	treeCycle.nodes[0].attrs[4] = aInts("nodes_truenodeids", 1, 0, 0, 0, 0, 0)
	badMode := regressorModel("SUM", aFloats("nodes_values", 1, 0, 0, 5, 0, 0))
	badMode.nodes[0].attrs[3] = aStrings("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_SOMETIMES", "LEAF", "LEAF")
	badFeature := regressorModel("SUM", aFloats("nodes_values", 1, 0, 0, 5, 0, 0))
	badFeature.nodes[0].attrs[2] = aInts("nodes_featureids", 0, 0, 0, 3, 0, 0)
	rowMixing := forest()
	rowMixing.nodes = append(rowMixing.nodes, std("Flatten", []string{"scores"}, []string{"flat"}, aInt("axis", 0)))
	badIR := forest()
	badIR.ir = 2
	for _, c := range []struct {
		name  string
		m     tModel
		words string
	}{
		{"no probabilities", noOutput, "neither a classifier's probabilities nor one number per row"},
		{"tree cycle", treeCycle, "twice"},
		{"unknown node mode", badMode, `node mode "BRANCH_SOMETIMES" is not supported`},
		{"feature out of range", badFeature, "reads feature 3, but the input has 1"},
		{"flatten across rows", rowMixing, "axis 0 is not supported"},
		{"old IR", badIR, "IR version 2 is not supported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Format{}.Load(c.m.encode(), process.ModelMetadata{})
			if !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("Load = %v, want an invalid model saying %q", err, c.words)
			}
		})
	}
}

// A model scores many rows (more than one chunk) from many goroutines at
// once as it scores them alone, and stops when its context is done.
func TestConcurrentAndLargeBatches(t *testing.T) {
	lm := load(t, forest(), process.ModelMetadata{})
	const n = 5000
	f0, f1 := make([]float64, n), make([]float64, n)
	for i := range n {
		f0[i], f1[i] = float64(i%10)/10, float64(i%7)/2
	}
	table := tabletest.Must(n, process.NumberColumn("f0", f0, nil), process.NumberColumn("f1", f1, nil))
	want, err := lm.Process.Score(context.Background(), process.Input{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := want.Lookup("confidence(a)")
	for i := range n {
		exp := 0.0
		if f0[i] <= 0.5 {
			exp += 0.4
		} else {
			exp += 0.1
		}
		if f1[i] < 2 {
			exp += 0.5
		} else {
			exp += 0.05
		}
		if !near(ca.Numbers[i], exp) {
			t.Fatalf("row %d: confidence(a) = %v, want %v", i, ca.Numbers[i], exp)
		}
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := lm.Process.Score(context.Background(), process.Input{Table: table})
			if err != nil {
				t.Error(err)
				return
			}
			c, _ := got.Lookup("confidence(a)")
			for i := range n {
				if c.Numbers[i] != ca.Numbers[i] {
					t.Errorf("row %d differs under concurrency", i)
					return
				}
			}
		}()
	}
	wg.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lm.Process.Score(ctx, process.Input{Table: table}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Score with a cancelled context = %v", err)
	}
}

func TestDetectClaimsEveryFixture(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.onnx")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !(Format{}).Detect(b) {
			t.Errorf("Detect does not claim %s", name)
		}
	}
}

func TestLabelEncoderFloatKeysSubDiv(t *testing.T) {
	m := tModel{
		nodes: []tNode{
			std("Sub", []string{"X", "c"}, []string{"d"}),
			std("Div", []string{"d", "c"}, []string{"q"}),
			ml("LabelEncoder", []string{"q"}, []string{"v"}, aFloats("keys_floats", 0.5, 1), aFloats("values_floats", 10, 20), tAttr{name: "default_float", typ: attrFloat, f: 7}),
		},
		inits:   []tTensor{{name: "c", dt: onnxFloat, dims: []int64{}, floats: []float32{2}}},
		opsets:  map[string]int64{"": 14, domainML: 2},
		inputs:  []tValue{floatIn("X", 1)},
		outputs: []tValue{{name: "v", elem: onnxFloat, dims: []int64{-1, 1}}},
	}
	// (3-2)/2 = 0.5 → 10; (4-2)/2 = 1 → 20; anything else the default.
	out := score(t, load(t, m, process.ModelMetadata{}), process.NumberColumn("f0", []float64{3, 4, 5}, nil))
	checkNumbers(t, out, "prediction(label)", 10, 20, 7)

	m.nodes = append(m.nodes, std("Reshape", []string{"v", "shape"}, []string{"r"}, aInt("allowzero", 1)))
	m.inits = append(m.inits, tTensor{name: "shape", dt: onnxInt64, dims: []int64{2}, ints: []int64{-1, 0}})
	if _, err := (Format{}).Load(m.encode(), process.ModelMetadata{}); !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), "allowzero") {
		t.Fatalf("Load of a reshape to an empty tensor = %v", err)
	}
}

// treeEnsembleV5 is a TreeEnsemble of ai.onnx.ml opset 5: two trees, one
// with a BRANCH_MEMBER node, one tracking missing values to its true side.
func treeEnsembleV5(dt int64) tModel {
	f := func(name string, v ...float64) tTensor {
		t := tTensor{name: name, dt: dt, dims: []int64{int64(len(v))}}
		for _, x := range v {
			if dt == onnxDouble {
				t.doubles = append(t.doubles, x)
			} else {
				t.floats = append(t.floats, float32(x))
			}
		}
		return t
	}
	return tModel{
		ir: 10,
		nodes: []tNode{ml("TreeEnsemble", []string{"X"}, []string{"y"},
			aInts("nodes_featureids", 0, 1, 1),
			aTensor("nodes_modes", tTensor{name: "modes", dt: onnxUint8, dims: []int64{3}, raw: []byte{0, 6, 1}}),
			aTensor("nodes_splits", f("splits", 0.5, 0, 2)),
			aInts("nodes_truenodeids", 0, 1, 3), aInts("nodes_trueleafs", 1, 1, 1),
			aInts("nodes_falsenodeids", 1, 2, 4), aInts("nodes_falseleafs", 0, 1, 1),
			aInts("nodes_missing_value_tracks_true", 0, 0, 1),
			aTensor("membership_values", f("members", 1, 3, math.NaN())),
			aInts("leaf_targetids", 0, 0, 0, 0, 0),
			aTensor("leaf_weights", f("weights", 1, 10, 20, 100, 200)),
			aInts("tree_roots", 0, 2), aInt("n_targets", 1), aInt("aggregate_function", 1))},
		opsets:  map[string]int64{"": 21, domainML: 5},
		inputs:  []tValue{{name: "X", elem: dt, dims: []int64{-1, 2}}},
		outputs: []tValue{{name: "y", elem: dt, dims: []int64{-1, 1}}},
	}
}

func TestTreeEnsembleOpset5(t *testing.T) {
	for _, dt := range []int64{onnxFloat, onnxDouble} {
		lm := load(t, treeEnsembleV5(dt), process.ModelMetadata{})
		if lm.Schema.Trees != 2 || lm.Schema.Task != process.Regression {
			t.Fatalf("schema = %+v", lm.Schema)
		}
		out := score(t, lm,
			process.NumberColumn("f0", []float64{0.2, 0.7, 0.7, 0.7}, nil),
			process.NumberColumn("f1", []float64{1, 3, 2, math.NaN()}, nil))
		// 1+100; a member of {1,3}: 10, and 3 ≥ 2: 200; not a member: 20,
		// and 200; a missing value is no member, and goes to the true side.
		checkNumbers(t, out, "prediction(label)", 101, 210, 220, 120)
	}
	m := treeEnsembleV5(onnxFloat)
	m.opsets = map[string]int64{"": 15, domainML: 3}
	if _, err := (Format{}).Load(m.encode(), process.ModelMetadata{}); !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), "opset 5") {
		t.Fatalf("Load of TreeEnsemble under ai.onnx.ml opset 3 = %v", err)
	}
}
