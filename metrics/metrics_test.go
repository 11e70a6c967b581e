package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/scorehub/scorehub/metrics"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/tokens"
)

// setup is a registry with the deployment DEFAULT/insurance whose endpoint
// "score" doubles the column x, a scoring handler over it, and the metrics
// on a fresh Prometheus registry.
type setup struct {
	prom    *prometheus.Registry
	m       *metrics.Metrics
	reg     *registry.Registry
	handler *scoring.Handler
	jobs    *scoring.Jobs
	jobDB   *jobs.MemStore
}

func newSetup(t testing.TB, withJobs bool) *setup {
	t.Helper()
	ctx := context.Background()
	cat := process.NewCatalog()
	err := cat.Register(process.ProcessInfo{Name: "double", Process: process.ProcessFunc(
		func(_ context.Context, in process.Input) (*process.Table, error) {
			x, ok := in.Table.Lookup("x")
			if !ok {
				return nil, &problem.Error{Status: http.StatusBadRequest, Code: "missing_x", Message: "x is required"}
			}
			out := make([]float64, in.Table.Rows())
			for i := range out {
				v, _ := x.Number(i)
				out[i] = 2 * v
			}
			return process.NewTable(in.Table.Rows(), process.NumberColumn("y", out, nil))
		})})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(ctx, cat, registry.NewMemStore(registry.StoreOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	if _, err := reg.PutDeployment(ctx, registry.Deployment{
		Group: registry.DefaultGroup, Path: "insurance", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "score", Process: "double"}},
	}); err != nil {
		t.Fatal(err)
	}
	queues, err := scoring.NewQueues(reg)
	if err != nil {
		t.Fatal(err)
	}
	s := &setup{prom: prometheus.NewRegistry(), reg: reg}
	cfg := metrics.Config{Registerer: s.prom, Queues: queues}
	if withJobs {
		s.jobDB = jobs.NewMemStore(registry.StoreOptions{})
		j, err := scoring.NewJobs(scoring.JobsConfig{Registry: reg, Queues: queues, Store: s.jobDB})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { j.Close() })
		s.jobs = j
		if err := s.prom.Register(metrics.JobsCollector(j, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if s.m, err = metrics.New(cfg); err != nil {
		t.Fatal(err)
	}
	if s.handler, err = scoring.New(scoring.Config{Registry: reg, Queues: queues, Observer: s.m}); err != nil {
		t.Fatal(err)
	}
	return s
}

// post sends a scoring request through the handler over a real server.
func post(t *testing.T, base, target, body string) int {
	t.Helper()
	res, err := http.Post(base+target, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// series returns the label sets of every series of the family name, as
// "k=v,k=v" strings.
func series(t *testing.T, g prometheus.Gatherer, name string) []string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var pairs []string
			for _, l := range m.GetLabel() {
				pairs = append(pairs, l.GetName()+"="+l.GetValue())
			}
			out = append(out, strings.Join(pairs, ","))
		}
	}
	return out
}

func TestNewFailsClosed(t *testing.T) {
	s := newSetup(t, false)
	queues := s.handler.Queues()
	tests := []struct {
		name string
		cfg  metrics.Config
		want string
	}{
		{"no registerer", metrics.Config{Queues: queues}, "Registerer is required"},
		{"no queues", metrics.Config{Registerer: prometheus.NewRegistry()}, "Queues is required"},
		{"buckets out of order", metrics.Config{Registerer: prometheus.NewRegistry(), Queues: queues, Buckets: []float64{1, 0.5}}, "not increasing"},
		{"buckets repeated", metrics.Config{Registerer: prometheus.NewRegistry(), Queues: queues, Buckets: []float64{1, 1}}, "not increasing"},
		{"no buckets", metrics.Config{Registerer: prometheus.NewRegistry(), Queues: queues, Buckets: []float64{}}, "not increasing"},
		{"registered twice", metrics.Config{Registerer: s.prom, Queues: queues}, "register"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := metrics.New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "metrics: ") {
				t.Fatalf("New = %v, %v; want an error saying %q", m, err, tt.want)
			}
		})
	}
	// The failed second registration left the first one whole.
	s.m.ObserveRequest(scoring.Observation{Endpoint: scoring.Unmatched(), Status: 404, Rows: 0, Duration: time.Millisecond})
	if n := testutil.CollectAndCount(s.prom, "scorehub_scoring_requests_total"); n != 1 {
		t.Errorf("after a failed second New, %d request series, want 1", n)
	}

	// Unregister frees the names for a new Metrics.
	s.m.Unregister()
	if _, err := metrics.New(metrics.Config{Registerer: s.prom, Queues: queues}); err != nil {
		t.Errorf("New after Unregister: %v", err)
	}
}

