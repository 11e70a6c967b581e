package onnx_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/internal/testenv"
	"github.com/scorehub/scorehub/registry/onnx"
	"github.com/scorehub/scorehub/registry/process"
)

// python is the interpreter with the scikit-learn that trained the
// fixtures, the pandas export.py prepares their data with and the onnx
// package it writes the graphs with.
var python = modeltest.Python{
	Path:     "/usr/bin/python3",
	Imports:  []string{"pandas", "sklearn", "onnx"},
	Packages: "python3-sklearn python3-pandas python3-onnx",
	Module:   "sklearn",
	Library:  "scikit-learn",
	Version:  "1.2",
}

// runner is ONNX Runtime's runner script, in the npm project that installs
// ONNX Runtime beside it.
var runner = filepath.Join("testdata", "ort", "run.js")

// requireORT ends t unless node and ONNX Runtime's npm package are
// installed, as testenv.SkipOrFail rules.
func requireORT(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		testenv.SkipOrFail(t, "node is missing: install nodejs to test against ONNX Runtime")
	}
	if _, err := os.Stat(filepath.Join("testdata", "ort", "node_modules", "onnxruntime-node", "package.json")); err != nil {
		testenv.SkipOrFail(t, "ONNX Runtime is not installed: run ONNXRUNTIME_NODE_INSTALL=skip npm ci --prefix registry/onnx/testdata/ort --ignore-scripts")
	}
}

// runORT runs the runner with args and returns what it prints, failing t
// with its error output unless it succeeds.
func runORT(t testing.TB, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("node", append([]string{runner}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node run.js %q: %v\n%s", args, err, stderr.Bytes())
	}
	return out
}

// TestRegenerate runs testdata/export.py against the installed scikit-learn,
// onnx and ONNX Runtime and checks that it writes the committed fixtures
// again: the same graphs (operators, attributes, tree shapes, feature
// indices, labels) and the same answers, their numbers within
// modeltest.Tolerance. A file is compared by what it means, not byte for
// byte: numpy rounds some sums of a tree's leaf weights, and a solver's
// coefficients, otherwise on another CPU or BLAS build. The reader is then
// checked against the freshly computed answers too.
func TestRegenerate(t *testing.T) {
	python.Require(t)
	requireORT(t)
	out := t.TempDir()
	python.Run(t, filepath.Join("testdata", "export.py"), "--out", out)

	committed := modeltest.SameFixtureNames(t, "export.py", "testdata", out)
	for _, name := range committed {
		t.Run(name, func(t *testing.T) {
			modeltest.SameJSON(t, "export.py", filepath.Join("testdata", name+".rows.json"), filepath.Join(out, name+".rows.json"))
			sameModel(t, filepath.Join("testdata", name+".onnx"), filepath.Join(out, name+".onnx"))
			checkFixture(t, out, name, readFixture(t, out, name))
		})
	}
}

// sameModel fails t unless the ONNX files at want and got hold the same
// model, as modeltest.SameTree compares onnx.ModelTree's documents.
func sameModel(t *testing.T, want, got string) {
	t.Helper()
	var docs [2]any
	for i, p := range []string{want, got} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if docs[i], err = onnx.ModelTree(b); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	modeltest.SameTree(t, "export.py", filepath.Base(want), docs[0], docs[1])
}

// liveRows is how many rows TestAgainstONNXRuntime scores per fixture
// beside the fixture's own.
const liveRows = 400

// TestAgainstONNXRuntime scores every fixture's rows, and rows made from
// them that no fixture holds, with ONNX Runtime itself and with the Go
// evaluator, and compares the answers within 1e-6. The new rows are the
// fixture's with every number scaled by 1 ± 5% noise in full float64
// precision (so that a float model must round its inputs as ONNX Runtime
// does), text drawn from the values the fixture's rows hold, and numbers
// missing, where the fixture has missing numbers, one time in six.
func TestAgainstONNXRuntime(t *testing.T) {
	requireORT(t)
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			f := readFixture(t, "testdata", name)
			f.Rows = append(f.Rows, noisyRows(f, liveRows, rand.New(rand.NewPCG(uint64(len(name)), 21)))...)
			doc, err := json.Marshal(map[string]any{"schema": map[string]any{"inputs": f.Schema.Inputs}, "rows": f.Rows})
			if err != nil {
				t.Fatal(err)
			}
			rows := filepath.Join(t.TempDir(), "rows.json")
			if err := os.WriteFile(rows, doc, 0o600); err != nil {
				t.Fatal(err)
			}
			f.ONNXRuntime = ortAnswers(t, f, runORT(t, "score", filepath.Join("testdata", name+".onnx"), rows))
			m := loadFixtureModel(t, "testdata", name, f)
			compareAnswers(t, f, "ONNX Runtime", f.ONNXRuntime, modeltest.Score(t, m, f.table(t, 0, len(f.Rows))), 0)
		})
	}
}

// noisyRows returns n rows made from f's, as TestAgainstONNXRuntime says.
func noisyRows(f *fixture, n int, rng *rand.Rand) []map[string]any {
	texts := map[string][]string{}
	gaps := map[string]bool{}
	for _, r := range f.Rows {
		for k, v := range r {
			switch v := v.(type) {
			case string:
				if !slices.Contains(texts[k], v) {
					texts[k] = append(texts[k], v)
				}
			case nil:
				gaps[k] = true
			}
		}
	}
	out := make([]map[string]any, n)
	for i := range out {
		src := f.Rows[rng.IntN(len(f.Rows))]
		row := make(map[string]any, len(src))
		for _, k := range f.Schema.Inputs {
			switch v := src[k].(type) {
			case string:
				row[k] = texts[k][rng.IntN(len(texts[k]))]
			case float64:
				row[k] = v * (1 + 0.05*rng.NormFloat64())
			default:
				row[k] = nil
			}
			if gaps[k] && rng.IntN(6) == 0 {
				row[k] = nil
			}
		}
		out[i] = row
	}
	return out
}

// ortAnswers reads the runner's answer for f's rows: a regressor's one
// output; a classifier's label (a value per row) and probabilities (a list
// per row).
func ortAnswers(t *testing.T, f *fixture, out []byte) answers {
	t.Helper()
	var res struct {
		Outputs map[string][]json.RawMessage `json:"outputs"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("run.js printed %.200q: %v", out, err)
	}
	var a answers
	for name, values := range res.Outputs {
		if len(values) != len(f.Rows) {
			t.Fatalf("run.js: output %s has %d rows, want %d", name, len(values), len(f.Rows))
		}
		if f.Schema.Task == process.Regression || bytes.HasPrefix(values[0], []byte("[")) {
			a.Predictions = values
			continue
		}
		for _, v := range values {
			var label any
			if err := json.Unmarshal(v, &label); err != nil {
				t.Fatal(err)
			}
			a.Classes = append(a.Classes, f.className(fmt.Sprint(label)))
		}
	}
	if a.Predictions == nil || (f.Schema.Task == process.Classification && a.Classes == nil) {
		t.Fatalf("run.js answered the outputs %q", slices.Sorted(maps.Keys(res.Outputs)))
	}
	return a
}
