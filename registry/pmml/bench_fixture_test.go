package pmml_test

import (
	"context"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// benchRows is how many rows each benchmark scores, as in BENCHMARKS.md.
const benchRows = 10_000

// BenchmarkForest10k scores 10,000 rows through the Process of the iris
// random forest (10 trees of depth 4, averaged probabilities), result
// columns included.
func BenchmarkForest10k(b *testing.B) {
	f := readFixture(b, "testdata", "iris_forest")
	lm := loadFixtureModel(b, "testdata", "iris_forest", f)
	cols := make([]process.Column, len(f.Schema.Inputs))
	for j, name := range f.Schema.Inputs {
		v := make([]float64, benchRows)
		for i := range v {
			// Each pass over the rows shifts them a little, so that rows
			// differ and take different paths.
			v[i] = f.Rows[i%len(f.Rows)][name].(float64) * (1 + float64(i/len(f.Rows))*1e-4)
		}
		cols[j] = process.NumberColumn(name, v, nil)
	}
	in := tabletest.Must(benchRows, cols...)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := lm.Process.Score(ctx, process.Input{Table: in}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}
