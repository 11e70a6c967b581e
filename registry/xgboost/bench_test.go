package xgboost

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// benchRows is how many rows each benchmark scores, as in BENCHMARKS.md.
const benchRows = 10_000

// breastCancer loads the breast cancer classifier of testdata and a table
// of benchRows rows made from its test rows.
func breastCancer(b *testing.B) (*model, *process.LoadedModel, *process.Table) {
	b.Helper()
	artifact, err := os.ReadFile("testdata/breast_cancer_logistic.ubj")
	if err != nil {
		b.Fatal(err)
	}
	m, lm, err := Format{}.load(artifact, process.ModelMetadata{})
	if err != nil {
		b.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/breast_cancer_logistic.rows.json")
	if err != nil {
		b.Fatal(err)
	}
	var fx struct{ Rows []map[string]float64 }
	if err := json.Unmarshal(raw, &fx); err != nil {
		b.Fatal(err)
	}
	cols := make([]process.Column, len(lm.Schema.Inputs))
	for f, in := range lm.Schema.Inputs {
		v := make([]float64, benchRows)
		for i := range v {
			// Each pass over the rows shifts them a little, so that rows
			// differ and take different paths.
			v[i] = fx.Rows[i%len(fx.Rows)][in.Name] * (1 + float64(i/len(fx.Rows))*1e-3)
		}
		cols[f] = process.NumberColumn(in.Name, v, nil)
	}
	return m, lm, tabletest.Must(benchRows, cols...)
}

// BenchmarkScore scores 10,000 rows through the model's Process, result
// columns included.
func BenchmarkScore(b *testing.B) {
	_, lm, in := breastCancer(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := lm.Process.Score(ctx, process.Input{Table: in}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkEvaluate scores 10,000 rows to margins: the evaluation alone,
// without result columns. It allocates nothing per row.
func BenchmarkEvaluate(b *testing.B) {
	m, _, in := breastCancer(b)
	ctx := context.Background()
	var sum float32
	emit := func(_ int, out []float32) { sum += out[0] }
	allocs := testing.AllocsPerRun(10, func() {
		if err := m.margins(ctx, in, emit); err != nil {
			b.Fatal(err)
		}
	})
	b.ResetTimer()
	for b.Loop() {
		if err := m.margins(ctx, in, emit); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(allocs/benchRows, "allocs/row")
}

// BenchmarkScoreOneRow scores one row through the model's Process, as a
// single-row scoring request does.
func BenchmarkScoreOneRow(b *testing.B) {
	_, lm, in := breastCancer(b)
	cols := make([]process.Column, in.NumColumns())
	for i := range cols {
		c := in.Column(i)
		cols[i] = process.NumberColumn(c.Name, c.Numbers[:1], nil)
	}
	row := tabletest.Must(1, cols...)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := lm.Process.Score(ctx, process.Input{Table: row}); err != nil {
			b.Fatal(err)
		}
	}
}
