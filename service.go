package scorehub

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/management/ui"
	"github.com/scorehub/scorehub/metrics"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/lightgbm"
	"github.com/scorehub/scorehub/registry/onnx"
	"github.com/scorehub/scorehub/registry/pmml"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/xgboost"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// Service is the whole of scorehub as one value: scoring, the token
// service, the management API, the endpoint test pages and the metrics,
// over one registry, one set of execution queues and one jobs runner. Its
// handlers are safe for concurrent use; Shutdown and Close are called once,
// at the end.
type Service struct {
	reg    *registry.Registry
	stores *stores
	queues *scoring.Queues
	jobs   *scoring.Jobs
	auth   *auth

	handler, scoringHandler, managementHandler http.Handler
	// metrics serves the metrics; nil when they are off.
	metrics http.Handler
}

// New builds the service cfg describes, in dependency order: the stores,
// the registry over them with cfg's processes and formats, the queues, the
// metrics, the credentials, the jobs runner, the scoring handler and the
// management API. It fails, having released what it opened, when cfg is
// unsafe or contradicts itself, or a store cannot be opened. ctx bounds
// opening the stores and loading the state at start; the service outlives
// it, until Close.
func New(ctx context.Context, cfg Config) (*Service, error) {
	return build(ctx, cfg)
}

// build is New, with a named error for the deferred release of what it
// opened before failing.
func build(ctx context.Context, cfg Config) (_ *Service, err error) {
	cfg, kind, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	catalog := process.NewCatalog()
	for _, p := range cfg.Processes {
		if err := catalog.Register(p); err != nil {
			return nil, err
		}
	}
	for _, f := range cfg.Formats {
		if err := catalog.RegisterFormat(f); err != nil {
			return nil, err
		}
	}
	st, err := openStores(ctx, cfg, kind)
	if err != nil {
		return nil, err
	}
	s := &Service{stores: st}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.reg, err = registry.New(ctx, catalog, st.records); err != nil {
		return nil, err
	}
	queues, err := scoring.NewQueues(s.reg)
	if err != nil {
		return nil, err
	}
	s.queues = queues // stopped by Close, on a failure below too
	if st.outcomes != nil {
		if err := queues.KeepPredictions(st.outcomes, cfg.Logger); err != nil {
			return nil, err
		}
	}
	if st.payloads != nil {
		if err := queues.LogPayloads(st.payloads, cfg.Logger); err != nil {
			return nil, err
		}
	}
	if st.comparisons != nil && cfg.Replica != "" {
		if err := queues.ShareComparisons(st.comparisons, cfg.Replica, cfg.Logger); err != nil {
			return nil, err
		}
	}
	var (
		observer scoring.Observer
		obs      authObservers
		prom     *prometheus.Registry
	)
	if !cfg.MetricsOff {
		var m *metrics.Metrics
		if m, prom, err = newMetrics(queues, st.outcomes); err != nil {
			return nil, err
		}
		observer, obs.tokens, obs.checks = m, m, m
	}
	if s.auth, err = newAuth(ctx, cfg, kind, st, obs); err != nil {
		return nil, err
	}
	lease := cfg.JobLease
	if cfg.Replica == "" {
		lease = 0 // a store of this process alone: no claims to renew
	}
	s.jobs, err = scoring.NewJobs(scoring.JobsConfig{
		// A job naming an endpoint passes the check scoring applies.
		Authorize: s.auth.credentials.Authorize,
		Registry:  s.reg,
		Queues:    queues,
		Store:     st.jobs,
		Limits:    scoring.Limits{MaxBodyBytes: cfg.MaxJobBodyBytes, MaxRows: cfg.MaxRows, MaxColumns: cfg.MaxColumns, MaxResultCells: cfg.MaxResultCells, MaxResponseBytes: cfg.MaxResponseBytes},
		Retention: cfg.JobRetention,
		Logger:    cfg.Logger,
		Replica:   cfg.Replica,
		Lease:     lease,
		Now:       cfg.Now,
	})
	if err != nil {
		return nil, err
	}
	if prom != nil {
		if err := prom.Register(metrics.JobsCollector(s.jobs, 0)); err != nil {
			return nil, err
		}
		s.metrics = metricsHandler(prom, cfg.Logger)
	}
	scorer, err := scoring.New(scoring.Config{
		Registry:             s.reg,
		Queues:               queues,
		Authorize:            s.auth.credentials.Authorize,
		Limits:               scoring.Limits{MaxBodyBytes: cfg.MaxBodyBytes, MaxRows: cfg.MaxRows, MaxColumns: cfg.MaxColumns, MaxResultCells: cfg.MaxResultCells, MaxResponseBytes: cfg.MaxResponseBytes},
		DefaultTimeout:       cfg.Timeout,
		Logger:               cfg.Logger,
		Observer:             observer,
		Prefix:               cfg.Prefix,
		WriteProgressTimeout: cfg.WriteProgressTimeout,
	})
	if err != nil {
		return nil, err
	}
	api, err := management.New(management.Config{
		Registry:      s.reg,
		Queues:        queues,
		Jobs:          s.jobs,
		Verifier:      s.auth.verifier,
		Credentials:   s.auth.credentials,
		Accounts:      s.auth.accounts,
		TokenRoutes:   s.auth.service.Routes(),
		ScoringPrefix: cfg.Prefix,
		BaseURL:       cfg.BaseURL,
		MaxModelBytes: cfg.MaxModelBytes,
		Logger:        cfg.Logger,
		Outcomes:      st.outcomes,
		Payloads:      st.payloads,
	})
	if err != nil {
		return nil, err
	}
	// Off unless CORSOrigins names origins whose pages may call scoring.
	cors, err := middleware.CORS(middleware.CORSConfig{
		AllowedOrigins: cfg.CORSOrigins,
		AllowedMethods: []string{http.MethodPost},
		ExposedHeaders: []string{"Retry-After", "WWW-Authenticate"},
	})
	if err != nil {
		return nil, err
	}
	page, err := ui.New(ui.Config{})
	if err != nil {
		return nil, err
	}
	scoringRoutes := cors(scorer) // the handler strips cfg.Prefix itself

	mgmt := http.NewServeMux()
	mgmt.Handle("/api/rest/", s.auth.service)
	mgmt.Handle(uiPath, http.StripPrefix(strings.TrimSuffix(uiPath, "/"), page)) // the mux sends /ui to /ui/
	mgmt.Handle("/", api)
	mgmt.Handle("/{$}", root(api))

	all := http.NewServeMux()
	if s.metrics != nil && !cfg.MetricsApart {
		all.Handle("GET "+metricsPath, s.metrics)
	}
	all.Handle("/", mgmt)
	// Scoring requests, the ones that come by the thousand, go straight to
	// the scoring routes: the mux would send them there too, after a
	// pattern match that costs a twentieth of a one-row request.
	scoringPath := cfg.Prefix + "/"
	routes := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, scoringPath) {
			scoringRoutes.ServeHTTP(w, r)
			return
		}
		all.ServeHTTP(w, r)
	})
	edge := edgeMiddleware(cfg)
	s.handler = edge(routes)
	s.scoringHandler = edge(scoringRoutes)
	s.managementHandler = edge(mgmt)
	return s, nil
}

