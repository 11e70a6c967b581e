package scoring_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// inBubble runs f as the subtest name in a synctest bubble: timers,
// timeouts and leases run on the bubble's clock, which moves only when
// every goroutine of the test waits.
func inBubble(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) { synctest.Test(t, f) })
}

// workersIdleOut is long enough for the handler's idle workers to exit,
// which a test in a bubble waits for at its end: no goroutine may outlive
// the bubble.
const workersIdleOut = 3 * time.Second

// fixture is a registry over a memory store with one deployment,
// DEFAULT/demo, and a handler over it.
type fixture struct {
	store *registry.MemStore
	reg   *registry.Registry
	h     *scoring.Handler
	log   *testutil.LockedBuffer
}

// newFixture registers procs and deploys DEFAULT/demo with one endpoint per
// process, its alias the process's name. cfg.Registry and cfg.Logger are
// set by newFixture.
func newFixture(t testing.TB, cfg scoring.Config, procs ...process.ProcessInfo) *fixture {
	t.Helper()
	cat := process.NewCatalog()
	var eps []registry.Endpoint
	for _, p := range procs {
		if err := cat.Register(p); err != nil {
			t.Fatal(err)
		}
		eps = append(eps, registry.Endpoint{Alias: p.Name, Process: p.Name})
	}
	store := registry.NewMemStore(registry.StoreOptions{})
	reg, err := registry.New(context.Background(), cat, store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	if _, err := reg.PutDeployment(context.Background(), registry.Deployment{
		Group: registry.DefaultGroup, Path: "demo", Enabled: true, Endpoints: eps,
	}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{store: store, reg: reg, log: &testutil.LockedBuffer{}}
	cfg.Registry = reg
	cfg.Logger = slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if f.h, err = scoring.New(cfg); err != nil {
		t.Fatal(err)
	}
	return f
}

// putDeployment writes d over whatever is stored.
func (f *fixture) putDeployment(t testing.TB, d registry.Deployment) {
	t.Helper()
	d.Revision = registry.AnyRevision
	if _, err := f.reg.PutDeployment(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// putQueue writes q over whatever is stored.
func (f *fixture) putQueue(t testing.TB, q registry.Queue) {
	t.Helper()
	q.Revision = registry.AnyRevision
	if _, err := f.reg.PutQueue(context.Background(), q); err != nil {
		t.Fatal(err)
	}
}

// post sends body to the endpoint alias of DEFAULT/demo as JSON.
func (f *fixture) post(alias, query, body string) *httptest.ResponseRecorder {
	target := "/DEFAULT/api/v1/services/demo/" + alias
	if query != "" {
		target += "?" + query
	}
	return serve(f.h, http.MethodPost, target, "application/json", body)
}

func serve(h http.Handler, method, target, contentType, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// apiError is the JSON error shape.
type apiError struct {
	Status  int
	Type    string
	Message string
	Pointer string
}

// errorOf reads the error a response carries; Status is 0 for a success.
func errorOf(t *testing.T, w *httptest.ResponseRecorder) apiError {
	t.Helper()
	if w.Code < 300 {
		return apiError{}
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type = %q, want application/json", ct)
	}
	var b struct {
		Error struct{ Type, Message, Pointer string }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil {
		t.Fatalf("error body %q: %v", w.Body, err)
	}
	return apiError{Status: w.Code, Type: b.Error.Type, Message: b.Error.Message, Pointer: b.Error.Pointer}
}

// echo is a process that returns no columns: the response echoes the
// input.
var echo = process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
	return process.NewTable(in.Table.Rows())
})

// double returns "double", twice the number column "x".
var double = process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
	n := in.Table.Rows()
	out := make([]float64, n)
	x, ok := in.Table.Lookup("x")
	for i := range out {
		out[i] = math.NaN()
		if v, present := x.Number(i); ok && present {
			out[i] = 2 * v
		}
	}
	return process.NewTable(n, process.NumberColumn("double", out, nil))
})

// colView is a column as tests compare it: missing values are nil.
type colView struct {
	Name   string
	Kind   process.Kind
	Values []any
}

func num(name string, v ...any) colView { return colView{Name: name, Kind: process.Number, Values: v} }

func viewTable(t *process.Table) []colView {
	out := []colView{}
	for i := range t.NumColumns() {
		c := t.Column(i)
		v := colView{Name: c.Name, Kind: c.Kind, Values: make([]any, c.Len())}
		for r := range v.Values {
			if c.IsMissing(r) {
				continue
			}
			if c.Kind == process.Number {
				v.Values[r] = c.Numbers[r]
			} else {
				v.Values[r] = c.Texts[r]
			}
		}
		out = append(out, v)
	}
	return out
}
