package scoring_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// observed is one call of an Observer, without the duration.
type observed struct {
	EP     process.EndpointRef
	Status int
	Rows   int
}

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu  sync.Mutex
	got []observed
}

func (r *recorder) ObserveRequest(o scoring.Observation) {
	if o.Duration < 0 {
		panic("negative duration")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, observed{o.Endpoint, o.Status, o.Rows})
}

func (r *recorder) take() []observed {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

// TestObserverSeesEveryAnswer checks that the Observer is told about each
// request exactly once, with the status the client got, the rows scored,
// and the endpoint's registry names, or Unmatched when there was none.
func TestObserverSeesEveryAnswer(t *testing.T) {
	rec := &recorder{}
	fails := process.ProcessFunc(func(context.Context, process.Input) (*process.Table, error) {
		return nil, errors.New("model server down")
	})
	teapot := process.ProcessFunc(func(context.Context, process.Input) (*process.Table, error) {
		return nil, &problem.Error{Status: http.StatusTeapot, Code: "teapot", Message: "short and stout"}
	})
	f := newFixture(t, scoring.Config{Observer: rec},
		process.ProcessInfo{Name: "double", Process: double},
		process.ProcessInfo{Name: "fails", Process: fails},
		process.ProcessInfo{Name: "teapot", Process: teapot})
	ep := func(alias string) process.EndpointRef {
		return process.EndpointRef{Group: registry.DefaultGroup, Path: "demo", Alias: alias}
	}
	const demo = "/DEFAULT/api/v1/services/demo/"
	tests := []struct {
		name                     string
		method, target, ct, body string
		want                     observed
	}{
		{"three rows scored", "POST", demo + "double", "application/json", `{"data":[{"x":1},{"x":2},{"x":3}]}`,
			observed{ep("double"), 200, 3}},
		{"no rows", "POST", demo + "double", "application/json", `{"data":[]}`, observed{ep("double"), 200, 0}},
		{"malformed JSON", "POST", demo + "double", "application/json", `{"data":[{"x":1},]}`, observed{ep("double"), 400, 0}},
		{"wrong media type", "POST", demo + "double", "text/csv", "x\n1\n", observed{ep("double"), 415, 0}},
		{"process fails", "POST", demo + "fails", "application/json", `{"data":[{"x":1}]}`, observed{ep("fails"), 500, 0}},
		{"process chooses a status", "POST", demo + "teapot", "application/json", `{"data":[{"x":1}]}`, observed{ep("teapot"), 418, 0}},
		{"unknown alias", "POST", demo + "nope", "application/json", `{"data":[{"x":1}]}`, observed{scoring.Unmatched(), 404, 0}},
		{"unknown group", "POST", "/nope/api/v1/services/demo/double", "application/json", `{}`, observed{scoring.Unmatched(), 404, 0}},
		{"not a scoring address", "POST", "/../etc/passwd", "application/json", `{}`, observed{scoring.Unmatched(), 404, 0}},
		{"escaped slash", "POST", "/DEFAULT/api/v1/services/demo%2Fx/double", "application/json", `{}`, observed{scoring.Unmatched(), 404, 0}},
		{"GET", "GET", demo + "double", "", "", observed{scoring.Unmatched(), 405, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(f.h, tt.method, tt.target, tt.ct, tt.body)
			if w.Code != tt.want.Status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.want.Status, w.Body)
			}
			if diff := cmp.Diff([]observed{tt.want}, rec.take()); diff != "" {
				t.Errorf("observed (-want +got):\n%s", diff)
			}
		})
	}
}

// durations is an Observer that keeps the durations it is told.
type durations struct {
	mu  sync.Mutex
	got []time.Duration
}

func (d *durations) ObserveRequest(o scoring.Observation) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, o.Duration)
}

// TestObserverDuration checks that the duration an Observer is told, read
// off the monotonic clock, covers the process's time and no more than the
// request's.
// The clock is the bubble's, so the process's pause takes no time.
func TestObserverDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const pause = 20 * time.Millisecond
		slow := process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
			time.Sleep(pause)
			return double.Score(ctx, in)
		})
		obs := &durations{}
		f := newFixture(t, scoring.Config{Observer: obs}, process.ProcessInfo{Name: "slow", Process: slow})
		before := time.Now()
		w := serve(f.h, "POST", "/DEFAULT/api/v1/services/demo/slow", "application/json", `{"data":[{"x":1}]}`)
		took := time.Since(before)
		if w.Code != http.StatusOK {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if len(obs.got) != 1 || obs.got[0] < pause || obs.got[0] > took {
			t.Errorf("observed %v, want one duration from %v to the %v the request took", obs.got, pause, took)
		}
		time.Sleep(workersIdleOut)
	})
}
