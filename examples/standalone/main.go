// Command standalone is scorehub's reference server: it mounts the scoring
// handler under /webapi, the token routes under /api/rest/ and the
// management API at the root and its endpoint test pages at /ui/, serves
// Prometheus metrics at /metrics (without a token; -metrics-addr moves them
// to a listener of their own, -metrics=false turns them off), logs one line
// per request (-access-log=false turns that off), keeps its registry in a
// data directory, and deploys a demo endpoint, an iris classifier trained at
// start-up. Model files uploaded through the management API (XGBoost, as
// JSON or UBJSON) are kept in the data directory too, and deployed by
// endpoints that name them.
//
// With -store postgres://… (or SCOREHUB_STORE) the records, jobs and model
// files are kept in a PostgreSQL database instead, which several replicas
// of the server share: each serves what any of them stored, within a second,
// and keeps scoring from what it last read while the database is down. The
// connection string is never printed or logged.
//
//	go run ./examples/standalone
//
// The users file (-users) and the admin's stored password hash are read
// again when they change: a user removed, or a password changed, loses the
// tokens already issued within a second.
//
// Flags and SCOREHUB_* environment variables set the address, data
// directory, scoring prefix and limits; -h lists them. SIGINT or SIGTERM
// drains the requests in flight and exits 0.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/scorehub/scorehub/internal/demo"
	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/management/ui"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/onnx"
	"github.com/scorehub/scorehub/registry/pmml"
	"github.com/scorehub/scorehub/registry/xgboost"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/tokens"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "standalone:", err)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// logFlushTimeout bounds how long run waits at its end for the log lines
// still held to be written, so that a stuck standard error cannot keep the
// process from exiting.
const logFlushTimeout = 5 * time.Second

// run serves until ctx is done, then drains and returns nil. ready, when not
// nil, receives the listening address once the server accepts connections.
//
// Draining: the listener closes, requests in flight and running jobs get
// the grace period (-grace) to finish; then the remaining connections are
// closed, which cancels their requests, and the remaining jobs are
// cancelled and marked STOPPED. run returns nil either way.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready func(addr string)) (err error) {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		fmt.Fprintln(stderr, err)
		return errUsage
	}
	// One write per line would cost a system call per request for the
	// access log alone; under load, the LogWriter writes the lines of
	// each five milliseconds together. Whatever it holds is written before run returns, on every
	// path, so that it precedes main's last words and survives os.Exit.
	logOut := middleware.NewLogWriter(stderr)
	defer func() {
		fctx, cancel := context.WithTimeout(context.Background(), logFlushTimeout)
		defer cancel()
		if ferr := logOut.Flush(fctx); ferr != nil && err == nil {
			err = ferr
		}
	}()
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if floor := gcFloorSize(cfg, getenv); floor > 0 {
		defer startGCFloor(floor)()
	}

	srv, err := newServer(ctx, cfg, getenv, stdout, logger, logOut)
	if err != nil {
		return err
	}
	defer srv.Close()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	httpSrv := &http.Server{
		Handler:           srv.handler,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- httpSrv.Serve(ln) }()

	if cfg.DebugAddr != "" {
		dbg, err := startSide(cfg.DebugAddr, "debug", debugHandler(), logger)
		if err != nil {
			httpSrv.Close()
			return fmt.Errorf("debug address: %w", err)
		}
		defer dbg.Close()
		fmt.Fprintf(stdout, "profiles (no token; keep this address private): http://%s/debug/pprof/\n", dbg.addr)
	}
	if cfg.MetricsAddr != "" && srv.metrics != nil {
		ms, err := startSide(cfg.MetricsAddr, "metrics", metricsMux(srv.metrics), logger)
		if err != nil {
			httpSrv.Close()
			return fmt.Errorf("metrics address: %w", err)
		}
		defer ms.Close()
		fmt.Fprintf(stdout, "metrics (no token; keep this address private): http://%s%s\n", ms.addr, metricsPath)
	}
	base := "http://" + ln.Addr().String()
	printWelcome(stdout, base, cfg.Prefix)
	if ready != nil {
		ready(ln.Addr().String())
	}

	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", "grace", cfg.Grace)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.Grace)
	defer cancel()
	jobsDone := make(chan error, 1)
	go func() { jobsDone <- srv.jobs.Shutdown(shutdownCtx) }()
	if err := httpSrv.Shutdown(shutdownCtx); err != nil {
		// Past the grace period: closing the connections cancels the
		// requests still running.
		logger.Warn("grace period over; closing the connections left", "cause", err.Error())
		httpSrv.Close()
	}
	if err := <-jobsDone; err != nil {
		logger.Warn("grace period over; stopped the jobs left", "cause", err.Error())
	}
	return nil
}

