package drift_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
)

// wide returns n rows of 30 features, 24 numbers and 6 texts of 30
// categories each, and their specs.
func wide(tb testing.TB, rng *rand.Rand, n int) (*process.Table, []process.ColumnSpec) {
	var cols []process.Column
	var specs []process.ColumnSpec
	for f := range 30 {
		name := fmt.Sprintf("f%02d", f)
		if f%5 == 4 {
			v := make([]string, n)
			for i := range v {
				v[i] = fmt.Sprintf("c%d", rng.IntN(30))
			}
			cols = append(cols, process.TextColumn(name, v, nil))
			specs = append(specs, process.ColumnSpec{Name: name, Kind: process.Text})
			continue
		}
		cols = append(cols, num(name, numbers(n, func(int) float64 { return rng.NormFloat64() })...))
		specs = append(specs, process.ColumnSpec{Name: name, Kind: process.Number})
	}
	return table(tb, cols...), specs
}

// BenchmarkObserve reports the cost of counting a request of 1 and of
// 10,000 rows of 30 features, on one goroutine and on all.
func BenchmarkObserve(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	ref, specs := wide(b, rng, 10000)
	p, err := drift.BuildProfile(ref, specs, drift.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, rows := range []int{1, 10000} {
		req, _ := wide(b, rng, rows)
		l := newLive(b, p, drift.Window{Duration: time.Hour, Rows: 100000})
		run := func(b *testing.B, observe func()) {
			observe()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		}
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			b.ReportAllocs()
			run(b, func() {
				for b.Loop() {
					if err := l.Observe(req); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
		b.Run(fmt.Sprintf("rows=%d/parallel", rows), func(b *testing.B) {
			b.ReportAllocs()
			run(b, func() {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := l.Observe(req); err != nil {
							b.Error(err)
						}
					}
				})
			})
		})
	}
}
