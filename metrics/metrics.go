package metrics

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/tokens"
)

// namespace prefixes every metric name.
const namespace = "scorehub"

// DefaultBuckets returns the latency buckets, in seconds, used when
// [Config.Buckets] is nil: 0.5 ms to 10 s, the default execution timeout.
func DefaultBuckets() []float64 {
	return []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
}

// Config configures [New].
type Config struct {
	// Registerer is where the metrics are registered, typically a
	// prometheus.NewRegistry() the host serves with promhttp.HandlerFor.
	// Required: scorehub registers nothing on the global default registry
	// unless the host passes prometheus.DefaultRegisterer here.
	Registerer prometheus.Registerer

	// Queues is read at every scrape for the queue figures. Required; give
	// the Queues of the scoring handler (scoring.Handler.Queues).
	Queues *scoring.Queues

	// Jobs is read at every scrape for the number of jobs in each state.
	// nil means no job figures.
	Jobs *scoring.Jobs

	// JobsTimeout bounds reading the job counts at a scrape. Zero means 5 s,
	// within Prometheus's default scrape timeout.
	JobsTimeout time.Duration

	// Buckets are the upper bounds, in seconds, of the latency histogram,
	// increasing. nil means DefaultBuckets().
	Buckets []float64
}

// Metrics records scorehub's figures on the Registerer it was built with.
// Pass it as scoring.Config.Observer and as tokens.ServiceConfig.Observer.
// It is safe for concurrent use.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	rows     *prometheus.CounterVec
	tokens   *prometheus.CounterVec
	auth     *prometheus.CounterVec

	reg        prometheus.Registerer
	collectors []prometheus.Collector
	registry   *registry.Registry

	// mu orders making series against pruning them, so that every series
	// in the vectors belongs to an entry of endpoints that prune will see:
	// making an endpoint's series and pruning hold it for writing, making
	// one of its status or rows series for reading. The hot path, a
	// series already made, takes no lock.
	mu sync.RWMutex
	// endpoints maps each endpoint to its series. It is replaced, never
	// changed, under mu: a lookup is a plain map read, without the
	// hashing of an interface key that a sync.Map costs.
	endpoints atomic.Pointer[map[registry.EndpointRef]*endpointSeries]
}

var (
	_ scoring.Observer = (*Metrics)(nil)
	_ tokens.Observer  = (*Metrics)(nil)
)

// New registers scorehub's metrics on cfg.Registerer. It fails when
// Registerer or Queues is missing, JobsTimeout is negative, Buckets are not
// increasing, or a metric of the same name is registered already; then it
// registers nothing.
func New(cfg Config) (*Metrics, error) {
	switch {
	case cfg.Registerer == nil:
		return nil, errors.New("metrics: Config.Registerer is required")
	case cfg.Queues == nil:
		return nil, errors.New("metrics: Config.Queues is required")
	case cfg.JobsTimeout < 0:
		return nil, fmt.Errorf("metrics: Config.JobsTimeout %v is negative", cfg.JobsTimeout)
	}
	buckets := cfg.Buckets
	if buckets == nil {
		buckets = DefaultBuckets()
	}
	if len(buckets) == 0 || !slices.IsSorted(buckets) || len(slices.Compact(slices.Clone(buckets))) != len(buckets) {
		return nil, fmt.Errorf("metrics: Config.Buckets %v are not increasing", buckets)
	}
	endpoint := []string{"group", "path", "alias"}
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "scoring", Name: "requests_total",
			Help: `Scoring requests answered, by endpoint and HTTP status; requests that resolve to no endpoint count under "_unmatched".`,
		}, append(endpoint, "status")),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "scoring", Name: "request_duration_seconds",
			Help:    "Time from a scoring request's arrival to its answer written, queue wait included.",
			Buckets: buckets,
		}, endpoint),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "scoring", Name: "rows_total",
			Help: "Input rows of successful scoring requests.",
		}, endpoint),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "token", Name: "requests_total",
			Help: "Requests to the token routes, by route and outcome.",
		}, []string{"route", "outcome"}),
		auth: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "auth", Name: "checks_total",
			Help: "Credential checks of protected web API groups and job routes, by kind of credential presented and outcome.",
		}, []string{"scheme", "outcome"}),
		reg:      cfg.Registerer,
		registry: cfg.Queues.Registry(),
	}
	m.collectors = []prometheus.Collector{&endpointCollector{m}, m.tokens, m.auth, newQueueCollector(cfg.Queues)}
	if cfg.Jobs != nil {
		timeout := cfg.JobsTimeout
		if timeout == 0 {
			timeout = 5 * time.Second
		}
		m.collectors = append(m.collectors, newJobsCollector(cfg.Jobs, timeout))
	}
	for i, c := range m.collectors {
		if err := cfg.Registerer.Register(c); err != nil {
			for _, done := range m.collectors[:i] {
				cfg.Registerer.Unregister(done)
			}
			return nil, fmt.Errorf("metrics: register: %w", err)
		}
	}
	return m, nil
}

