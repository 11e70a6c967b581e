package scoring_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/xgboost"
	"github.com/scorehub/scorehub/scoring"
)

// manyClassModel is an XGBoost multi:softprob model of k classes over
// the features f0 and f1: one stump a class, as XGBoost 1.7 writes them.
// Its answer has 1 + k result columns.
func manyClassModel(t testing.TB, k int) *process.LoadedModel {
	t.Helper()
	type obj = map[string]any
	trees := make([]obj, k)
	info := make([]int, k)
	for i := range trees {
		info[i] = i
		trees[i] = obj{
			"base_weights": []float32{0, 0, 0}, "categories": []int{}, "categories_nodes": []int{},
			"categories_segments": []int{}, "categories_sizes": []int{},
			"default_left": []int{1, 0, 0}, "id": i,
			"left_children": []int{1, -1, -1}, "right_children": []int{2, -1, -1},
			"split_conditions": []float32{float32(i % 7), -0.5, float32(i%5) / 10},
			"split_indices":    []int{i % 2, 0, 0}, "split_type": []int{0, 0, 0},
			"tree_param": obj{"num_deleted": "0", "num_feature": "2", "num_nodes": "3", "size_leaf_vector": "0"},
		}
	}
	m := obj{
		"learner": obj{
			"attributes": obj{}, "feature_names": []string{}, "feature_types": []string{},
			"gradient_booster": obj{
				"model": obj{
					"gbtree_model_param": obj{"num_parallel_tree": "1", "num_trees": strconv.Itoa(k), "size_leaf_vector": "0"},
					"tree_info":          info,
					"trees":              trees,
				},
				"name": "gbtree",
			},
			"learner_model_param": obj{"base_score": "5E-1", "boost_from_average": "1", "num_class": strconv.Itoa(k),
				"num_feature": "2", "num_target": "1"},
			"objective": obj{"name": "multi:softprob", "softmax_multiclass_param": obj{"num_class": strconv.Itoa(k)}},
		},
		"version": []int{1, 7, 4},
	}
	artifact, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	lm, err := xgboost.Format{}.Load(artifact, process.ModelMetadata{})
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
