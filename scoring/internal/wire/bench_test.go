package wire_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// benchBody returns a request of rows rows shaped like what pandas sends:
// integers, decimals, text, a boolean and the odd null.
func benchBody(rows int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"data":[`)
	cities := []string{"Berlin", "Oslo", "São Paulo", "Lagos", "Osaka"}
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		income := `52000.75`
		if i%17 == 0 {
			income = `null`
		}
		fmt.Fprintf(&b, `{"id":%d,"age":%d,"income":%s,"score":0.%04d,"city":%q,"member":%t}`,
			1_000_000_000+i, 18+i%60, income, i%10000, cities[i%len(cities)], i%3 == 0)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// BenchmarkAppendResponse writes the answer to a 10,000-row request with
// what a classifier returns: three confidences per row, probabilities with
// 17 digits that sum to one, the smallest often tiny (1e-20), as the iris
// demo's softmax gives them.
func BenchmarkAppendResponse(b *testing.B) {
	const rows = 10_000
	req, err := decode(bytes.NewReader(benchBody(rows)), wire.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	conf := [3][]float64{make([]float64, rows), make([]float64, rows), make([]float64, rows)}
	for i := range rows {
		var z [3]float64
		sum := 0.0
		for j := range z {
			z[j] = math.Exp(r.NormFloat64() * 20)
			sum += z[j]
		}
		for j := range z {
			conf[j][i] = z[j] / sum
		}
	}
	result, err := process.NewTable(rows,
		process.NumberColumn("confidence(setosa)", conf[0], nil),
		process.NumberColumn("confidence(versicolor)", conf[1], nil),
		process.NumberColumn("confidence(virginica)", conf[2], nil))
	if err != nil {
		b.Fatal(err)
	}
	var out []byte
	b.ReportAllocs()
	report := testutil.MeasureCPU(b, testutil.ProcessCPU)
	for b.Loop() {
		if out, err = wire.AppendResponse(out[:0], req, result); err != nil {
			b.Fatal(err)
		}
	}
	report()
	b.SetBytes(int64(len(out)))
}
