// Package standalone is scorehub's reference server, the program
// cmd/scorehub installs and examples/standalone runs: it mounts the scoring
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
// connection string is never printed or logged; its password belongs in
// PGPASSFILE, PGPASSWORD or a file named by -store-file rather than on the
// command line, which every local user can read.
//
//	go install github.com/scorehub/scorehub/cmd/scorehub@latest
//	scorehub -h
//
//	go run ./examples/standalone   # the same server, from a checkout
//
// The users file (-users) and the admin's stored password hash are read
// again when they change: a user removed, or a password changed, loses the
// tokens already issued within a second.
//
// Flags and SCOREHUB_* environment variables set the address, data
// directory, scoring prefix and limits; -h lists them. SIGINT or SIGTERM
// drains the requests in flight and exits 0.
package standalone

import (
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
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/scorehub/scorehub"
	"github.com/scorehub/scorehub/internal/demo"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry"
)

// Main runs the server as the program name, with the command line and
// environment of the process, until SIGINT or SIGTERM, and returns its exit
// status: 0 once it has drained, 1 for a usage error or a failure, said on
// standard error. -version prints the version of the module it was built
// from ([Version]) and exits.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintf(os.Stderr, "%s: %v\n", programName(), err)
		}
		return 1
	}
	return 0
}

// programName is the name the program was run as: scorehub once
// installed, standalone under go run ./examples/standalone.
func programName() string {
	if len(os.Args) == 0 || os.Args[0] == "" {
		return "scorehub"
	}
	return filepath.Base(os.Args[0])
}

// errShowVersion is parseConfig's answer to -version.
var errShowVersion = errors.New("show the version")

// Version returns the version of scorehub the running program was built
// from, as the Go toolchain recorded it, and the Go version: a release or
// pseudo-version for go install …/cmd/scorehub@version; for a build in a
// checkout, "(devel)" and the commit, "+dirty" when the tree had changes.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value[:min(12, len(s.Value))]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		v = "(devel) " + rev + dirty
	}
	if v == "" {
		v = "(devel)"
	}
	return v + " " + bi.GoVersion
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
		switch {
		case errors.Is(err, flag.ErrHelp):
			return nil
		case errors.Is(err, errShowVersion):
			fmt.Fprintf(stdout, "scorehub %s\n", Version())
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
	go func() { jobsDone <- srv.svc.Shutdown(shutdownCtx) }()
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

// Where the service serves the endpoint test pages and the metrics.
const (
	uiPath      = "/ui/"
	metricsPath = "/metrics"
)

// The demo deployment: DEFAULT/iris/classify runs the catalog process iris.
const (
	demoPath  = "iris"
	demoAlias = "classify"
)

type server struct {
	handler http.Handler
	svc     *scorehub.Service
	// metrics serves the metrics; nil when they are off. The service's
	// handler serves them too unless -metrics-addr gives them a listener
	// of their own.
	metrics http.Handler
}

// newServer builds the server cfg describes. Its logs go to logger; the
// access log's lines go to accessOut, in the text format of logger's
// handler, or through logger when accessOut is nil. What an operator must
// read once (a random admin password) goes to stdout.
func newServer(ctx context.Context, cfg config, getenv func(string) string, stdout io.Writer, logger *slog.Logger, accessOut io.Writer) (*server, error) {
	sc, err := cfg.service(getenv)
	if err != nil {
		return nil, err
	}
	sc.Console, sc.Logger, sc.AccessLogOutput = stdout, logger, accessOut
	if cfg.StorePasswordInArgs {
		logger.Warn("the -store flag holds a password, which every local user can read in the process's command line (/proc/<pid>/cmdline, ps); give the connection string in -store-file or SCOREHUB_STORE_FILE, or the password in PGPASSFILE or PGPASSWORD")
	}
	if cfg.DebugAddr != "" && !onLoopback(cfg.DebugAddr) {
		logger.Warn("-insecure-debug-public: the profiles, which take no token, are served off loopback", "debug_addr", cfg.DebugAddr)
	}
	svc, err := scorehub.New(ctx, sc)
	if err != nil {
		return nil, err
	}
	if sc.AdminPassword == "" && sc.Users == nil {
		// The service said where the admin's password is kept; this is how
		// an operator of this program chooses it.
		fmt.Fprintln(stdout, "to choose the admin password, start with SCOREHUB_ADMIN_PASSWORD_FILE naming a file that holds it")
	}
	if err := ensureDemo(ctx, svc.Registry()); err != nil {
		svc.Close()
		return nil, err
	}
	return &server{handler: svc.Handler(), svc: svc, metrics: svc.MetricsHandler()}, nil
}

// Close stops the jobs left (after a drain, none), then closes the stores.
func (s *server) Close() error { return s.svc.Close() }

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
