package lightgbm

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry/process"
)

// benchRows is how many rows each benchmark scores, as in BENCHMARKS.md.
const benchRows = 10_000

// benchModelVar names the model the benchmarks score, such as the larger
// one testdata/bench.py trains; unset, they score testdata/binary.txt.
const benchModelVar = "SCOREHUB_LIGHTGBM_BENCH_MODEL"

// benchTable loads the model and a table of benchRows rows made from the
// binary fixture's rows whose values are all numbers, as testdata/bench.py
// makes the same rows for LightGBM: row i is base row i mod n, each value
// times 1 + (i div n)·0.001, so that rows differ and take different paths.
func benchTable(b *testing.B) (*model, *process.LoadedModel, *process.Table) {
	b.Helper()
	path := os.Getenv(benchModelVar)
	if path == "" {
		path = "testdata/binary.txt"
	}
	artifact, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	m, lm, err := Format{}.load(artifact, process.ModelMetadata{})
	if err != nil {
		b.Fatal(err)
	}
	f := readFixture(b, "testdata", "binary")
	var base []map[string]any
	for _, r := range f.Rows {
		plain := true
		for _, v := range r {
			if x, ok := v.(float64); !ok || math.IsInf(x, 0) {
				plain = false
			}
		}
		if plain {
			base = append(base, r)
		}
	}
	n := len(base)
	cols := make([]process.Column, len(lm.Schema.Inputs))
	for j, in := range lm.Schema.Inputs {
		v := make([]float64, benchRows)
		for i := range v {
			v[i] = base[i%n][in.Name].(float64) * (1 + float64(i/n)*1e-3)
		}
		cols[j] = process.NumberColumn(in.Name, v, nil)
	}
	return m, lm, tabletest.Must(benchRows, cols...)
}

// BenchmarkScore scores 10,000 rows through the model's Process, result
// columns included: what LGBM_BoosterPredictForMat does for LightGBM. It
// reports the process's CPU time per run too (cpu-ns/op), steadier than
// wall time on a shared machine, as bench.py reports LightGBM's.
func BenchmarkScore(b *testing.B) {
	_, lm, in := benchTable(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	report := testutil.MeasureCPU(b, testutil.ProcessCPU)
	for b.Loop() {
		if _, err := lm.Process.Score(ctx, process.Input{Table: in}); err != nil {
			b.Fatal(err)
		}
	}
	report()
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkRawScores scores 10,000 rows to raw scores: the evaluation
// alone, without result columns.
func BenchmarkRawScores(b *testing.B) {
	m, _, in := benchTable(b)
	ctx := context.Background()
	var sum float64
	emit := func(_ int, out []float64) { sum += out[0] }
	for b.Loop() {
		if err := m.rawScores(ctx, in, emit); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}