// TestScoringRequestsAreCounted scores real requests over HTTP and reads
// the counters, the histogram and the rows a dashboard would show.
func TestScoringRequestsAreCounted(t *testing.T) {
	s := newSetup(t, false)
	srv := httptest.NewServer(s.handler)
	defer srv.Close()
	const score = "/DEFAULT/api/v1/services/insurance/score"
	for _, r := range []struct {
		target, body string
		want         int
	}{
		{score, `{"data":[{"x":1},{"x":2},{"x":3}]}`, 200},
		{score, `{"data":[{"x":4},{"x":5}]}`, 200},
		{score, `{"data":[{"z":1}]}`, 400},
		{score, `{"data":[{"x":1},]}`, 400},
		{"/DEFAULT/api/v1/services/insurance/nope", `{"data":[{"x":1}]}`, 404},
	} {
		if got := post(t, srv.URL, r.target, r.body); got != r.want {
			t.Fatalf("POST %s %s: %d, want %d", r.target, r.body, got, r.want)
		}
	}

	want := `
# HELP scorehub_scoring_requests_total Scoring requests answered, by endpoint and HTTP status; requests that resolve to no endpoint count under "_unmatched".
# TYPE scorehub_scoring_requests_total counter
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="200",version=""} 2
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="400",version=""} 2
scorehub_scoring_requests_total{alias="_unmatched",group="_unmatched",model="",path="_unmatched",status="404",version=""} 1
# HELP scorehub_scoring_rows_total Input rows of successful scoring requests.
# TYPE scorehub_scoring_rows_total counter
scorehub_scoring_rows_total{alias="score",group="DEFAULT",model="",path="insurance",version=""} 5
`
	if err := testutil.GatherAndCompare(s.prom, strings.NewReader(want), "scorehub_scoring_requests_total", "scorehub_scoring_rows_total"); err != nil {
		t.Error(err)
	}

	counts := map[string]uint64{}
	mfs, err := s.prom.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "scorehub_scoring_request_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "alias" {
					counts[l.GetValue()] = m.GetHistogram().GetSampleCount()
				}
			}
			if b := m.GetHistogram().GetBucket(); len(b) != len(metrics.DefaultBuckets()) || b[len(b)-1].GetUpperBound() != 10 {
				t.Errorf("histogram buckets %v, want the %d default ones up to 10 s", b, len(metrics.DefaultBuckets()))
			}
		}
	}
	if diff := cmp.Diff(map[string]uint64{"score": 4, "_unmatched": 1}, counts); diff != "" {
		t.Errorf("latency observations per alias (-want +got):\n%s", diff)
	}
}

