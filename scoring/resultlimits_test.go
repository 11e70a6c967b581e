package scoring_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/xgboost"
	"github.com/scorehub/scorehub/scoring"
)

// TestResultCellsLimit replays a small request to a model of many
// classes: the answer it would make is refused with 413, naming the rows,
// the result columns and the limit, before the model runs when the
// process declares its result columns and before anything is encoded when
// it does not.
func TestResultCellsLimit(t *testing.T) {
	const classes = 1000
	lm := manyClassModel(t, classes)
	var declaredCalls, wideCalls atomic.Int64
	declared := lm.ProcessInfo("classes")
	inner := declared.Process
	declared.Process = process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
		declaredCalls.Add(1)
		return inner.Score(ctx, in)
	})
	// wide answers as the model does but declares nothing.
	wide := process.ProcessInfo{Name: "wide", Process: process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
		wideCalls.Add(1)
		return inner.Score(ctx, in)
	})}
	// careful declares nothing either, but checks the columns it would
	// answer against its input's limits before it builds them; it is
	// scored in row ranges, each of which is held to the whole answer's.
	var carefulBuilt atomic.Int64
	careful := process.ProcessInfo{Name: "careful", RowWise: true, Process: process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
		names := 0
		for _, c := range declared.Output {
			names += len(c.Name)
		}
		if err := in.Limits.Check(len(declared.Output), names); err != nil {
			return nil, err
		}
		carefulBuilt.Add(1)
		return inner.Score(ctx, in)
	})}
	f := newFixture(t, scoring.Config{}, declared, wide, careful)

	tests := []struct {
		alias string
		rows  int
		calls *atomic.Int64
		want  int64 // calls of the process (of careful, results it built)
	}{
		{"classes", 3000, &declaredCalls, 0},
		{"wide", 3000, &wideCalls, 1},
		{"careful", 3000, &carefulBuilt, 0},
	}
	for _, tc := range tests {
		t.Run(tc.alias, func(t *testing.T) {
			body := manyRows(tc.rows)
			w := f.post(tc.alias, "", body)
			got := errorOf(t, w)
			if got.Status != 413 || got.Type != "too_many_result_cells" {
				t.Fatalf("%d rows (%d bytes) to a %d-class model: %d %.200s, want 413 too_many_result_cells", tc.rows, len(body), classes, w.Code, w.Body)
			}
			for _, figure := range []string{"3000 rows", fmt.Sprintf("%d result columns", classes+1), strconv.Itoa(scoring.DefaultMaxResultCells)} {
				if !strings.Contains(got.Message, figure) {
					t.Errorf("message %q does not name %q", got.Message, figure)
				}
			}
			if n := tc.calls.Load(); n != tc.want {
				t.Errorf("the process ran %d times, want %d", n, tc.want)
			}
		})
	}

	t.Run("within the limit", func(t *testing.T) {
		const rows = scoring.DefaultMaxResultCells / (classes + 1)
		w := f.post("classes", "", manyRows(rows))
		if w.Code != 200 {
			t.Fatalf("%d rows: %d %.200s", rows, w.Code, w.Body)
		}
		var resp struct{ Data []map[string]any }
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
			t.Fatal(err)
		}
		if len(resp.Data) != rows || len(resp.Data[rows-1]) != 2+classes+1 {
			t.Errorf("%d rows answered, the last with %d keys; want %d rows of %d", len(resp.Data), len(resp.Data[rows-1]), rows, 2+classes+1)
		}
	})

	t.Run("configured", func(t *testing.T) {
		f := newFixture(t, scoring.Config{Limits: scoring.Limits{MaxResultCells: 4}}, declared)
		if w := f.post("classes", "", manyRows(1)); errorOf(t, w).Type != "too_many_result_cells" {
			t.Errorf("one row of %d result columns under a limit of 4: %d %.200s", classes+1, w.Code, w.Body)
		}
	})
}