func printWelcome(w io.Writer, base, prefix string) {
	url := base + prefix + "/" + registry.DefaultGroup + "/api/v1/services/" + demoPath + "/" + demoAlias
	fmt.Fprintf(w, "scorehub listening on %s\n", base)
	fmt.Fprintf(w, "endpoint test pages: %s%s\n", base, uiPath)
	fmt.Fprintf(w, "demo endpoint: %s\n", url)
	fmt.Fprintf(w, "try it:\n  curl -s -X POST '%s' -H 'Content-Type: application/json' \\\n    -d '{\"data\":[{\"sepal_length\":5.1,\"sepal_width\":3.5,\"petal_length\":1.4,\"petal_width\":0.2}]}'\n", url)
}

// uiPath is where the endpoint test pages are served.
const uiPath = "/ui/"

// The demo deployment: DEFAULT/iris/classify runs the catalog process iris.
const (
	demoPath  = "iris"
	demoAlias = "classify"
)

type server struct {
	handler http.Handler
	reg     *registry.Registry
	stores  *stores
	jobs    *scoring.Jobs
	auth    *auth
	// metrics serves the metrics; nil when they are off. It is mounted on
	// handler unless -metrics-addr gives them a listener of their own.
	metrics http.Handler
}

// newServer builds the server cfg describes. Its logs go to logger; the
// access log's lines go to accessOut, in the text format of logger's
// handler, or through logger when accessOut is nil.
func newServer(ctx context.Context, cfg config, getenv func(string) string, stdout io.Writer, logger *slog.Logger, accessOut io.Writer) (_ *server, err error) {
	catalog := registry.NewCatalog()
	iris, err := demo.Iris()
	if err != nil {
		return nil, err
	}
	procs := []registry.ProcessInfo{iris}
	if cfg.DemoSleep {
		procs = append(procs, demo.Sleep())
	}
	for _, p := range procs {
		if err := catalog.Register(p); err != nil {
			return nil, err
		}
	}
	// Model files uploaded through the management API are read by the
	// formats of the catalog; the store below keeps them.
	for _, f := range []registry.ModelFormat{xgboost.Format{}, pmml.Format{}, onnx.Format{}} {
		if err := catalog.RegisterFormat(f); err != nil {
			return nil, err
		}
	}
	stores, err := openStores(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			stores.Close()
		}
	}()
	store := stores.records
	reg, err := registry.New(ctx, catalog, store)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			reg.Close()
		}
	}()
	if err := ensureDemo(ctx, reg); err != nil {
		return nil, err
	}
	queues, err := scoring.NewQueues(reg)
	if err != nil {
		return nil, err
	}
	// A job naming an endpoint passes the check the scoring handler
	// applies, built below once the verifier exists (the metrics the
	// token service reports to need the jobs first).
	var authorize func(*http.Request, string, registry.AuthPolicy) error
	jobs, err := scoring.NewJobs(scoring.JobsConfig{
		Authorize: func(r *http.Request, group string, p registry.AuthPolicy) error { return authorize(r, group, p) },
		Registry:  reg,
		Queues:    queues,
		Store:     stores.jobs,
		Limits:    scoring.Limits{MaxBodyBytes: cfg.MaxJobBody, MaxRows: cfg.MaxRows, MaxColumns: cfg.MaxColumns},
		Retention: cfg.JobRetention,
		Logger:    logger,
		Replica:   cfg.Replica,
		Lease:     jobLease(cfg),
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			jobs.Close()
		}
	}()
	var (
		observer       scoring.Observer
		tokenObserver  tokens.Observer
		authObserver   middleware.AuthObserver
		metricsHandler http.Handler
	)
	if cfg.Metrics {
		m, h, err := newMetrics(queues, jobs, logger)
		if err != nil {
			return nil, err
		}
		observer, tokenObserver, authObserver, metricsHandler = m, m, m, h
	}
	authn, err := newAuth(cfg, stores.db, getenv, stdout, logger, tokenObserver, authObserver)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			authn.Close()
		}
	}()
	authorize = authn.credentials.Authorize
	scorer, err := scoring.New(scoring.Config{
		Registry:       reg,
		Queues:         queues,
		Authorize:      authorize,
		Limits:         scoring.Limits{MaxBodyBytes: cfg.MaxBody, MaxRows: cfg.MaxRows, MaxColumns: cfg.MaxColumns},
		DefaultTimeout: cfg.Timeout,
		Logger:         logger,
		Observer:       observer,
		Prefix:         cfg.Prefix,
		// The flag's 0 is "none", the Config's is "the default".
		WriteProgressTimeout: cmp.Or(cfg.WriteProgressTimeout, -1),
	})
	if err != nil {
		return nil, err
	}
	api, err := management.New(management.Config{
		Registry:      reg,
		Queues:        scorer.Queues(),
		Jobs:          jobs,
		Verifier:      authn.verifier,
		Credentials:   authn.credentials,
		Accounts:      authn.accounts,
		TokenRoutes:   authn.handler.Routes(),
		ScoringPrefix: cfg.Prefix,
		MaxModelBytes: cfg.MaxModelBytes,
		Logger:        logger,
	})
	if err != nil {
		return nil, err
	}
	// Off unless -cors-origins names origins whose pages may call scoring.
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
	mux := http.NewServeMux()
	mux.Handle(cfg.Prefix+"/", scoringRoutes)
	mux.Handle("/api/rest/", authn.handler)
	mux.Handle(uiPath, http.StripPrefix(strings.TrimSuffix(uiPath, "/"), page)) // the mux sends /ui to /ui/
	if metricsHandler != nil && cfg.MetricsAddr == "" {
		mux.Handle("GET "+metricsPath, metricsHandler)
	}
	mux.Handle("/", api)
	mux.Handle("/{$}", root(api))
	// Scoring requests, the ones that come by the thousand, go straight to
	// the scoring routes: the mux would send them there too, after a
	// pattern match that costs a twentieth of a one-row request.
	scoringPath := cfg.Prefix + "/"
	routes := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, scoringPath) {
			scoringRoutes.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
	// A path with dot segments is a JSON 404, not the mux's redirect; a
	// chunked request's connection is closed once it is answered, so that
	// a request framed both ways cannot smuggle another behind it.
	handler := middleware.CloseChunked(middleware.CleanPath(routes))
	if cfg.AccessLog {
		// Outermost, so that every request is logged, those refused before
		// any route included.
		// Written by AccessLog itself when it can be, in the text logger's
		// format, for a fraction of what a record through slog costs.
		handler = middleware.AccessLog(middleware.AccessLogConfig{Logger: logger, Output: accessOut, Client: true, TrustedProxies: cfg.TrustedProxies})(handler)
	}
	return &server{handler: handler, reg: reg, stores: stores, jobs: jobs, auth: authn, metrics: metricsHandler}, nil
}

// Close stops the jobs left (after a drain, none), then closes the stores.
func (s *server) Close() error {
	s.jobs.Close()
	s.reg.Close()
	return errors.Join(s.auth.Close(), s.stores.Close())
}

// ensureDemo creates the demo deployment unless the store already has one
// at its place; an operator's changes to it are kept across restarts.
func ensureDemo(ctx context.Context, reg *registry.Registry) error {
	_, err := reg.PutDeployment(ctx, registry.Deployment{
		Group:       registry.DefaultGroup,
		Path:        demoPath,
		Description: "Demo: iris species classifier",
		Enabled:     true,
		Endpoints:   []registry.Endpoint{{Alias: demoAlias, Process: demo.IrisName, Description: "Classify iris flowers"}},
	})
	if errors.Is(err, registry.ErrConflict) {
		return nil
	}
	return err
}