// TestDeletedEndpointSeriesGo checks that the series of an endpoint whose
// deployment is deleted leave the scrape, the _unmatched ones stay, and a
// deployment created again under the same names counts from zero.
func TestDeletedEndpointSeriesGo(t *testing.T) {
	s := newSetup(t, false)
	srv := httptest.NewServer(s.handler)
	defer srv.Close()
	ctx := context.Background()
	if _, err := s.reg.PutDeployment(ctx, registry.Deployment{
		Group: registry.DefaultGroup, Path: "claims", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "score", Process: "double"}},
	}); err != nil {
		t.Fatal(err)
	}
	const claims = "/DEFAULT/api/v1/services/claims/score"
	for _, r := range []struct {
		target string
		want   int
	}{
		{claims, 200},
		{"/DEFAULT/api/v1/services/insurance/score", 200},
		{"/DEFAULT/api/v1/services/nope/score", 404},
	} {
		if got := post(t, srv.URL, r.target, `{"data":[{"x":1}]}`); got != r.want {
			t.Fatalf("POST %s: %d, want %d", r.target, got, r.want)
		}
	}
	families := []string{"scorehub_scoring_requests_total", "scorehub_scoring_request_duration_seconds", "scorehub_scoring_rows_total"}
	paths := func() map[string][]string {
		out := map[string][]string{}
		for _, f := range families {
			for _, labels := range series(t, s.prom, f) {
				for _, l := range strings.Split(labels, ",") {
					if p, ok := strings.CutPrefix(l, "path="); ok {
						out[f] = append(out[f], p)
					}
				}
			}
		}
		return out
	}
	want := map[string][]string{
		families[0]: {"_unmatched", "claims", "insurance"},
		families[1]: {"_unmatched", "claims", "insurance"},
		families[2]: {"claims", "insurance"},
	}
	if diff := cmp.Diff(want, paths()); diff != "" {
		t.Fatalf("series before the delete, by path (-want +got):\n%s", diff)
	}

	if err := s.reg.DeleteDeployment(ctx, registry.DefaultGroup, "claims", registry.AnyRevision); err != nil {
		t.Fatal(err)
	}
	want = map[string][]string{
		families[0]: {"_unmatched", "insurance"},
		families[1]: {"_unmatched", "insurance"},
		families[2]: {"insurance"},
	}
	if diff := cmp.Diff(want, paths()); diff != "" {
		t.Errorf("series after deleting DEFAULT/claims, by path (-want +got):\n%s", diff)
	}

	if _, err := s.reg.PutDeployment(ctx, registry.Deployment{
		Group: registry.DefaultGroup, Path: "claims", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "score", Process: "double"}},
	}); err != nil {
		t.Fatal(err)
	}
	if got := post(t, srv.URL, claims, `{"data":[{"x":1},{"x":2}]}`); got != 200 {
		t.Fatalf("POST %s after re-creating it: %d, want 200", claims, got)
	}
	wantRows := `
# HELP scorehub_scoring_rows_total Input rows of successful scoring requests.
# TYPE scorehub_scoring_rows_total counter
scorehub_scoring_rows_total{alias="score",group="DEFAULT",model="",path="claims",version=""} 2
scorehub_scoring_rows_total{alias="score",group="DEFAULT",model="",path="insurance",version=""} 1
`
	if err := testutil.GatherAndCompare(s.prom, strings.NewReader(wantRows), "scorehub_scoring_rows_total"); err != nil {
		t.Errorf("rows after re-creating DEFAULT/claims: %v", err)
	}
}

// TestObserveWhilePruning observes requests of several endpoints from
// several goroutines while others are deleted and re-created and scrapes
// prune their series, under the race detector: no count of an endpoint
// that stays is lost, and once the others are gone a scrape leaves none
// of their series.
func TestObserveWhilePruning(t *testing.T) {
	s := newSetup(t, false)
	ctx := context.Background()
	kept := process.EndpointRef{Group: registry.DefaultGroup, Path: "insurance", Alias: "score"}
	churn := func(i int) process.EndpointRef {
		return process.EndpointRef{Group: registry.DefaultGroup, Path: fmt.Sprintf("churn%d", i), Alias: "score"}
	}
	const observers, each, churned = 4, 2000, 3
	stop := repeat(func() bool {
		for i := range churned {
			if _, err := s.reg.PutDeployment(ctx, registry.Deployment{
				Group: registry.DefaultGroup, Path: churn(i).Path, Enabled: true,
				Endpoints: []registry.Endpoint{{Alias: "score", Process: "double"}},
			}); err != nil {
				t.Error(err)
				return false
			}
		}
		series(t, s.prom, "scorehub_scoring_requests_total")
		for i := range churned {
			if err := s.reg.DeleteDeployment(ctx, registry.DefaultGroup, churn(i).Path, registry.AnyRevision); err != nil {
				t.Error(err)
				return false
			}
		}
		series(t, s.prom, "scorehub_scoring_requests_total")
		return true
	})
	observeFrom(observers, each, func(g, i int) {
		s.m.ObserveRequest(scoring.Observation{Endpoint: kept, Status: 200, Rows: 1, Duration: time.Millisecond})
		s.m.ObserveRequest(scoring.Observation{Endpoint: churn((g + i) % churned), Status: []int{200, 400, 503}[i%3], Rows: 1, Duration: time.Millisecond})
	})
	stop()

	want := fmt.Sprintf(`
# HELP scorehub_scoring_requests_total Scoring requests answered, by endpoint and HTTP status; requests that resolve to no endpoint count under "_unmatched".
# TYPE scorehub_scoring_requests_total counter
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="200",version=""} %d
# HELP scorehub_scoring_rows_total Input rows of successful scoring requests.
# TYPE scorehub_scoring_rows_total counter
scorehub_scoring_rows_total{alias="score",group="DEFAULT",model="",path="insurance",version=""} %d
`, observers*each, observers*each)
	if err := testutil.GatherAndCompare(s.prom, strings.NewReader(want), "scorehub_scoring_requests_total", "scorehub_scoring_rows_total"); err != nil {
		t.Error(err)
	}
}

