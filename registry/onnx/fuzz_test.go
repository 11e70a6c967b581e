package onnx

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// fuzzLimits keep the fuzzer's models small, so that a run explores
// shapes rather than sizes.
var fuzzLimits = Limits{MaxBytes: 1 << 20, MaxNodes: 64, MaxTreeNodes: 256, MaxTrees: 32, MaxDepth: 16,
	MaxFeatures: 64, MaxClasses: 8, MaxElements: 4096}

// checkLoaded fails unless a loaded model scores rows without trouble.
func checkLoaded(t *testing.T, lm *process.LoadedModel, err error) {
	if err != nil {
		if !errors.Is(err, process.ErrModelInvalid) && !errors.Is(err, process.ErrModelLimit) {
			t.Fatalf("Load failed with an error of no model kind: %v", err)
		}
		return
	}
	var cols []process.Column
	for _, in := range lm.Schema.Inputs {
		if in.Kind == process.Text {
			cols = append(cols, process.TextColumn(in.Name, []string{"a", "", "red", "x", "blue", "1", "0.5", "b", "green", "lo"},
				[]bool{false, true, false, false, false, false, false, false, false, false}))
		} else {
			cols = append(cols, process.NumberColumn(in.Name, []float64{0, -1, math.NaN(), 1e40, 3, 0.5, 1, 2, -0.25, 7}, nil))
		}
	}
	// Ten rows: the walks of eight rows at once, and of one, are both taken.
	out, err := lm.Process.Score(context.Background(), process.Input{Table: tabletest.Must(10, cols...)})
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	if out.Rows() != 10 || out.NumColumns() != len(lm.Schema.Outputs) {
		t.Fatalf("Score answered %d rows × %d columns, want 10 × %d", out.Rows(), out.NumColumns(), len(lm.Schema.Outputs))
	}
	ex, ok := lm.Process.(process.Explainer)
	if !ok {
		return
	}
	e, err := ex.Explain(context.Background(), process.Input{Table: tabletest.Must(10, cols...)})
	if err != nil {
		t.Fatalf("Explain: %v", err)
	}
	if err := e.Check(10); err != nil {
		t.Fatalf("Explain: %v", err)
	}
}

func FuzzLoad(f *testing.F) {
	for _, m := range []tModel{forest(), pipeline(), labelArith(), linearSoftmax(),
		regressorModel("AVERAGE", aFloats("nodes_values", 1, 0, 0, 5, 0, 0)), treeEnsembleV5(onnxDouble),
		stumpClassifier(aFloats("base_values", 0.05, 0.3)), coveredStump(), coveredClassifier()} {
		f.Add(m.encode())
	}
	files, _ := filepath.Glob("testdata/*_tree.onnx")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lm, err := Format{Limits: fuzzLimits}.Load(b, process.ModelMetadata{})
		checkLoaded(t, lm, err)
	})
}
