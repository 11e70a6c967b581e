package onnx_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// benchRows is how many rows each benchmark scores at once, as in
// BENCHMARKS.md.
const benchRows = 10_000

// benchPasses is the fewest passes over the rows ONNX Runtime is timed for.
const benchPasses = 50

// The tree ensembles the benchmarks score: a random forest (100 trees of
// depth 8 at most, 3,912 nodes, averaging class shares) and gradient
// boosting (20 trees of depth 3 summed onto the initial log-odds,
// LOGISTIC), both on the 30 features of the breast cancer data set, float
// thresholds.
const (
	benchForest   = "breast_cancer_forest"
	benchBoosting = "breast_cancer_boosting"
)

// benchInput returns model's fixture and 10,000 rows made from its rows,
// each number scaled by 1 ± 5% noise, the same on every run.
func benchInput(b *testing.B, model string) (*fixture, []map[string]any) {
	f := readFixture(b, "testdata", model)
	return f, noisyRows(f, benchRows, rand.New(rand.NewPCG(10_000, 569)))
}

// benchGo scores the rows with the Go evaluator in one call per pass, as one
// request of 10,000 rows would, result columns included.
func benchGo(b *testing.B, model string) {
	f, rows := benchInput(b, model)
	m := loadFixtureModel(b, "testdata", model, f)
	f.Rows = rows
	in := process.Input{Table: f.table(b, 0, len(rows))}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Process.Score(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}

// benchORT times ONNX Runtime on one thread (intra- and inter-op threads 1,
// sequential execution) over the same rows and model as benchGo, so that
// one run of the benchmarks compares the two. Its ns/op and rows/s are
// ONNX Runtime's, timed in Node around the runs alone, one run per pass
// after one to warm up.
func benchORT(b *testing.B, model string) {
	requireORT(b)
	f, rows := benchInput(b, model)
	doc, err := json.Marshal(map[string]any{"schema": map[string]any{"inputs": f.Schema.Inputs}, "rows": rows})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "rows.json")
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		b.Fatal(err)
	}
	// The runner starts Node and reads the rows each time, which the
	// benchmark's own clock would count; at least benchPasses passes make
	// one start time enough of them.
	out := runORT(b, "bench", filepath.Join("testdata", model+".onnx"), path, strconv.Itoa(max(b.N, benchPasses)))
	var res struct {
		Passes  int                  `json:"passes"`
		Seconds float64              `json:"seconds"`
		Sums    map[string][]float64 `json:"sums"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Passes < 1 || res.Seconds <= 0 {
		b.Fatalf("run.js printed %q: %v", out, err)
	}

	// Both sides must score the same: Go's confidences of each class sum
	// to ONNX Runtime's probabilities.
	m := loadFixtureModel(b, "testdata", model, f)
	f.Rows = rows
	got, err := m.Process.Score(context.Background(), process.Input{Table: f.table(b, 0, len(rows))})
	if err != nil {
		b.Fatal(err)
	}
	sums := res.Sums["probabilities"]
	if len(sums) != len(f.Schema.Classes) {
		b.Fatalf("run.js summed %v, want the probabilities of %d classes", res.Sums, len(f.Schema.Classes))
	}
	for k, class := range f.Schema.Classes {
		conf, ok := got.Lookup("confidence(" + class + ")")
		if !ok {
			b.Fatalf("no confidence(%s) in the answer", class)
		}
		var sum float64
		for _, v := range conf.Numbers {
			sum += v
		}
		if math.Abs(sum-sums[k]) > 1e-6*benchRows {
			b.Fatalf("Go's confidences of %s sum to %v over the benchmark rows, ONNX Runtime's to %v", class, sum, sums[k])
		}
	}

	b.ReportMetric(res.Seconds*1e9/float64(res.Passes), "ns/op")
	b.ReportMetric(float64(res.Passes)*benchRows/res.Seconds, "rows/s")
}

// BenchmarkForest10k scores 10,000 rows with the random forest in Go.
func BenchmarkForest10k(b *testing.B) { benchGo(b, benchForest) }

// BenchmarkForest10kONNXRuntime scores BenchmarkForest10k's rows with ONNX
// Runtime on one thread.
func BenchmarkForest10kONNXRuntime(b *testing.B) { benchORT(b, benchForest) }

// BenchmarkBoosting10k scores 10,000 rows with the gradient boosting model
// in Go.
func BenchmarkBoosting10k(b *testing.B) { benchGo(b, benchBoosting) }

// BenchmarkBoosting10kONNXRuntime scores BenchmarkBoosting10k's rows with
// ONNX Runtime on one thread.
func BenchmarkBoosting10kONNXRuntime(b *testing.B) { benchORT(b, benchBoosting) }
