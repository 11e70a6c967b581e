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

// fuzzLimits keep the fuzzer's models small, so that a run explores
// shapes rather than sizes.
var fuzzLimits = Limits{MaxBytes: 1 << 20, MaxTrees: 64, MaxLeaves: 64, MaxDepth: 16, MaxFeatures: 16, MaxClasses: 8, MaxCategoryWords: 64}

// FuzzLoad reads any bytes as a model: Load must fail with an error of a
// model kind or return a model that scores (and, where it can, explains)
// rows of every kind of value.
// The seeds are the hand-written model of the unit tests and variants of
// it; testdata/fuzz/FuzzLoad holds models LightGBM wrote (a categorical
// one with pandas_categorical, a linear one, one without feature names).
func FuzzLoad(f *testing.F) {
	f.Add([]byte(small))
	f.Add([]byte(small + "\npandas_categorical:[[\"zero\", \"one\", \"two\"]]\n"))
	f.Add([]byte(strings.Replace(small, "is_linear=0", "is_linear=1\nleaf_const=1 2 3\nnum_features=1 0 2\nleaf_features=0  0 1 \nleaf_coeff=0.5  1 -1 ", 1)))
	f.Add([]byte(strings.Replace(small, "objective=regression", "objective=binary sigmoid:1\naverage_output", 1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		lm, err := Format{Limits: fuzzLimits}.Load(b, process.ModelMetadata{})
		if err != nil {
			if !errors.Is(err, process.ErrModelInvalid) && !errors.Is(err, process.ErrModelLimit) && !errors.Is(err, process.ErrModelFormat) {
				t.Fatalf("Load failed with an error of no model kind: %v", err)
			}
			return
		}
		var cols []process.Column
		for _, in := range lm.Schema.Inputs {
			if in.Kind == process.Text {
				cols = append(cols, process.TextColumn(in.Name, []string{"", "a", "0", "x", "1"}, []bool{true, false, false, false, false}))
				continue
			}
			cols = append(cols, process.NumberColumn(in.Name, []float64{0, -1, math.NaN(), 1e40, 3}, nil))
		}
		in := process.Input{Table: tabletest.Must(5, cols...)}
		out, err := lm.Process.Score(context.Background(), in)
		if err != nil {
			t.Fatalf("Score: %v", err)
		}
		if out.Rows() != 5 || out.NumColumns() != len(lm.Schema.Outputs) {
			t.Fatalf("Score answered %d rows × %d columns, want 5 × %d", out.Rows(), out.NumColumns(), len(lm.Schema.Outputs))
		}
		// A model that explains does so, or refuses linear trees as a
		// model's fault.
		if e, ok := lm.Process.(process.Explainer); ok {
			x, err := e.Explain(context.Background(), in)
			switch {
			case errors.Is(err, process.ErrModelInvalid):
			case err != nil:
				t.Fatalf("Explain: %v", err)
			default:
				if err := x.Check(5); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