// TestHistogramWhileObserving has requests observed from every core while
// scrapes read the latency histogram and collections empty the pools that
// hand out the counting shards: every scrape finds a valid histogram (the
// buckets rising, none above the count), and the last one every
// observation, in its bucket.
func TestHistogramWhileObserving(t *testing.T) {
	prom, m := withBuckets(t, 0.001, 0.01, 0.1)
	ep := process.EndpointRef{Group: registry.DefaultGroup, Path: "insurance", Alias: "score"}
	durations := []time.Duration{500 * time.Microsecond, 5 * time.Millisecond, 50 * time.Millisecond, time.Second}
	const observers, each = 8, 3000
	histogram := func() (count uint64, sum float64, cumulative []uint64) {
		mfs, err := prom.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "scorehub_scoring_request_duration_seconds" {
				continue
			}
			h := mf.GetMetric()[0].GetHistogram()
			for _, b := range h.GetBucket() {
				cumulative = append(cumulative, b.GetCumulativeCount())
			}
			return h.GetSampleCount(), h.GetSampleSum(), cumulative
		}
		return 0, 0, nil
	}
	n := 0
	stop := repeat(func() bool {
		n++
		count, _, cumulative := histogram()
		for i := range cumulative {
			if (i > 0 && cumulative[i] < cumulative[i-1]) || cumulative[i] > count {
				t.Errorf("scrape %d: buckets %v with count %d", n, cumulative, count)
				return false
			}
		}
		if n%10 == 0 {
			runtime.GC() // empties the pools: shards are made or shared anew
		}
		return true
	})
	observeFrom(observers, each, func(g, i int) {
		m.ObserveRequest(scoring.Observation{Endpoint: ep, Status: 200, Rows: 1, Duration: durations[(g+i)%len(durations)]})
	})
	stop()

	count, sum, cumulative := histogram()
	per := uint64(observers * each / len(durations))
	if want := []uint64{per, 2 * per, 3 * per}; count != 4*per || !slices.Equal(cumulative, want) {
		t.Errorf("histogram: count %d, buckets %v; want %d, %v", count, cumulative, 4*per, want)
	}
	if want := float64(per) * (0.0005 + 0.005 + 0.05 + 1); math.Abs(sum-want) > 1e-9*want {
		t.Errorf("sum %v, want %v", sum, want)
	}
}