// TestJobResultLimits replays the request as a job: a job whose answer
// would hold too many result cells or bytes, or whose result could not fit its
// owner's quota or the store's, is refused when it is submitted, before
// anything is stored or run, rather than ending ERROR after it ran.
func TestJobResultLimits(t *testing.T) {
	const classes = 1000
	lm := manyClassModel(t, classes)
	var calls atomic.Int64
	info := lm.ProcessInfo("classes")
	inner := info.Process
	info.Process = process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
		calls.Add(1)
		return inner.Score(ctx, in)
	})
	f := newFixture(t, scoring.Config{}, info)
	store := jobs.NewMemStore(registry.StoreOptions{})
	t.Cleanup(func() { store.Close() })
	const ownerQuota, totalQuota = 1 << 20, 4 << 20
	runner, err := scoring.NewJobs(scoring.JobsConfig{Registry: f.reg, Queues: f.h.Queues(), Store: store,
		MaxOwnerResultBytes: ownerQuota, MaxResultBytes: totalQuota})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Close() })
	endpoint := &process.EndpointRef{Group: registry.DefaultGroup, Path: "demo", Alias: "classes"}
	ann := scoring.Caller{Subject: "ann"}
	submit := func(c scoring.Caller, rows int) (jobs.Job, error) {
		t.Helper()
		req, err := scoring.Decode(strings.NewReader(manyRows(rows)), runner.Limits())
		if err != nil {
			t.Fatal(err)
		}
		return runner.Submit(context.Background(), scoring.JobSpec{Caller: c, Endpoint: endpoint, Input: req})
	}

	tests := []struct {
		name    string
		caller  scoring.Caller
		rows    int
		status  int
		typ     problem.Code
		figures []string
	}{
		{"result cells", asAdmin, 3000, 413, problem.TooManyResultCells,
			[]string{"3000 rows", "1001 result columns", strconv.Itoa(scoring.DefaultMaxResultCells)}},
		{"owner's quota", ann, 200, 429, problem.JobQuotaExceeded, []string{strconv.Itoa(ownerQuota)}},
		{"store's room", asAdmin, 1000, 507, problem.StorageFull, []string{strconv.Itoa(totalQuota)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := submit(tc.caller, tc.rows)
			e := httperr.From(err)
			if err == nil || e.Status != tc.status || e.Code != tc.typ {
				t.Fatalf("a job of %d rows to a %d-class model: %v, want %d %s", tc.rows, classes, err, tc.status, tc.typ)
			}
			for _, figure := range tc.figures {
				if !strings.Contains(e.Message, figure) {
					t.Errorf("message %q does not name %q", e.Message, figure)
				}
			}
		})
	}
	if list, n, err := runner.List(context.Background(), asAdmin, jobs.Filter{}); err != nil || n != 0 {
		t.Errorf("refused jobs were stored: %d (%v, %v)", n, list, err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the model ran %d times for refused jobs", n)
	}

	t.Run("answer bytes", func(t *testing.T) {
		store := jobs.NewMemStore(registry.StoreOptions{})
		t.Cleanup(func() { store.Close() })
		small, err := scoring.NewJobs(scoring.JobsConfig{Registry: f.reg, Queues: f.h.Queues(), Store: store,
			Limits: scoring.Limits{MaxResponseBytes: 64 << 10}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { small.Close() })
		req, err := scoring.Decode(strings.NewReader(manyRows(10)), small.Limits())
		if err != nil {
			t.Fatal(err)
		}
		_, err = small.Submit(context.Background(), scoring.JobSpec{Caller: asAdmin, Endpoint: endpoint, Input: req})
		if e := httperr.From(err); err == nil || e.Status != 413 || e.Code != problem.ResponseTooLarge || !strings.Contains(e.Message, "65536 bytes") {
			t.Errorf("a job of 10 rows of %d result columns under 64 KiB: %v, want 413 response_too_large", classes+1, err)
		}
		if n := calls.Load(); n != 0 {
			t.Errorf("the model ran %d times", n)
		}
	})

	t.Run("within the quota", func(t *testing.T) {
		j, err := submit(ann, 10)
		if err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 15*time.Second, "the job ended", func() bool {
			j, err = runner.Job(context.Background(), ann, j.ID)
			return err == nil && j.State.Final()
		})
		if j.State != jobs.StateFinished {
			t.Fatalf("job ended %s (%+v)", j.State, j.Error)
		}
	})
}

// TestResponseBytesLimit replays a request to a model whose classes have
// long names: few result cells, but names every row repeats. The answer is
// refused with 413 response_too_large naming the figures, before the
// model runs when it declares its result columns, before anything is
// encoded when it does not.
func TestResponseBytesLimit(t *testing.T) {
	const classes, rows = 1000, 1000
	names := make([]string, classes)
	for i := range names {
		names[i] = fmt.Sprintf("%04d-%s", i, strings.Repeat("n", 195))
	}
	lm, err := xgboost.Format{}.Load(modeltest.XGBoostClasses(classes), process.ModelMetadata{Classes: names})
	if err != nil {
		t.Fatal(err)
	}
	var declaredCalls, undeclaredCalls atomic.Int64
	declared := lm.ProcessInfo("long")
	inner := declared.Process
	declared.Process = process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
		declaredCalls.Add(1)
		return inner.Score(ctx, in)
	})
	undeclared := process.ProcessInfo{Name: "longer", Process: process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
		undeclaredCalls.Add(1)
		return inner.Score(ctx, in)
	})}
	f := newFixture(t, scoring.Config{}, declared, undeclared)
	if rows*(classes+1) > scoring.DefaultMaxResultCells {
		t.Fatalf("the request passes the result cell limit too; it must pass only the byte limit")
	}
	for _, tc := range []struct {
		alias string
		calls *atomic.Int64
		want  int64
	}{{"long", &declaredCalls, 0}, {"longer", &undeclaredCalls, 1}} {
		t.Run(tc.alias, func(t *testing.T) {
			w := f.post(tc.alias, "", manyRows(rows))
			got := errorOf(t, w)
			if got.Status != 413 || got.Type != "response_too_large" {
				t.Fatalf("%d rows to a model of %d long class names: %d %.200s, want 413 response_too_large", rows, classes, w.Code, w.Body)
			}
			for _, figure := range []string{"1000 rows", "1001 result columns", strconv.Itoa(scoring.DefaultMaxResponseBytes) + " bytes"} {
				if !strings.Contains(got.Message, figure) {
					t.Errorf("message %q does not name %q", got.Message, figure)
				}
			}
			if n := tc.calls.Load(); n != tc.want {
				t.Errorf("the process ran %d times, want %d", n, tc.want)
			}
		})
	}
	t.Run("within the limit", func(t *testing.T) {
		if w := f.post("long", "", manyRows(100)); w.Code != 200 {
			t.Errorf("100 rows: %d %.200s", w.Code, w.Body)
		}
	})
}
