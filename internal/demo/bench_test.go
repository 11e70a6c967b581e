package demo_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/scorehub/scorehub/internal/demo"
	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// BenchmarkIris scores tables of 1 and 100 rows with the iris process, as
// the scoring handler calls it once the body is decoded.
func BenchmarkIris(b *testing.B) {
	p, err := demo.Iris()
	if err != nil {
		b.Fatal(err)
	}
	for _, rows := range []int{1, 100} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			cols := make([]process.Column, 4)
			for f, name := range []string{"sepal_length", "sepal_width", "petal_length", "petal_width"} {
				v := make([]float64, rows)
				for i := range v {
					v[i] = 1 + float64((i+f)%5)
				}
				cols[f] = process.NumberColumn(name, v, nil)
			}
			in := process.Input{Table: tabletest.Must(rows, cols...)}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Process.Score(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
