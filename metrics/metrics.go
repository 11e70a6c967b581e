package metrics

import (
	"errors"
	"fmt"
	"slices"
	"sync"
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

	// mu orders making series against pruning them: makers hold it for
	// reading, prune for writing, so that every series in the vectors
	// belongs to an entry of endpoints that prune will see. The hot path,
	// a series already made, takes no lock.
	mu        sync.RWMutex
	endpoints sync.Map // registry.EndpointRef -> *endpointSeries
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
	s.requests(statusLabel(status)).Inc()
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
	byStatus sync.Map // status label -> prometheus.Counter

	rowsOnce sync.Once // made at the first success, so that an endpoint without one exports no rows series
	rows     prometheus.Counter

	gone bool // pruned: the endpoint left the registry; guarded by m.mu
}

// series returns ep's series. They are kept while ep is in the registry
// (or is [scoring.Unmatched]); a scrape prunes those of endpoints deleted
// since, so that creating and deleting endpoints does not grow the
// metrics without bound.
func (m *Metrics) series(ep registry.EndpointRef) *endpointSeries {
	if s, ok := m.endpoints.Load(ep); ok {
		return s.(*endpointSeries)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := &endpointSeries{
		ep:       ep,
		m:        m,
		duration: m.duration.WithLabelValues(ep.Group, ep.Path, ep.Alias),
	}
	actual, _ := m.endpoints.LoadOrStore(ep, s)
	return actual.(*endpointSeries)
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

// requests returns the counter of requests answered with the status label.
func (s *endpointSeries) requests(status string) prometheus.Counter {
	if c, ok := s.byStatus.Load(status); ok {
		return c.(prometheus.Counter)
	}
	s.m.mu.RLock()
	defer s.m.mu.RUnlock()
	if s.gone {
		return discard
	}
	c, _ := s.byStatus.LoadOrStore(status, s.m.requests.WithLabelValues(s.ep.Group, s.ep.Path, s.ep.Alias, status))
	return c.(prometheus.Counter)
}

// prune removes the series of endpoints no longer in the registry. It
// runs at scrape time, off the scoring path.
func (m *Metrics) prune() {
	st := m.registry.Snapshot().State()
	unmatched := scoring.Unmatched()
	var stale []*endpointSeries
	m.endpoints.Range(func(k, v any) bool {
		ep := k.(registry.EndpointRef)
		if ep != unmatched && !exists(st, ep) {
			stale = append(stale, v.(*endpointSeries))
		}
		return true
	})
	if len(stale) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range stale {
		s.gone = true
		m.endpoints.Delete(s.ep)
		labels := prometheus.Labels{"group": s.ep.Group, "path": s.ep.Path, "alias": s.ep.Alias}
		m.requests.DeletePartialMatch(labels)
		m.duration.Delete(labels)
		m.rows.Delete(labels)
	}
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

// statusLabel is the status label of code: the code itself for those the
// scoring handler answers with, its class for any other, so the label's
// values stay a small fixed set whatever a process returns.
func statusLabel(code int) string {
	switch code {
	case 200:
		return "200"
	case 400:
		return "400"
	case 401:
		return "401"
	case 403:
		return "403"
	case 404:
		return "404"
	case 405:
		return "405"
	case 413:
		return "413"
	case 415:
		return "415"
	case 499:
		return "499"
	case 500:
		return "500"
	case 503:
		return "503"
	case 504:
		return "504"
	}
	switch code / 100 {
	case 1:
		return "1xx"
	case 2:
		return "2xx"
	case 3:
		return "3xx"
	case 4:
		return "4xx"
	case 5:
		return "5xx"
	}
	return "other"
}
