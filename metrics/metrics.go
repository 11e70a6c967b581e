package metrics

import (
	"errors"
	"fmt"
	"github.com/scorehub/scorehub/registry/outcomes"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
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

	// Buckets are the upper bounds, in seconds, of the latency histogram,
	// increasing. nil means DefaultBuckets().
	Buckets []float64

	// Outcomes, when set, is read at every scrape for the live
	// performance of the models of endpoints that keep predictions, over
	// the outcomes fed back in the last PerformanceWindow.
	Outcomes outcomes.Store
}

// PerformanceWindow is the window of the live performance series.
const PerformanceWindow = time.Hour

// Metrics records scorehub's figures on the Registerer it was built with.
// Pass it as scoring.Config.Observer and as tokens.ServiceConfig.Observer.
// It is safe for concurrent use.
type Metrics struct {
	// The scoring series are counted by endpointSeries, in shards, and
	// described by these.
	requests, duration, rows *prometheus.Desc
	buckets                  []float64

	tokens *prometheus.CounterVec
	auth   *prometheus.CounterVec

	reg        prometheus.Registerer
	collectors []prometheus.Collector
	registry   *registry.Registry

	// mu orders making an endpoint's series against pruning them. The hot
	// path, a series already made, takes no lock.
	mu sync.Mutex
	// endpoints maps each endpoint to its series. It is replaced, never
	// changed, under mu: a lookup is a plain map read, without the
	// hashing of an interface key that a sync.Map costs.
	endpoints atomic.Pointer[map[seriesKey]*endpointSeries]
}

var (
	_ scoring.Observer = (*Metrics)(nil)
	_ tokens.Observer  = (*Metrics)(nil)
)