// Unregister removes the metrics from the Registerer, for a host that
// builds a new [Metrics] on the same one (in tests, say).
func (m *Metrics) Unregister() {
	for _, c := range m.collectors {
		m.reg.Unregister(c)
	}
}

// ObserveRequest counts one answered scoring request; it implements
// [scoring.Observer]. Rows are counted for status 200 only.
func (m *Metrics) ObserveRequest(ep registry.EndpointRef, status int, rows int, d time.Duration) {
	s := m.series(ep)
	s.requests(statusIndex(status)).Inc()
	s.duration.Observe(d.Seconds())
	if status == 200 && rows > 0 {
		s.rowsCounter().Add(float64(rows))
	}
}

// endpointSeries holds one endpoint's series, looked up once: finding a
// series by its label values hashes and checks every value, which cost
// more than the rest of the metrics together on every request.
type endpointSeries struct {
	ep       registry.EndpointRef
	m        *Metrics
	duration prometheus.Observer
	byStatus [len(statusLabels)]atomic.Pointer[statusCounter] // by statusIndex

	rowsOnce sync.Once // made at the first success, so that an endpoint without one exports no rows series
	rows     prometheus.Counter

	gone bool // pruned: the endpoint left the registry; guarded by m.mu
}

// series returns ep's series. They are kept while ep is in the registry
// (or is [scoring.Unmatched]); a scrape prunes those of endpoints deleted
// since, so that creating and deleting endpoints does not grow the
// metrics without bound.
func (m *Metrics) series(ep registry.EndpointRef) *endpointSeries {
	if s := m.endpointMap()[ep]; s != nil {
		return s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.endpointMap()
	if s := old[ep]; s != nil {
		return s
	}
	s := &endpointSeries{
		ep:       ep,
		m:        m,
		duration: m.duration.WithLabelValues(ep.Group, ep.Path, ep.Alias),
	}
	next := make(map[registry.EndpointRef]*endpointSeries, len(old)+1)
	maps.Copy(next, old)
	next[ep] = s
	m.endpoints.Store(&next)
	return s
}

// endpointMap is the current map of endpoints to their series; the caller
// must not change it.
func (m *Metrics) endpointMap() map[registry.EndpointRef]*endpointSeries {
	if p := m.endpoints.Load(); p != nil {
		return *p
	}
	return nil
}

// discard counts what an observation of a pruned series would have
// counted: the request was answered by an endpoint deleted meanwhile.
var discard = prometheus.NewCounter(prometheus.CounterOpts{Name: "discarded"})

// rowsCounter returns the counter of scored rows.
func (s *endpointSeries) rowsCounter() prometheus.Counter {
	s.rowsOnce.Do(func() {
		s.m.mu.RLock()
		defer s.m.mu.RUnlock()
		if s.gone {
			s.rows = discard
			return
		}
		s.rows = s.m.rows.WithLabelValues(s.ep.Group, s.ep.Path, s.ep.Alias)
	})
	return s.rows
}

// statusCounter is a requests series, held by pointer so that it can be
// stored atomically.
type statusCounter struct{ prometheus.Counter }

// requests returns the counter of requests answered with the status of
// index i (statusIndex).
func (s *endpointSeries) requests(i int) prometheus.Counter {
	if c := s.byStatus[i].Load(); c != nil {
		return c.Counter
	}
	s.m.mu.RLock()
	defer s.m.mu.RUnlock()
	if s.gone {
		return discard
	}
	// Two requests may both make it: the vector gives both the same series.
	c := &statusCounter{s.m.requests.WithLabelValues(s.ep.Group, s.ep.Path, s.ep.Alias, statusLabels[i])}
	if !s.byStatus[i].CompareAndSwap(nil, c) {
		c = s.byStatus[i].Load()
	}
	return c.Counter
}

// prune removes the series of endpoints no longer in the registry. It
// runs at scrape time, off the scoring path.
func (m *Metrics) prune() {
	st := m.registry.Snapshot().State()
	unmatched := scoring.Unmatched()
	stale := func(ep registry.EndpointRef) bool { return ep != unmatched && !exists(st, ep) }
	if !anyKey(m.endpointMap(), stale) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	kept := make(map[registry.EndpointRef]*endpointSeries)
	for ep, s := range m.endpointMap() {
		if !stale(ep) {
			kept[ep] = s
			continue
		}
		s.gone = true
		labels := prometheus.Labels{"group": s.ep.Group, "path": s.ep.Path, "alias": s.ep.Alias}
		m.requests.DeletePartialMatch(labels)
		m.duration.Delete(labels)
		m.rows.Delete(labels)
	}
	m.endpoints.Store(&kept)
}

// anyKey reports whether f holds for a key of m.
func anyKey[K comparable, V any](m map[K]V, f func(K) bool) bool {
	for k := range m {
		if f(k) {
			return true
		}
	}
	return false
}

// exists reports whether st holds the endpoint ep.
func exists(st *registry.State, ep registry.EndpointRef) bool {
	d, ok := st.Deployment(ep.Group, ep.Path)
	if !ok {
		return false
	}
	_, ok = d.Endpoint(ep.Alias)
	return ok
}

// endpointCollector collects the per-endpoint series after pruning those
// of deleted endpoints.
type endpointCollector struct{ m *Metrics }

func (c *endpointCollector) Describe(ch chan<- *prometheus.Desc) {
	c.m.requests.Describe(ch)
	c.m.duration.Describe(ch)
	c.m.rows.Describe(ch)
}

func (c *endpointCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.prune()
	c.m.requests.Collect(ch)
	c.m.duration.Collect(ch)
	c.m.rows.Collect(ch)
}

// ObserveToken counts one request to a token route (tokens.Observer). A
// route other than tokens.PathTokenService, tokens.PathExchange and
// tokens.PathRenew counts
// as "other", an outcome not among the tokens.Outcome constants as tokens.OutcomeError, so
// that a caller cannot grow the label set.
func (m *Metrics) ObserveToken(route, outcome string) {
	switch route {
	case tokens.PathTokenService, tokens.PathExchange, tokens.PathRenew:
	default:
		route = "other"
	}
	switch outcome {
	case tokens.OutcomeIssued, tokens.OutcomeBadCredentials, tokens.OutcomeInvalidToken, tokens.OutcomeRateLimited, tokens.OutcomeError:
	default:
		outcome = tokens.OutcomeError
	}
	m.tokens.WithLabelValues(route, outcome).Inc()
}

// ObserveAuth counts one credential check (middleware.AuthObserver). A
// scheme other than the registry.Scheme values and "none" counts as
// "other", an outcome not among the middleware.Auth constants as
// "error", so that a caller cannot grow the label set.
func (m *Metrics) ObserveAuth(scheme, outcome string) {
	switch scheme {
	case string(registry.SchemeBasic), string(registry.SchemeAPIToken), string(registry.SchemeBearer), middleware.SchemeNone:
	default:
		scheme = middleware.SchemeOther
	}
	switch outcome {
	case middleware.AuthAccepted, middleware.AuthMissing, middleware.AuthKindRefused, middleware.AuthMalformed,
		middleware.AuthBadCredentials, middleware.AuthExpired, middleware.AuthRevoked, middleware.AuthForbidden,
		middleware.AuthRateLimited, middleware.AuthError:
	default:
		outcome = middleware.AuthError
	}
	m.auth.WithLabelValues(scheme, outcome).Inc()
}

// statusLabels are the values of the status label: the codes the scoring
// handler answers with, then the classes of any other code, so that they
// stay a small fixed set whatever a process returns.
var statusLabels = [...]string{
	"200", "400", "401", "403", "404", "405", "413", "415", "499", "500", "503", "504",
	"1xx", "2xx", "3xx", "4xx", "5xx", "other",
}

// statusIndex is the index in statusLabels of code's label.
func statusIndex(code int) int {
	switch code {
	case 200:
		return 0
	case 400:
		return 1
	case 401:
		return 2
	case 403:
		return 3
	case 404:
		return 4
	case 405:
		return 5
	case 413:
		return 6
	case 415:
		return 7
	case 499:
		return 8
	case 500:
		return 9
	case 503:
		return 10
	case 504:
		return 11
	}
	if c := code / 100; c >= 1 && c <= 5 {
		return 11 + c
	}
	return len(statusLabels) - 1
}