// edgeMiddleware is what every handler of the service is wrapped in, the
// access log outermost, so that every request is logged, those refused
// before any route included. A path with dot segments is a JSON 404, not
// the mux's redirect; a chunked request's connection is closed once it is
// answered, so that a request framed both ways cannot smuggle another
// behind it.
func edgeMiddleware(cfg Config) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		h = middleware.CloseChunked(middleware.CleanPath(h))
		if !cfg.AccessLogOff {
			// Written by AccessLog itself when it can be, in the text
			// logger's format, for a fraction of what a record through slog
			// costs.
			h = middleware.AccessLog(middleware.AccessLogConfig{Logger: cfg.Logger, Output: cfg.AccessLogOutput,
				Client: true, TrustedProxies: cfg.TrustedProxies, Now: cfg.Now})(h)
		}
		return h
	}
}

// Handler serves every route of the service relative to "/": scoring under
// Config.Prefix, the token service under /api/rest/, the management API
// and its OpenAPI document, the endpoint test pages under /ui/, and the
// metrics at /metrics unless they are off or apart. A host mounts it at
// the root, or under a prefix with http.StripPrefix; the links the service
// writes (scoring URLs, Location headers, the OpenAPI document's server,
// the test page's calls) then carry the prefix. Path cleaning, request
// smuggling's defences and the access log are applied.
func (s *Service) Handler() http.Handler { return s.handler }

// ScoringHandler serves the scoring endpoints alone, under Config.Prefix,
// for a host that mounts the parts apart: mount it at Prefix+"/" (or under
// a further prefix with http.StripPrefix). The edge defences and the
// access log are applied, as on [Service.Handler].
func (s *Service) ScoringHandler() http.Handler { return s.scoringHandler }

// ManagementHandler serves everything but scoring and the metrics: the
// token service, the management API, its OpenAPI document and the endpoint
// test pages, relative to "/". The scoring URLs it lists assume
// ScoringHandler beside it, under the same mount; a host that mounts them
// apart sets Config.BaseURL.
func (s *Service) ManagementHandler() http.Handler { return s.managementHandler }

// MetricsHandler serves the Prometheus metrics at whatever path it is
// mounted; nil when Config.MetricsOff. It takes no token.
func (s *Service) MetricsHandler() http.Handler { return s.metrics }

// Registry is the service's registry, for a host that deploys in code what
// the management API deploys over HTTP.
func (s *Service) Registry() *registry.Registry { return s.reg }

// Accounts are the service's users and API tokens, for a host that manages
// in code what the management API manages over HTTP.
func (s *Service) Accounts() *accounts.Book { return s.auth.accounts }

// Shutdown waits for the running jobs to end, until ctx is done; then it
// stops those left, which end STOPPED. Requests in flight are the HTTP
// server's: call http.Server.Shutdown beside it.
func (s *Service) Shutdown(ctx context.Context) error {
	return s.jobs.Shutdown(ctx)
}

// Close stops the jobs left (after a Shutdown, none), the key rotation and
// the watch of the users files, and closes the stores the service opened.
func (s *Service) Close() error {
	var errs []error
	if s.jobs != nil {
		s.jobs.Close()
	}
	if s.queues != nil {
		s.queues.StopSharing()
		// The predictions scored last are kept before their store closes.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		errs = append(errs, s.queues.StopKeepingPredictions(ctx), s.queues.StopLoggingPayloads(ctx))
		cancel()
	}
	if s.reg != nil {
		s.reg.Close()
	}
	if s.auth != nil {
		errs = append(errs, s.auth.Close())
	}
	return errors.Join(append(errs, s.stores.Close())...)
}

func defaultFormats() []process.ModelFormat {
	return []process.ModelFormat{xgboost.Format{}, lightgbm.Format{}, pmml.Format{}, onnx.Format{}}
}
