package xgboost_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// benchModel is the model both breast-cancer benchmarks score, and
// benchRows how many rows they score at once.
const (
	benchModel = "breast_cancer_logistic"
	benchRows  = 10_000
)

// breastCancer10k returns the benchmark's fixture and its rows: the
// fixture's rows drawn at random, each value scaled by 1 ± 5% noise and
// one in fifty left missing (NaN), the same on every run. Rows are in the
// model's feature order.
func breastCancer10k(b *testing.B) (*fixture, [][]float64) {
	f := readFixture(b, "testdata", benchModel)
	rng := rand.New(rand.NewPCG(10_000, 569))
	rows := make([][]float64, benchRows)
	for i := range rows {
		src := f.Rows[rng.IntN(len(f.Rows))]
		row := make([]float64, len(f.Schema.Inputs))
		for j, name := range f.Schema.Inputs {
			noise, gap := rng.NormFloat64(), rng.IntN(50)
			if v := src[name]; v != nil && gap != 0 {
				row[j] = *v * (1 + 0.05*noise)
			} else {
				row[j] = math.NaN()
			}
		}
		rows[i] = row
	}
	return f, rows
}

// benchTable is rows as a request's table: a Number column per feature, NaN
// where a value is missing.
func benchTable(f *fixture, rows [][]float64) *process.Table {
	cols := make([]process.Column, len(f.Schema.Inputs))
	for j, name := range f.Schema.Inputs {
		values := make([]float64, len(rows))
		for i, r := range rows {
			values[i] = r[j]
		}
		cols[j] = process.NumberColumn(name, values, nil)
	}
	return tabletest.Must(len(rows), cols...)
}

// BenchmarkBreastCancer10k scores 10,000 rows with the breast-cancer model
// in one call, as one request of that many rows would.
func BenchmarkBreastCancer10k(b *testing.B) {
	f, rows := breastCancer10k(b)
	m := loadFixtureModel(b, "testdata", benchModel, ".json", f)
	in := process.Input{Table: benchTable(f, rows)}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := m.Process.Score(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkBreastCancer10kXGBoost times XGBoost's own inplace_predict on
// one thread over the same rows and model as BenchmarkBreastCancer10k, so
// one run of the benchmarks compares the two. Its ns/op and rows/s are
// XGBoost's, timed in Python around the predictions alone.
func BenchmarkBreastCancer10kXGBoost(b *testing.B) {
	if _, err := os.Stat(python.Path); err != nil {
		b.Skipf("%s is missing: install python3-xgboost to compare with XGBoost", python.Path)
	}
	f, rows := breastCancer10k(b)
	buf := make([]byte, 0, 8*len(rows)*len(f.Schema.Inputs))
	for _, r := range rows {
		for _, v := range r {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
	}
	data := filepath.Join(b.TempDir(), "rows.f64")
	if err := os.WriteFile(data, buf, 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(python.Path, filepath.Join("testdata", "inplace_predict.py"),
		filepath.Join("testdata", benchModel+".json"), data, strconv.Itoa(len(f.Schema.Inputs)), strconv.Itoa(b.N))
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Skipf("inplace_predict.py (needs python3-xgboost): %v", err)
	}
	var res struct {
		Passes  int     `json:"passes"`
		Seconds float64 `json:"seconds"`
		Sum     float64 `json:"sum"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Passes < 1 || res.Seconds <= 0 {
		b.Fatalf("inplace_predict.py printed %q: %v", out, err)
	}

	// Both sides must score the same: Go's confidences of the second class
	// sum to XGBoost's probabilities.
	m := loadFixtureModel(b, "testdata", benchModel, ".json", f)
	got, err := m.Process.Score(context.Background(), process.Input{Table: benchTable(f, rows)})
	if err != nil {
		b.Fatal(err)
	}
	conf, ok := got.Lookup("confidence(" + f.Schema.Classes[1] + ")")
	if !ok {
		b.Fatalf("no confidence(%s) in the answer", f.Schema.Classes[1])
	}
	var sum float64
	for _, v := range conf.Numbers {
		sum += v
	}
	if math.Abs(sum-res.Sum) > 1e-6*benchRows {
		b.Fatalf("Go's confidences sum to %v over the benchmark rows, XGBoost's to %v", sum, res.Sum)
	}

	b.ReportMetric(res.Seconds*1e9/float64(res.Passes), "ns/op")
	b.ReportMetric(float64(res.Passes)*benchRows/res.Seconds, "rows/s")
}