// repeat calls fn on a goroutine of its own until fn returns false or
// stop is called; stop waits for it.
func repeat(fn func() bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for fn() {
			select {
			case <-done:
				return
			default:
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// observeFrom calls observe(g, i) each times from each of observers
// goroutines g at once, and waits for them.
func observeFrom(observers, each int, observe func(g, i int)) {
	var wg sync.WaitGroup
	for g := range observers {
		wg.Go(func() {
			for i := range each {
				observe(g, i)
			}
		})
	}
	wg.Wait()
}

// TestRandomURLsAddNoSeries sends 100 requests to random addresses, names
// nothing is stored under and garbage alike, and checks that they all
// count under the fixed _unmatched series.
func TestRandomURLsAddNoSeries(t *testing.T) {
	s := newSetup(t, false)
	srv := httptest.NewServer(s.handler)
	defer srv.Close()
	rnd := rand.New(rand.NewPCG(6, 6))
	name := func() string {
		const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
		b := make([]byte, 1+rnd.IntN(20))
		for i := range b {
			b[i] = chars[rnd.IntN(len(chars))]
		}
		b[0] = 'a' + byte(rnd.IntN(26))
		return string(b)
	}
	garbage := func() string {
		b := make([]byte, 1+rnd.IntN(40))
		for i := range b {
			b[i] = byte(0x21 + rnd.IntN(0x5e))
		}
		return url.PathEscape(string(b))
	}
	methods := []string{http.MethodPost, http.MethodPost, http.MethodGet, http.MethodPut, http.MethodDelete}
	for i := range 100 {
		var target string
		switch i % 4 {
		case 0: // well formed, unknown names
			target = fmt.Sprintf("/%s/api/v1/services/%s/%s", name(), name(), name())
		case 1: // the real group and path, an unknown alias
			target = "/DEFAULT/api/v1/services/insurance/" + name()
		case 2: // garbage
			target = "/" + garbage() + "/" + garbage()
		case 3: // escaped slashes and dot segments in the names
			target = fmt.Sprintf("/%s/api/v1/services/%s%%2F%s/..", name(), name(), name())
		}
		req, err := http.NewRequest(methods[rnd.IntN(len(methods))], srv.URL+target, strings.NewReader(`{"data":[{"x":1}]}`))
		if err != nil {
			t.Fatalf("request %d (%s): %v", i, target, err)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d, want 404 or 405", req.Method, target, res.StatusCode)
		}
	}

	const unmatched = "alias=_unmatched,group=_unmatched,model=,path=_unmatched"
	want := map[string][]string{
		"scorehub_scoring_requests_total":           {unmatched + ",status=404,version=", unmatched + ",status=405,version="},
		"scorehub_scoring_request_duration_seconds": {unmatched + ",version="},
		"scorehub_scoring_rows_total":               nil,
	}
	for name, w := range want {
		if diff := cmp.Diff(w, series(t, s.prom, name)); diff != "" {
			t.Errorf("%s series (-want +got):\n%s", name, diff)
		}
	}
	if n := sum(t, s.prom, "scorehub_scoring_requests_total"); n != 100 {
		t.Errorf("unmatched requests counted %v, want 100", n)
	}
}

// sum adds up the values of every counter series of the family name.
func sum(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// TestStatusLabelIsBounded checks the status label of codes a process or an
// Authorize function may choose: the codes the handler answers with stay
// exact, any other becomes its class.
func TestStatusLabelIsBounded(t *testing.T) {
	s := newSetup(t, false)
	ep := process.EndpointRef{Group: registry.DefaultGroup, Path: "insurance", Alias: "score"}
	for _, code := range []int{100, 200, 201, 204, 302, 400, 401, 403, 404, 405, 413, 415, 418, 422, 429, 499, 500, 502, 503, 504, 99, 600} {
		s.m.ObserveRequest(scoring.Observation{Endpoint: ep, Status: code, Rows: 1, Duration: time.Millisecond})
	}
	want := `
# HELP scorehub_scoring_requests_total Scoring requests answered, by endpoint and HTTP status; requests that resolve to no endpoint count under "_unmatched".
# TYPE scorehub_scoring_requests_total counter
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="1xx",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="200",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="2xx",version=""} 2
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="3xx",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="400",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="401",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="403",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="404",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="405",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="413",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="415",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="4xx",version=""} 3
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="499",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="500",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="503",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="504",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="5xx",version=""} 1
scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="insurance",status="other",version=""} 2
# HELP scorehub_scoring_rows_total Input rows of successful scoring requests.
# TYPE scorehub_scoring_rows_total counter
scorehub_scoring_rows_total{alias="score",group="DEFAULT",model="",path="insurance",version=""} 1
`
	if err := testutil.GatherAndCompare(s.prom, strings.NewReader(want), "scorehub_scoring_requests_total", "scorehub_scoring_rows_total"); err != nil {
		t.Error(err)
	}
}

// withBuckets returns metrics with the latency buckets given, on a
// Prometheus registry of their own, over a fresh setup.
func withBuckets(t *testing.T, buckets ...float64) (*prometheus.Registry, *metrics.Metrics) {
	t.Helper()
	s := newSetup(t, false)
	prom := prometheus.NewRegistry()
	m, err := metrics.New(metrics.Config{Registerer: prom, Queues: s.handler.Queues(), Buckets: buckets})
	if err != nil {
		t.Fatal(err)
	}
	return prom, m
}

// TestLatencyHistogram checks where observed durations land, with the
// buckets a host chose.
func TestLatencyHistogram(t *testing.T) {
	const head = `
# HELP scorehub_scoring_request_duration_seconds Time from a scoring request's arrival to its answer written, queue wait included.
# TYPE scorehub_scoring_request_duration_seconds histogram
`
	for _, c := range []struct {
		name      string
		buckets   []float64
		durations []time.Duration
		want      string
	}{
		{"durations", []float64{0.01, 0.1, 1}, []time.Duration{5 * time.Millisecond, 50 * time.Millisecond, 60 * time.Millisecond, 3 * time.Second}, `
scorehub_scoring_request_duration_seconds_bucket{alias="score",group="DEFAULT",model="",path="insurance",version="",le="0.01"} 1
scorehub_scoring_request_duration_seconds_bucket{alias="score",group="DEFAULT",model="",path="insurance",version="",le="0.1"} 3
scorehub_scoring_request_duration_seconds_bucket{alias="score",group="DEFAULT",model="",path="insurance",version="",le="1"} 3
scorehub_scoring_request_duration_seconds_bucket{alias="score",group="DEFAULT",model="",path="insurance",version="",le="+Inf"} 4
scorehub_scoring_request_duration_seconds_sum{alias="score",group="DEFAULT",model="",path="insurance",version=""} 3.115
scorehub_scoring_request_duration_seconds_count{alias="score",group="DEFAULT",model="",path="insurance",version=""} 4
`},
		// Only a host calling ObserveRequest itself can pass a negative
		// duration; it counts as Prometheus counts one: in the first
		// bucket, and taken off the sum.
		{"negative", []float64{0.01, 0.1}, []time.Duration{-time.Second, 3 * time.Second}, `
scorehub_scoring_request_duration_seconds_bucket{alias="score",group="DEFAULT",model="",path="insurance",version="",le="0.01"} 1
scorehub_scoring_request_duration_seconds_bucket{alias="score",group="DEFAULT",model="",path="insurance",version="",le="0.1"} 1
scorehub_scoring_request_duration_seconds_bucket{alias="score",group="DEFAULT",model="",path="insurance",version="",le="+Inf"} 2
scorehub_scoring_request_duration_seconds_sum{alias="score",group="DEFAULT",model="",path="insurance",version=""} 2
scorehub_scoring_request_duration_seconds_count{alias="score",group="DEFAULT",model="",path="insurance",version=""} 2
`},
	} {
		t.Run(c.name, func(t *testing.T) {
			prom, m := withBuckets(t, c.buckets...)
			ep := process.EndpointRef{Group: registry.DefaultGroup, Path: "insurance", Alias: "score"}
			for _, d := range c.durations {
				m.ObserveRequest(scoring.Observation{Endpoint: ep, Status: 200, Rows: 1, Duration: d})
			}
			if err := testutil.GatherAndCompare(prom, strings.NewReader(head+c.want[1:]), "scorehub_scoring_request_duration_seconds"); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestSeriesCarryCreatedTimes checks that every scoring series tells when
// it was created, as Prometheus's own counters and histograms do: an
// OpenMetrics or protobuf scrape reads it to tell a reset from a new series.
func TestSeriesCarryCreatedTimes(t *testing.T) {
	prom, m := withBuckets(t, 0.01, 0.1)
	ep := process.EndpointRef{Group: registry.DefaultGroup, Path: "insurance", Alias: "score"}
	before := time.Now()
	m.ObserveRequest(scoring.Observation{Endpoint: ep, Status: 200, Rows: 3, Duration: time.Millisecond})
	m.ObserveRequest(scoring.Observation{Endpoint: ep, Status: 503, Rows: 0, Duration: time.Millisecond})
	after := time.Now()
	mfs, err := prom.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "scorehub_scoring_") {
			continue
		}
		for _, series := range mf.GetMetric() {
			var ct time.Time
			switch {
			case series.GetCounter() != nil:
				ct = series.GetCounter().GetCreatedTimestamp().AsTime()
			case series.GetHistogram() != nil:
				ct = series.GetHistogram().GetCreatedTimestamp().AsTime()
			}
			if ct.Before(before.Truncate(time.Microsecond)) || ct.After(after) {
				t.Errorf("%s %v: created %v, want between %v and %v", mf.GetName(), series.GetLabel(), ct, before, after)
			}
			seen++
		}
	}
	if seen != 4 { // two statuses, the histogram, the rows
		t.Errorf("%d scoring series, want 4", seen)
	}
}

// TestQueueFigures checks the queue gauges and counters a scrape reads,
// for the DEFAULT queue and one the operator added.
func TestQueueFigures(t *testing.T) {
	s := newSetup(t, false)
	ctx := context.Background()
	if _, err := s.reg.PutQueue(ctx, registry.Queue{Name: "batch", MaxConcurrent: 1, MaxWaiting: 0}); err != nil {
		t.Fatal(err)
	}
	q := s.handler.Queues()
	for _, fail := range []bool{false, false, true} {
		q.Run(ctx, registry.DefaultQueue, func(context.Context) error {
			if fail {
				return errors.New("failed")
			}
			return nil
		})
	}
	// batch holds its one slot while a second execution is refused and a
	// third gives up.
	release := make(chan struct{})
	held := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- q.Run(ctx, "batch", func(context.Context) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	if err := q.Run(ctx, "batch", func(context.Context) error { return nil }); !errors.Is(err, scoring.ErrQueueFull) {
		t.Fatalf("second batch execution: %v, want ErrQueueFull", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	q.Run(cancelled, "batch", func(context.Context) error { return nil })

	want := `
# HELP scorehub_queue_executions_total Executions ended on the queue, by outcome: completed, failed, rejected (waiting list full), timed_out, cancelled.
# TYPE scorehub_queue_executions_total counter
scorehub_queue_executions_total{outcome="cancelled",queue="DEFAULT"} 0
scorehub_queue_executions_total{outcome="completed",queue="DEFAULT"} 2
scorehub_queue_executions_total{outcome="failed",queue="DEFAULT"} 1
scorehub_queue_executions_total{outcome="rejected",queue="DEFAULT"} 0
scorehub_queue_executions_total{outcome="timed_out",queue="DEFAULT"} 0
scorehub_queue_executions_total{outcome="cancelled",queue="batch"} CANCELLED
scorehub_queue_executions_total{outcome="completed",queue="batch"} 0
scorehub_queue_executions_total{outcome="failed",queue="batch"} 0
scorehub_queue_executions_total{outcome="rejected",queue="batch"} REJECTED
scorehub_queue_executions_total{outcome="timed_out",queue="batch"} 0
# HELP scorehub_queue_max_concurrent Slots of the queue: executions it runs at once.
# TYPE scorehub_queue_max_concurrent gauge
scorehub_queue_max_concurrent{queue="DEFAULT"} 16
scorehub_queue_max_concurrent{queue="batch"} 1
# HELP scorehub_queue_max_waiting Executions the queue lets wait before it rejects more.
# TYPE scorehub_queue_max_waiting gauge
scorehub_queue_max_waiting{queue="DEFAULT"} 1000
scorehub_queue_max_waiting{queue="batch"} 0
# HELP scorehub_queue_running Executions holding a slot of the queue.
# TYPE scorehub_queue_running gauge
scorehub_queue_running{queue="DEFAULT"} 0
scorehub_queue_running{queue="batch"} 1
# HELP scorehub_queue_waiting Executions waiting for a slot of the queue.
# TYPE scorehub_queue_waiting gauge
scorehub_queue_waiting{queue="DEFAULT"} 0
scorehub_queue_waiting{queue="batch"} 0
`
	st, _ := q.Stat("batch")
	want = strings.NewReplacer("CANCELLED", fmt.Sprint(st.Cancelled), "REJECTED", fmt.Sprint(st.Rejected)).Replace(want)
	if st.Rejected+st.Cancelled != 2 {
		t.Fatalf("batch stats %+v: want the two refused executions counted", st)
	}
	if err := testutil.GatherAndCompare(s.prom, strings.NewReader(want),
		"scorehub_queue_executions_total", "scorehub_queue_max_concurrent", "scorehub_queue_max_waiting",
		"scorehub_queue_running", "scorehub_queue_waiting"); err != nil {
		t.Error(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := series(t, s.prom, "scorehub_queue_running"); !cmp.Equal(got, []string{"queue=DEFAULT", "queue=batch"}) {
		t.Errorf("running series %v", got)
	}
}

// TestJobsByState submits jobs and reads the gauge per state.
// The jobs run in a synctest bubble, so that the test can wait until every
// goroutine is idle rather than poll.
func TestJobsByState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSetup(t, true)
		ctx := context.Background()
		for _, body := range []string{`{"data":[{"x":1}]}`, `{"data":[{"x":2},{"x":3}]}`, `{"data":[{"z":1}]}`} {
			rows, err := scoring.Decode(strings.NewReader(body), s.jobs.Limits())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.jobs.Submit(ctx, scoring.JobSpec{Process: "double", Input: rows, Caller: scoring.Caller{Subject: "admin", Admin: true}}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if c, err := s.jobs.Counts(ctx); err != nil || c[jobs.StateFinished]+c[jobs.StateError] != 3 {
			t.Fatalf("counts %v, %v once every job ran; want the three ended", c, err)
		}
		want := `
	# HELP scorehub_jobs Execution jobs kept, by state.
	# TYPE scorehub_jobs gauge
	scorehub_jobs{state="ERROR"} 1
	scorehub_jobs{state="FINISHED"} 2
	scorehub_jobs{state="PENDING"} 0
	scorehub_jobs{state="RUNNING"} 0
	scorehub_jobs{state="STOPPED"} 0
	scorehub_jobs{state="TIMED_OUT"} 0
	`
		if err := testutil.GatherAndCompare(s.prom, strings.NewReader(want), "scorehub_jobs"); err != nil {
			t.Error(err)
		}

		// A job store that cannot be read fails the scrape visibly rather than
		// reporting zero jobs.
		s.jobDB.Close()
		if _, err := s.prom.Gather(); err == nil || !strings.Contains(err.Error(), "metrics: count jobs") {
			t.Errorf("Gather with the job store closed: %v, want the count error", err)
		}
	})
}

// TestTokenOutcomes checks the token counters and that labels a caller
// invents are folded into the fixed set.
func TestTokenOutcomes(t *testing.T) {
	s := newSetup(t, false)
	s.m.ObserveToken(tokens.PathTokenService, tokens.OutcomeIssued)
	s.m.ObserveToken(tokens.PathTokenService, tokens.OutcomeIssued)
	s.m.ObserveToken(tokens.PathTokenService, tokens.OutcomeBadCredentials)
	s.m.ObserveToken(tokens.PathExchange, tokens.OutcomeInvalidToken)
	s.m.ObserveToken(tokens.PathExchange, tokens.OutcomeRateLimited)
	s.m.ObserveToken("/api/rest/whatever", "exploded")
	want := `
# HELP scorehub_token_requests_total Requests to the token routes, by route and outcome.
# TYPE scorehub_token_requests_total counter
scorehub_token_requests_total{outcome="bad_credentials",route="/api/rest/tokenservice"} 1
scorehub_token_requests_total{outcome="error",route="other"} 1
scorehub_token_requests_total{outcome="invalid_token",route="/api/rest/saml/tokenservice"} 1
scorehub_token_requests_total{outcome="issued",route="/api/rest/tokenservice"} 2
scorehub_token_requests_total{outcome="rate_limited",route="/api/rest/saml/tokenservice"} 1
`
	if err := testutil.GatherAndCompare(s.prom, strings.NewReader(want), "scorehub_token_requests_total"); err != nil {
		t.Error(err)
	}
}

// TestAuthOutcomes checks the credential-check counters and that labels a
// caller invents are folded into the fixed set.
func TestAuthOutcomes(t *testing.T) {
	s := newSetup(t, false)
	var _ middleware.AuthObserver = s.m
	s.m.ObserveAuth("basic", middleware.AuthAccepted)
	s.m.ObserveAuth("basic", middleware.AuthAccepted)
	s.m.ObserveAuth("apitoken", middleware.AuthRevoked)
	s.m.ObserveAuth("bearer", middleware.AuthExpired)
	s.m.ObserveAuth("none", middleware.AuthMissing)
	s.m.ObserveAuth("Negotiate", "exploded")
	want := `
# HELP scorehub_auth_checks_total Credential checks of protected web API groups and job routes, by kind of credential presented and outcome.
# TYPE scorehub_auth_checks_total counter
scorehub_auth_checks_total{outcome="accepted",scheme="basic"} 2
scorehub_auth_checks_total{outcome="error",scheme="other"} 1
scorehub_auth_checks_total{outcome="expired",scheme="bearer"} 1
scorehub_auth_checks_total{outcome="missing",scheme="none"} 1
scorehub_auth_checks_total{outcome="revoked",scheme="apitoken"} 1
`
	if err := testutil.GatherAndCompare(s.prom, strings.NewReader(want), "scorehub_auth_checks_total"); err != nil {
		t.Error(err)
	}
}

// TestMetricNamesPassLint runs promlint over everything registered, so the
// names, units and help texts follow Prometheus conventions.
func TestMetricNamesPassLint(t *testing.T) {
	s := newSetup(t, true)
	s.m.ObserveRequest(scoring.Observation{Endpoint: scoring.Unmatched(), Status: 404, Rows: 0, Duration: time.Millisecond})
	s.m.ObserveRequest(scoring.Observation{Endpoint: process.EndpointRef{Group: registry.DefaultGroup, Path: "insurance", Alias: "score"}, Status: 200, Rows: 3, Duration: time.Millisecond})
	s.m.ObserveToken(tokens.PathTokenService, tokens.OutcomeIssued)
	s.m.ObserveAuth("basic", middleware.AuthAccepted)
	problems, err := testutil.GatherAndLint(s.prom)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	mfs, err := s.prom.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 14 {
		t.Errorf("%d metric families, want the 14 the package documents", len(mfs))
	}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "scorehub_") {
			t.Errorf("%s lacks the scorehub_ prefix", mf.GetName())
		}
	}
}
