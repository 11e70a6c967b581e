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
	"sync"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/xgboost"
)

// contribsFeatures is how many features the contribution benchmarks'
// model reads, f0 to f19.
const contribsFeatures = 20

// contribsModel is the contribution benchmarks' model, trained once per
// test binary by testdata/pred_contribs.py: 100 trees of depth 6.
var contribsModel struct {
	once sync.Once
	json []byte
	err  error
}

// contribsBench returns the benchmarks' model, saved as JSON, and its
// benchRows rows: normal values, one in fifty missing (NaN), the same on
// every run.
func contribsBench(b *testing.B) ([]byte, [][]float64) {
	if _, err := os.Stat(python.Path); err != nil {
		b.Skipf("%s is missing: install python3-xgboost to train the benchmark's model", python.Path)
	}
	contribsModel.once.Do(func() {
		dir, err := os.MkdirTemp("", "contribs-bench-")
		if err != nil {
			contribsModel.err = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "model.json")
		cmd := exec.Command(python.Path, filepath.Join("testdata", "pred_contribs.py"), "train", path)
		cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			contribsModel.err = &exec.ExitError{Stderr: out}
			return
		}
		contribsModel.json, contribsModel.err = os.ReadFile(path)
	})
	if contribsModel.err != nil {
		b.Skipf("pred_contribs.py train (needs python3-xgboost and python3-sklearn): %v", contribsModel.err)
	}
	rng := rand.New(rand.NewPCG(10_000, 20))
	rows := make([][]float64, benchRows)
	for i := range rows {
		row := make([]float64, contribsFeatures)
		for j := range row {
			row[j] = 2 * rng.NormFloat64()
			if rng.IntN(50) == 0 {
				row[j] = math.NaN()
			}
		}
		rows[i] = row
	}
	return contribsModel.json, rows
}

// contribsTable is rows as a request's table of columns f0, f1, ….
func contribsTable(rows [][]float64) *process.Table {
	cols := make([]process.Column, contribsFeatures)
	for j := range cols {
		values := make([]float64, len(rows))
		for i, r := range rows {
			values[i] = r[j]
		}
		cols[j] = process.NumberColumn("f"+strconv.Itoa(j), values, nil)
	}
	return tabletest.Must(len(rows), cols...)
}

// explainContribs loads the model and explains rows.
func explainContribs(b *testing.B, model []byte, rows [][]float64) (process.Explainer, process.Input) {
	lm, err := xgboost.Format{}.Load(model, process.ModelMetadata{})
	if err != nil {
		b.Fatal(err)
	}
	e, ok := lm.Process.(process.Explainer)
	if !ok {
		b.Fatal("the benchmark's model does not explain")
	}
	return e, process.Input{Table: contribsTable(rows)}
}

// BenchmarkContribs10k computes the contributions of 10,000 rows of a
// model of 100 trees of depth 6 in one call, as one request would.
func BenchmarkContribs10k(b *testing.B) {
	model, rows := contribsBench(b)
	e, in := explainContribs(b, model, rows)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := e.Explain(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkContribs10kXGBoost times XGBoost's own pred_contribs on one
// thread over the same rows and model as BenchmarkContribs10k, so one run
// of the benchmarks compares the two. Its ns/op and rows/s are XGBoost's,
// timed in Python around the predictions alone (the DMatrix is built
// before).
func BenchmarkContribs10kXGBoost(b *testing.B) {
	model, rows := contribsBench(b)
	dir := b.TempDir()
	buf := make([]byte, 0, 8*len(rows)*contribsFeatures)
	for _, r := range rows {
		for _, v := range r {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
	}
	data, path := filepath.Join(dir, "rows.f64"), filepath.Join(dir, "model.json")
	if err := os.WriteFile(data, buf, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, model, 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(python.Path, filepath.Join("testdata", "pred_contribs.py"), "time",
		path, data, strconv.Itoa(contribsFeatures), strconv.Itoa(b.N))
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Skipf("pred_contribs.py (needs python3-xgboost): %v", err)
	}
	var res struct {
		Passes  int     `json:"passes"`
		Seconds float64 `json:"seconds"`
		Sum     float64 `json:"sum"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Passes < 1 || res.Seconds <= 0 {
		b.Fatalf("pred_contribs.py printed %q: %v", out, err)
	}

	// Both sides must compute the same: all contributions of all rows
	// sum alike, to float32 precision.
	e, in := explainContribs(b, model, rows)
	got, err := e.Explain(context.Background(), in)
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	for _, v := range got.Values[0] {
		sum += v
	}
	if math.Abs(sum-res.Sum) > 1e-5*benchRows {
		b.Fatalf("Go's contributions sum to %v over the benchmark rows, XGBoost's to %v", sum, res.Sum)
	}

	b.ReportMetric(res.Seconds*1e9/float64(res.Passes), "ns/op")
	b.ReportMetric(float64(res.Passes)*benchRows/res.Seconds, "rows/s")
}