// New registers scorehub's metrics on cfg.Registerer. It fails when
// Registerer or Queues is missing, Buckets are not increasing, or a metric
// of the same name is registered already; then it registers nothing. The
// job figures are registered apart, with [JobsCollector].
func New(cfg Config) (*Metrics, error) {
	switch {
	case cfg.Registerer == nil:
		return nil, errors.New("metrics: Config.Registerer is required")
	case cfg.Queues == nil:
		return nil, errors.New("metrics: Config.Queues is required")
	}
	buckets := cfg.Buckets
	if buckets == nil {
		buckets = DefaultBuckets()
	}
	if len(buckets) == 0 || !slices.IsSorted(buckets) || len(slices.Compact(slices.Clone(buckets))) != len(buckets) {
		return nil, fmt.Errorf("metrics: Config.Buckets %v are not increasing", buckets)
	}
	endpoint := []string{"group", "path", "alias", "model", "version"}
	m := &Metrics{
		requests: prometheus.NewDesc(prometheus.BuildFQName(namespace, "scoring", "requests_total"),
			`Scoring requests answered, by endpoint and HTTP status; requests that resolve to no endpoint count under "_unmatched".`,
			append(endpoint, "status"), nil),
		duration: prometheus.NewDesc(prometheus.BuildFQName(namespace, "scoring", "request_duration_seconds"),
			"Time from a scoring request's arrival to its answer written, queue wait included.", endpoint, nil),
		rows: prometheus.NewDesc(prometheus.BuildFQName(namespace, "scoring", "rows_total"),
			"Input rows of successful scoring requests.", endpoint, nil),
		buckets: slices.Clone(buckets),
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
	m.collectors = []prometheus.Collector{&endpointCollector{m}, m.tokens, m.auth, newQueueCollector(cfg.Queues), newChallengerCollector(cfg.Queues), newDriftCollector(cfg.Queues),
		newLogCollector(cfg.Queues)}
	if cfg.Outcomes != nil {
		m.collectors = append(m.collectors, newPerformanceCollector(cfg.Queues.Registry(), cfg.Outcomes))
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
// [scoring.Observer]. Rows are counted for status 200 only. The series of a
// model endpoint carry the model version that answered (labels model and
// version; empty for a catalog process), so that a rollout or a rollback
// shows on a dashboard.
func (m *Metrics) ObserveRequest(o scoring.Observation) {
	status, rows, d := o.Status, o.Rows, o.Duration
	key := seriesKey{ep: o.Endpoint, model: o.Model, version: o.Version}
	if key.model == "" || key.version <= 0 {
		key.model, key.version = "", 0
	}
	s := m.series(key)
	i := statusIndex(status)
	if s.statuses.Load()&(1<<i) == 0 {
		// The series is created: its time first, so that a scrape that
		// finds the series finds the time.
		s.statusCreated[i].CompareAndSwap(0, time.Now().UnixNano())
		s.statuses.Or(1 << i)
	}
	sh := s.shard(len(m.buckets))
	sh.requests[i].Add(1)
	secs := d.Seconds()
	// The count goes up before the bucket, and a scrape reads the buckets
	// before the count, so that it never finds more in the buckets than
	// in all.
	sh.count.Add(1)
	if b, _ := slices.BinarySearch(m.buckets, secs); b < len(sh.buckets) {
		sh.buckets[b].Add(1)
	}
	sh.nanos.Add(uint64(d)) // a negative one in two's complement, as the sum reads it
	if status == 200 && rows > 0 {
		sh.rows.Add(uint64(rows))
		if !s.scored.Load() {
			s.rowsCreated.CompareAndSwap(0, time.Now().UnixNano())
			s.scored.Store(true)
		}
	}
	s.pool.Put(sh)
}

// endpointSeries holds one endpoint's figures. They are counted in
// shards, about one per core, so that requests answered on different
// cores do not take turns at the same cache lines, as a single counter
// makes them do at every request; a scrape adds the shards up.
type endpointSeries struct {
	key     seriesKey
	version string // key.version as a label; "" for none
	// When each series was created, as the Prometheus vectors record it:
	// the histogram with the endpoint's first request, a status's
	// counter with the first answer of that status, the rows with the
	// first success that had rows (Unix nanoseconds).
	created       time.Time
	statusCreated [len(statusLabels)]atomic.Int64
	rowsCreated   atomic.Int64
	// pool hands a request the shard last used on its core: a
	// sync.Pool's Get and Put keep to the core's own list.
	pool     sync.Pool
	statuses atomic.Uint32 // bit i: a request was answered with statusLabels[i]
	scored   atomic.Bool   // a successful request had rows, so the rows series is exported

	mu     sync.Mutex
	shards []*shard // every shard made, at most maxShards
	next   int      // the shard to hand out next when the pool has none and all are made
}

// shard is a share of an endpoint's figures. Any request may count into
// any shard, so every field is atomic; in the steady state each core has
// its own.
type shard struct {
	requests [len(statusLabels)]atomic.Uint64 // by statusIndex
	rows     atomic.Uint64
	count    atomic.Uint64
	// nanos sums the durations in nanoseconds, as an int64 in two's
	// complement: exact whatever the order the shards are added up in,
	// and wrapping only after 292 years.
	nanos   atomic.Uint64
	buckets []atomic.Uint64 // observations by bucket, not cumulative; past the last one only in count
	_       [64]byte        // so that two shards share no cache line
}

// maxShards bounds the shards of an endpoint: cores beyond it share.
func maxShards() int { return min(runtime.GOMAXPROCS(0), 8) }

// shard returns a shard to count into, to be handed back to s.pool; nb is
// the number of buckets.
func (s *endpointSeries) shard(nb int) *shard {
	if sh, _ := s.pool.Get().(*shard); sh != nil {
		return sh
	}
	// The pool is empty on a core the first time it counts, and after
	// the collector has emptied it: make a shard while there are fewer
	// than the bound, and then share the ones made, in turn, rather than
	// grow without end.
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.shards) < maxShards() {
		sh := &shard{buckets: make([]atomic.Uint64, nb)}
		s.shards = append(s.shards, sh)
		return sh
	}
	sh := s.shards[s.next%len(s.shards)]
	s.next++
	return sh
}

// collect sends s's series to ch.
func (s *endpointSeries) collect(m *Metrics, ch chan<- prometheus.Metric) {
	s.mu.Lock()
	shards := slices.Clone(s.shards)
	s.mu.Unlock()
	var requests [len(statusLabels)]uint64
	var rows, count, nanos uint64
	buckets := make([]uint64, len(m.buckets))
	for _, sh := range shards {
		for i := range requests {
			requests[i] += sh.requests[i].Load()
		}
		rows += sh.rows.Load()
		nanos += sh.nanos.Load()
		for i := range buckets {
			buckets[i] += sh.buckets[i].Load()
		}
	}
	for _, sh := range shards { // after the buckets: see ObserveRequest
		count += sh.count.Load()
	}
	statuses := s.statuses.Load()
	for i, n := range requests {
		if statuses&(1<<i) != 0 {
			ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(m.requests, prometheus.CounterValue, float64(n),
				time.Unix(0, s.statusCreated[i].Load()), s.labels(statusLabels[i])...)
		}
	}
	if statuses != 0 {
		cumulative := make(map[float64]uint64, len(m.buckets))
		var below uint64
		for i, ub := range m.buckets {
			below += buckets[i]
			cumulative[ub] = below
		}
		sum := float64(int64(nanos)) / float64(time.Second)
		ch <- prometheus.MustNewConstHistogramWithCreatedTimestamp(m.duration, count, sum, cumulative, s.created, s.labels()...)
	}
	if s.scored.Load() {
		ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(m.rows, prometheus.CounterValue, float64(rows),
			time.Unix(0, s.rowsCreated.Load()), s.labels()...)
	}
}

// labels returns the series' label values, then more.
func (s *endpointSeries) labels(more ...string) []string {
	ep := s.key.ep
	return append([]string{ep.Group, ep.Path, ep.Alias, s.key.model, s.version}, more...)
}

// seriesKey names an endpoint's series: the endpoint, and for a model
// endpoint the model version that answered.
type seriesKey struct {
	ep      process.EndpointRef
	model   string
	version int
}

// series returns key's series. They are kept while the endpoint is in the
// registry (or is [scoring.Unmatched]) and, for a model version, while the
// endpoint names that model and the version exists; a scrape prunes the
// others, so that creating and deleting endpoints and versions does not
// grow the metrics without bound.
func (m *Metrics) series(key seriesKey) *endpointSeries {
	if s := m.endpointMap()[key]; s != nil {
		return s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.endpointMap()
	if s := old[key]; s != nil {
		return s
	}
	s := &endpointSeries{key: key, created: time.Now()}
	if key.version > 0 {
		s.version = strconv.Itoa(key.version)
	}
	next := make(map[seriesKey]*endpointSeries, len(old)+1)
	maps.Copy(next, old)
	next[key] = s
	m.endpoints.Store(&next)
	return s
}

// endpointMap is the current map of endpoints to their series; the caller
// must not change it.
func (m *Metrics) endpointMap() map[seriesKey]*endpointSeries {
	if p := m.endpoints.Load(); p != nil {
		return *p
	}
	return nil
}

// prune removes the series of endpoints no longer in the registry. It
// runs at scrape time, off the scoring path. A request answered by an
// endpoint as it is pruned counts into series no scrape reads again.
func (m *Metrics) prune() {
	unmatched := scoring.Unmatched()
	staleIn := func(st *registry.State) func(seriesKey) bool {
		return func(k seriesKey) bool { return k.ep != unmatched && !exists(st, k) }
	}
	if !anyKey(m.endpointMap(), staleIn(m.registry.Snapshot().State())) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// The registry as it is now, with no series being made: an endpoint
	// created since the look above is not taken for a deleted one.
	stale := staleIn(m.registry.Snapshot().State())
	kept := make(map[seriesKey]*endpointSeries)
	for k, s := range m.endpointMap() {
		if !stale(k) {
			kept[k] = s
		}
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

// exists reports whether st holds the endpoint of k and, for a model
// version, whether the endpoint names that model and the version exists.
func exists(st *registry.State, k seriesKey) bool {
	d, ok := st.Deployment(k.ep.Group, k.ep.Path)
	if !ok {
		return false
	}
	e, ok := d.Endpoint(k.ep.Alias)
	if !ok || k.model == "" {
		return ok
	}
	ref, err := registry.ParseModelRef(e.Model)
	if err != nil || ref.Model != k.model {
		return false
	}
	m, ok := st.Model(k.model)
	if !ok {
		return false
	}
	_, ok = m.Version(k.version)
	return ok
}

// endpointCollector collects the per-endpoint series after pruning those
// of deleted endpoints.
type endpointCollector struct{ m *Metrics }

func (c *endpointCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.m.requests
	ch <- c.m.duration
	ch <- c.m.rows
}

func (c *endpointCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.prune()
	for _, s := range c.m.endpointMap() {
		s.collect(c.m, ch)
	}
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
