package scoring_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/xgboost"
	"github.com/scorehub/scorehub/scoring"
)

// manyClassModel is an XGBoost multi:softprob model of k classes over
// the features f0 and f1. Its answer has 1 + k result columns.
func manyClassModel(t testing.TB, k int) *process.LoadedModel {
	t.Helper()
	lm, err := xgboost.Format{}.Load(modeltest.XGBoostClasses(k), process.ModelMetadata{})
	if err != nil {
		t.Fatal(err)
	}
	return lm
}

// manyRows is a request body of n rows of f0 and f1.
func manyRows(n int) string {
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"f0":%d.5,"f1":%d}`, i%9, i%4)
	}
	b.WriteString("]}")
	return b.String()
}

// BenchmarkManyClassAnswer posts rows to XGBoost models of many classes
// under the default limits and reports the answer's size and the peak of
// the heap's live and unswept objects during a request, above what it
// held before: a figure to record, sampled, never asserted. 3,000 rows
// are the request of a few hundred KiB that made an answer of about
// 120 MB; the limit refuses it. 3,990 rows of 500 classes are as many
// result cells as the limit lets through, in an answer encoded in parts.
func BenchmarkManyClassAnswer(b *testing.B) {
	f := newFixture(b, scoring.Config{},
		manyClassModel(b, 1000).ProcessInfo("c1000"), manyClassModel(b, 500).ProcessInfo("c500"))
	for _, tc := range []struct{ classes, rows int }{{1000, 1000}, {1000, 1998}, {1000, 3000}, {500, 3990}} {
		target := fmt.Sprintf("/DEFAULT/api/v1/services/demo/c%d", tc.classes)
		rows := tc.rows
		b.Run(fmt.Sprintf("classes=%d/rows=%d", tc.classes, rows), func(b *testing.B) {
			body := []byte(manyRows(rows))
			w := &discard{h: http.Header{}}
			sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
			var peak uint64
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				metrics.Read(sample)
				base := sample[0].Value.Uint64()
				b.StartTimer()
				r := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				clear(w.h)
				w.status, w.n = 0, 0
				high := sampleHeap(func() { f.h.ServeHTTP(w, r) })
				peak = max(peak, high-min(high, base))
			}
			b.ReportMetric(float64(w.status), "status")
			b.ReportMetric(float64(w.n)/1e6, "answer-MB")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// sampleHeap runs f and returns the highest heap objects figure seen
// while it ran, read every 100 µs.
func sampleHeap(f func()) uint64 {
	done := make(chan struct{})
	var high uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			high = max(high, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	return high
}
