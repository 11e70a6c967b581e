package scoring_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/internal/demo"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
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

// predict is the trivial process: one number column computed from age.
var predict = process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
	n := in.Table.Rows()
	age, _ := in.Table.Lookup("age")
	out := make([]float64, n)
	for i := range out {
		v, _ := age.Number(i)
		out[i] = v * 0.25
	}
	return process.NewTable(n, process.NumberColumn("prediction", out, nil))
})

// discard is a ResponseWriter that keeps nothing, so that the benchmarks
// measure the handlers rather than a recorder's buffer.
type discard struct {
	h      http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(status int)      { d.status = status }
func (d *discard) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }

// runHandler posts body to h's endpoint predict b.N times and reports
// throughput, allocations per row, and the process's CPU time per request
// (GC workers included), which a shared machine disturbs less than wall
// time.
func runHandler(b *testing.B, h http.Handler, body []byte, rows int) {
	runEndpoint(b, h, "predict", body, rows)
}

// runEndpoint is runHandler for the endpoint alias of DEFAULT/demo.
func runEndpoint(b *testing.B, h http.Handler, alias string, body []byte, rows int) {
	target := "/DEFAULT/api/v1/services/demo/" + alias
	w := &discard{h: http.Header{}}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	report := testutil.MeasureCPU(b, testutil.ProcessCPU)
	b.ResetTimer()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		clear(w.h)
		w.status, w.n = 0, 0
		h.ServeHTTP(w, r)
		if w.status != http.StatusOK || w.n < len(body) {
			b.Fatalf("status %d, %d bytes", w.status, w.n)
		}
	}
	b.StopTimer()
	report()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N)/float64(rows), "allocs/row")
}

// baseline does the handler's job the usual way: encoding/json into
// []map[string]any and back.
func baseline(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Data []map[string]any `json:"data"`
	}
	dec := json.NewDecoder(r.Body)
	dec.UseNumber() // to echo numbers as sent
	if err := dec.Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, row := range req.Data {
		age, _ := row["age"].(json.Number).Float64()
		row["prediction"] = age * 0.25
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	json.NewEncoder(w).Encode(map[string]any{"data": req.Data})
}

func BenchmarkScoring(b *testing.B) {
	f := newFixture(b, scoring.Config{}, process.ProcessInfo{Name: "predict", Process: predict})
	// The same process marked Prompt runs on the request's goroutine, as
	// the demo and the model formats do.
	fp := newFixture(b, scoring.Config{}, process.ProcessInfo{Name: "predict", Process: predict, Prompt: true})
	for _, rows := range []int{1, 10_000} {
		body := benchBody(rows)
		b.Run(fmt.Sprintf("handler/rows=%d", rows), func(b *testing.B) {
			runHandler(b, f.h, body, rows)
		})
		b.Run(fmt.Sprintf("handler-prompt/rows=%d", rows), func(b *testing.B) {
			runHandler(b, fp.h, body, rows)
		})
		b.Run(fmt.Sprintf("encoding-json/rows=%d", rows), func(b *testing.B) {
			runHandler(b, http.HandlerFunc(baseline), body, rows)
		})
		b.Run(fmt.Sprintf("tokenize/rows=%d", rows), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			var d jsontext.Decoder
			for b.Loop() {
				d.Reset(bytes.NewBuffer(body))
				for {
					if _, err := d.ReadToken(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkIris scores a request of the iris demo through the handler:
// the whole of a request's work but the network, with a real model whose
// answers are probabilities of 17 digits. Run with -cpu 1,2 to see the
// work of one goroutine and that of a request decoded and encoded in
// parts.
func BenchmarkIris(b *testing.B) {
	iris, err := demo.Iris()
	if err != nil {
		b.Fatal(err)
	}
	f := newFixture(b, scoring.Config{}, iris)
	for _, rows := range []int{1, 10_000} {
		body := demo.IrisRequest(rows)
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			runEndpoint(b, f.h, demo.IrisName, body, rows)
		})
	}
}
