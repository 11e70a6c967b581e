package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/scorehub/scorehub/internal/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if mode := os.Getenv(bareProcessEnv); mode != "" {
		if err := servePeerProcess(ctx, mode, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// config is what the command line sets.
type config struct {
	// Clients is the number of concurrent clients of the run being
	// measured; ClientCounts lists every number the run measures, one
	// after the other, and Clients starts as the largest, which sizes the
	// connection pools.
	Clients      int
	ClientCounts []int
	// Large, when positive, is the rows of the request that a run also
	// sends, one at a time, to the scoring server, the loopback floor
	// and the naive encoding/json server; LargeRequests is how many each
	// gets per round, LargePause how long the client waits after each
	// answer before it sends the next (the server idle meanwhile).
	Large         int
	LargeRequests int
	LargePause    time.Duration
	Rounds        int
	Duration      time.Duration
	Warmup        time.Duration
	Timeout       time.Duration
	Rows          []int
	MaxRequests   int64
	ServerBin     string
	ServerURL     string
	// ServerEnv are NAME=VALUE settings added to the environment of the
	// scoring server the harness starts, and of no other process.
	ServerEnv []string
	ModuleDir string
	Path      string
	Bare      string // where the bare handler runs: bareProcess, bareHarness or bareBoth
	// Auth, when set, is the kind of credentials (authBasic, authAPIToken
	// or authBearer) a protected copy of the endpoint is called with, and
	// measured against the endpoint itself instead of a bare handler.
	Auth string
	// Challenger, when set, is the mode (challengeShadow) of a challenger
	// that an endpoint of a model uploaded for the run is given and
	// measured with, against the same endpoint without it instead of a
	// bare handler.
	Challenger string
	// Monitor, when set, measures an endpoint of a model uploaded for the
	// run with a reference, whose monitor counts every row it scores
	// against it, against the same endpoint with its monitor off instead
	// of a bare handler.
	Monitor       bool
	AdminPassword string // of the -server-url server's admin, for -auth, -challenger and -monitor
	JSON          bool
}

// Where the bare handler runs.
const (
	// bareProcess is a process of its own, as the scoring server has: the
	// two ceilings compare like with like.
	bareProcess = "process"
	// bareHarness is the harness's process, where the bare handler shares
	// the clients' Go runtime and spares the process boundary the scoring
	// server pays.
	bareHarness = "harness"
	// bareBoth runs one bare handler in each place, so that one run also
	// measures what the process boundary alone costs.
	bareBoth = "both"
)

// placements lists where bare handlers run, in the order they are driven.
func (c config) placements() []string {
	if c.Bare == bareBoth {
		return []string{bareProcess, bareHarness}
	}
	return []string{c.Bare}
}

// Bounds of the flags, so that a typo cannot start a run that never ends
// or exhausts the machine.
const (
	maxClients = 10_000
	maxRounds  = 100
	maxRows    = 1_000_000
)

func parseConfig(args []string, stderr io.Writer) (config, error) {
	c := config{
		Rounds:        3,
		Large:         10_000,
		LargeRequests: 20,
		Duration:      10 * time.Second,
		Warmup:        2 * time.Second,
		Timeout:       10 * time.Second,
		MaxRequests:   10_000_000,
		ModuleDir:     ".",
		Path:          "/webapi/DEFAULT/api/v1/services/iris/classify",
		Bare:          bareProcess,
	}
	rows, clients, serverEnv := "1,100", "16,32", ""
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&clients, "clients", clients, "comma-separated numbers of concurrent clients, each with its own keep-alive connection; every request size is measured at each")
	fs.IntVar(&c.Large, "large", c.Large, "rows of the large request sent one at a time to the scoring server, the loopback floor and the naive encoding/json server; 0 skips it")
	fs.IntVar(&c.LargeRequests, "large-requests", c.LargeRequests, "large requests sent to each server per round")
	fs.DurationVar(&c.LargePause, "large-pause", 0, "how long the client waits after each large answer before the next request (0: none, back to back)")
	fs.IntVar(&c.Rounds, "rounds", c.Rounds, "scoring and bare runs, alternated, per request size; the ratio is their median")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "how long each scoring run lasts")
	fs.DurationVar(&c.Warmup, "warmup", c.Warmup, "unmeasured load before each scenario")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "timeout of one request")
	fs.StringVar(&rows, "rows", rows, "comma-separated rows per request, one scenario pair each")
	fs.Int64Var(&c.MaxRequests, "max-requests", c.MaxRequests, "most requests of one scoring run")
	fs.StringVar(&c.ServerBin, "server-bin", "", "standalone server binary to run (default: go build ./cmd/scorehub)")
	fs.StringVar(&c.ServerURL, "server-url", "", "base URL of a server that is already running, instead of starting one")
	fs.StringVar(&serverEnv, "server-env", "", "comma-separated NAME=VALUE settings added to the environment of the scoring server the harness starts, and of no other process, such as GOGC=400 or SCOREHUB_ACCESS_LOG=false")
	fs.StringVar(&c.ModuleDir, "module", c.ModuleDir, "the scorehub module's directory, where the server is built")
	fs.StringVar(&c.Path, "path", c.Path, "path of the scoring endpoint on the server")
	fs.StringVar(&c.Bare, "bare", c.Bare, "where the bare handler runs: \"process\", a process of its own like the scoring server; \"harness\", this one; or \"both\", one in each")
	fs.StringVar(&c.Auth, "auth", "none", "measure a protected copy of the endpoint, called with \"basic\", \"apitoken\" or \"bearer\" credentials, against the endpoint itself instead of a bare handler; \"none\" measures against a bare handler")
	fs.StringVar(&c.Challenger, "challenger", "none", "measure an endpoint of a model uploaded for the run that has a challenger of this mode, \"shadow\", against the same endpoint without it instead of a bare handler; \"none\" measures against a bare handler")
	fs.BoolVar(&c.Monitor, "monitor", false, "measure an endpoint of a model uploaded for the run with a reference, which measures its drift (its monitor on, the default), against the same endpoint with its monitor off instead of a bare handler")
	fs.StringVar(&c.AdminPassword, "admin-password", "", "the admin password of the -server-url server, with which -auth, -challenger and -monitor make what they measure")
	fs.BoolVar(&c.JSON, "json", false, "write the report as JSON")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	bareSet, largeSet := false, false
	fs.Visit(func(f *flag.Flag) {
		bareSet = bareSet || f.Name == "bare"
		largeSet = largeSet || f.Name == "large"
	})
	if c.Auth == "none" {
		c.Auth = ""
	}
	if c.Challenger == "none" {
		c.Challenger = ""
	}
	// -challenger and -monitor each measure a pair of endpoints against
	// each other: the same checks, the same words.
	pairFlag, pairCeiling := "", ""
	switch {
	case c.Challenger != "":
		pairFlag, pairCeiling = "-challenger", "the endpoint without its challenger"
	case c.Monitor:
		pairFlag, pairCeiling = "-monitor", "the endpoint with its monitor off"
	}
	if c.Auth != "" && !largeSet {
		c.Large = 0 // -auth compares two endpoints of one server; the peers have no part in it
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("loadtest: unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	for _, f := range strings.Split(rows, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxRows {
			return c, fmt.Errorf("loadtest: -rows %q: each must be a number from 1 to %d", rows, maxRows)
		}
		c.Rows = append(c.Rows, n)
	}
	for _, f := range strings.Split(clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxClients {
			return c, fmt.Errorf("loadtest: -clients %q: each must be a number from 1 to %d", clients, maxClients)
		}
		c.ClientCounts = append(c.ClientCounts, n)
		c.Clients = max(c.Clients, n)
	}
	if serverEnv != "" {
		for _, kv := range strings.Split(serverEnv, ",") {
			name, _, ok := strings.Cut(kv, "=")
			if !ok || !envName.MatchString(name) {
				return c, fmt.Errorf("loadtest: -server-env %q: each must be NAME=VALUE", serverEnv)
			}
			c.ServerEnv = append(c.ServerEnv, kv)
		}
	}
	switch {
	case c.Large < 0 || c.Large > maxRows:
		return c, fmt.Errorf("loadtest: -large must be from 0 (none) to %d", maxRows)
	case c.LargeRequests < 1:
		return c, errors.New("loadtest: -large-requests must be positive")
	case c.LargePause < 0 || c.LargePause > time.Minute:
		return c, errors.New("loadtest: -large-pause must be from 0 to 1m")
	case c.Large > 0 && c.Auth != "":
		return c, errors.New("loadtest: give -auth or -large, not both: -auth measures against the unprotected endpoint, not the large-request peers")
	case c.Rounds < 1 || c.Rounds > maxRounds:
		return c, fmt.Errorf("loadtest: -rounds must be from 1 to %d", maxRounds)
	case c.Duration <= 0 || c.Warmup < 0 || c.Timeout <= 0:
		return c, errors.New("loadtest: -duration and -timeout must be positive, -warmup not negative")
	case c.MaxRequests < 1:
		return c, errors.New("loadtest: -max-requests must be positive")
	case c.ServerBin != "" && c.ServerURL != "":
		return c, errors.New("loadtest: give -server-bin or -server-url, not both")
	case len(c.ServerEnv) > 0 && c.ServerURL != "":
		return c, errors.New("loadtest: -server-env is for a server the harness starts, not a -server-url one")
	case !strings.HasPrefix(c.Path, "/"):
		return c, fmt.Errorf("loadtest: -path %q must start with /", c.Path)
	case c.Bare != bareProcess && c.Bare != bareHarness && c.Bare != bareBoth:
		return c, fmt.Errorf("loadtest: -bare %q must be %q, %q or %q", c.Bare, bareProcess, bareHarness, bareBoth)
	case c.Auth != "" && !slices.Contains(authKinds, c.Auth):
		return c, fmt.Errorf("loadtest: -auth %q must be \"none\", %q, %q or %q", c.Auth, authBasic, authAPIToken, authBearer)
	case c.Auth != "" && bareSet:
		return c, errors.New("loadtest: give -auth or -bare, not both: -auth measures against the unprotected endpoint, not a bare handler")
	case c.Auth != "" && c.ServerURL != "" && c.AdminPassword == "":
		return c, errors.New("loadtest: -auth with -server-url needs -admin-password, the server's admin password, to make the user, group and deployment it measures")
	case c.Challenger != "" && c.Challenger != challengeShadow:
		return c, fmt.Errorf("loadtest: -challenger %q must be \"none\" or %q", c.Challenger, challengeShadow)
	case c.Challenger != "" && c.Monitor:
		return c, errors.New("loadtest: give -challenger or -monitor, not both")
	case pairFlag != "" && c.Auth != "":
		return c, fmt.Errorf("loadtest: give -auth or %s, not both", pairFlag)
	case pairFlag != "" && bareSet:
		return c, fmt.Errorf("loadtest: give %s or -bare, not both: %[1]s measures against %s, not a bare handler", pairFlag, pairCeiling)
	case pairFlag != "" && c.ServerURL != "" && c.AdminPassword == "":
		return c, fmt.Errorf("loadtest: %s with -server-url needs -admin-password, the server's admin password, to upload the model and deploy the endpoints it measures", pairFlag)
	case c.AdminPassword != "" && (c.Auth == "" && pairFlag == "" || c.ServerURL == ""):
		return c, errors.New("loadtest: -admin-password is for -auth, -challenger or -monitor with -server-url; a server the harness starts gets a password from the harness")
	}
	return c, nil
}

// envName is what an environment variable's name may be.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// targetRatio is what 1-row scoring should reach of the bare handler's
// requests per second.
const targetRatio = 0.8

// authTargetRatio is what an endpoint called with Basic credentials
// should reach, at 1 row, of its requests per second unprotected; the
// other kinds have no target.
const authTargetRatio = 0.9

// run measures and reports; progress goes to stderr, the report to stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		return err
	}
	srv, err := serverUnderTest(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer func() {
		if serr := srv.stop(); serr != nil {
			fmt.Fprintln(stderr, serr)
		}
	}()

	client := newClient(cfg.Clients, cfg.Timeout)
	defer client.CloseIdleConnections()
	responses := make(map[string][]byte, len(cfg.Rows))
	sizes := cfg.Rows
	if cfg.Large > 0 && !slices.Contains(sizes, cfg.Large) {
		sizes = append(slices.Clone(sizes), cfg.Large)
	}
	for _, rows := range sizes {
		resp, err := probe(ctx, client, target{url: srv.base + cfg.Path, body: demo.IrisRequest(rows)})
		if err != nil {
			return fmt.Errorf("loadtest: the scoring endpoint does not answer: %w", err)
		}
		if err := checkRows(resp, rows); err != nil {
			return err
		}
		responses[barePath(rows)] = resp
	}

	rep := report{
		Machine: currentMachine(), Clients: cfg.ClientCounts, Rounds: cfg.Rounds,
		Duration: cfg.Duration.String(), Warmup: cfg.Warmup.String(), ScoringURL: srv.base + cfg.Path,
		ServerEnv: cfg.ServerEnv,
	}
	h := harness{cfg: cfg, scoringURL: srv.base + cfg.Path, client: client, pid: srv.pid, stderr: stderr}
	defer func() {
		for _, c := range h.ceilings {
			if serr := c.close(); serr != nil {
				fmt.Fprintln(stderr, serr)
			}
		}
	}()
	if cfg.Auth != "" {
		p, err := protectForRun(ctx, cfg, srv, client, stderr)
		if err != nil {
			return err
		}
		defer func() {
			if serr := p.remove(context.WithoutCancel(ctx)); serr != nil {
				fmt.Fprintln(stderr, serr)
			}
		}()
		h.scoringURL, h.cred = p.url, p.cred
		rep.Auth, rep.ScoringURL, rep.UnprotectedURL = cfg.Auth, p.url, srv.base+cfg.Path
		// The endpoint unprotected is the ceiling: same server, same
		// process, same queue, no credentials.
		h.ceilings = append(h.ceilings, &ceiling{scenario: "unprotected", base: srv.base, path: cfg.Path, pid: srv.pid,
			stop: func() error { return nil }, client: newClient(cfg.Clients, cfg.Timeout)})
	} else if cfg.Challenger != "" || cfg.Monitor {
		p, err := pairForRun(ctx, cfg, srv, client, stderr)
		if err != nil {
			return err
		}
		defer func() {
			if serr := p.remove(context.WithoutCancel(ctx)); serr != nil {
				fmt.Fprintln(stderr, serr)
			}
		}()
		h.scoringURL, h.pair = srv.base+p.paths[0], p
		rep.ScoringURL, rep.Pair = h.scoringURL, p.report(srv.base)
		// The same model's endpoint without what is measured is the
		// ceiling: same server, same deployment, same queue.
		h.ceilings = append(h.ceilings, &ceiling{scenario: p.names[1], base: srv.base, path: p.paths[1], pid: srv.pid,
			stop: func() error { return nil }, client: newClient(cfg.Clients, cfg.Timeout)})
	} else {
		for _, where := range cfg.placements() {
			c, err := startCeiling(ctx, cfg, where, responses)
			if err != nil {
				return err
			}
			h.ceilings = append(h.ceilings, c)
			rep.Bare = append(rep.Bare, bareInfo{Where: where, URL: c.base + "/bare/{rows}"})
		}
	}

	for _, n := range cfg.ClientCounts {
		h.cfg.Clients = n
		for _, rows := range cfg.Rows {
			if err := h.measure(ctx, rows, &rep); err != nil {
				return err
			}
		}
	}
	switch {
	case cfg.Large > 0 && h.pair != nil:
		if rep.Pair.Large, err = measureLargePair(ctx, cfg, h.pair, srv.base, srv.pid, stderr); err != nil {
			return err
		}
	case cfg.Large > 0:
		if err := measureLarge(ctx, cfg, h.scoringURL, srv.pid, responses[barePath(cfg.Large)], &rep, stderr); err != nil {
			return err
		}
	}
	if h.pair != nil && h.pair.monitor != nil {
		// The last requests went to the ceiling: the monitor has counted
		// the rows of the endpoint measured.
		if rep.Pair.Drift, err = h.pair.drift(ctx); err != nil {
			return err
		}
	}

	if cfg.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = rep.writeTable(stdout)
	}
	if err != nil {
		return fmt.Errorf("loadtest: write the report: %w", err)
	}
	for _, s := range rep.Scenarios {
		if s.Requests == 0 {
			return fmt.Errorf("%w: %s, %d rows: %s", errNoRequests, s.Scenario, s.Rows, s.FirstError)
		}
	}
	return nil
}

// protectForRun makes the protected copy of the endpoint under test and
// checks, for each request size, that it refuses a request without
// credentials and answers one with them.
func protectForRun(ctx context.Context, cfg config, srv *underTest, client *http.Client, stderr io.Writer) (p *protected, err error) {
	setup := newClient(1, cfg.Timeout)
	defer setup.CloseIdleConnections()
	if p, err = protect(ctx, setup, srv.base, cfg.Path, cfg.Auth, srv.adminPassword); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, p.remove(context.WithoutCancel(ctx)))
		}
	}()
	fmt.Fprintf(stderr, "loadtest: protected copy of the endpoint at %s, called with %s\n", p.url, authText(cfg.Auth))
	auth, err := p.cred.fresh(ctx, time.Now().Add(cfg.Timeout))
	if err != nil {
		return nil, err
	}
	for _, rows := range cfg.Rows {
		if _, err := probe(ctx, client, target{url: p.url, body: demo.IrisRequest(rows)}); err == nil || !strings.Contains(err.Error(), "status 401") {
			return nil, fmt.Errorf("loadtest: the protected endpoint %s must refuse a request without credentials with a 401, not answer %v", p.url, err)
		}
		resp, err := probe(ctx, client, target{url: p.url, body: demo.IrisRequest(rows), authorization: auth})
		if err != nil {
			return nil, fmt.Errorf("loadtest: the protected endpoint does not answer: %w", err)
		}
		if err := checkRows(resp, rows); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// ceiling is what scoring is measured against: a running bare handler,
// under -auth the endpoint itself unprotected, or under -challenger and
// -monitor the endpoint without what is measured; and the clients that
// drive it.
type ceiling struct {
	scenario string // "bare", "unprotected", or a pair's ceiling: "plain", "unmonitored"
	where    string // of a bare handler: bareProcess or bareHarness
	base     string
	path     string // of the unprotected endpoint; a bare handler's depends on the rows
	pid      int    // the server process's; 0 in the harness
	stop     func() error
	client   *http.Client
}

// startCeiling starts the bare handler where says, serving responses.
func startCeiling(ctx context.Context, cfg config, where string, responses map[string][]byte) (*ceiling, error) {
	base, pid, stop, err := bareUnderTest(ctx, where, responses)
	if err != nil {
		return nil, err
	}
	return &ceiling{scenario: "bare", where: where, base: base, pid: pid, stop: stop, client: newClient(cfg.Clients, cfg.Timeout)}, nil
}

// url is where requests of rows rows go.
func (c *ceiling) url(rows int) string {
	if c.path != "" {
		return c.base + c.path
	}
	return c.base + barePath(rows)
}

// name is how progress names the ceiling: "bare process", "unprotected".
func (c *ceiling) name() string {
	return strings.TrimSpace(c.scenario + " " + c.where)
}

func (c *ceiling) close() error {
	c.client.CloseIdleConnections()
	return c.stop()
}

// harness is what a run measures with: the scoring server, its clients
// and the ceilings.
type harness struct {
	cfg        config
	scoringURL string       // the endpoint measured: under -auth, its protected copy; under -challenger and -monitor, the pair's first
	cred       *credential  // what the endpoint is called with under -auth, else nil
	pair       *pair        // the endpoints under -challenger and -monitor, else nil
	client     *http.Client // the scoring server's clients
	pid        int          // the scoring server's, 0 when not started here
	ceilings   []*ceiling
	stderr     io.Writer // progress
}

// scenario names the runs of the endpoint measured.
func (h *harness) scenario() string {
	switch {
	case h.cred != nil:
		return "protected"
	case h.pair != nil:
		return h.pair.names[0]
	}
	return "scoring"
}

// target returns the request of rows rows to the endpoint measured, with
// credentials valid for a run of d.
func (h *harness) target(ctx context.Context, rows int, d time.Duration) (target, error) {
	t := target{url: h.scoringURL, body: demo.IrisRequest(rows)}
	if h.cred != nil {
		var err error
		if t.authorization, err = h.cred.fresh(ctx, time.Now().Add(d+h.cfg.Timeout)); err != nil {
			return t, err
		}
	}
	return t, nil
}

// measure runs the rounds of one request size: a run of the endpoint,
// then as many requests to each ceiling, and adds their summaries and
// ratios to rep; under -challenger, with what the shadow did meanwhile.
func (h *harness) measure(ctx context.Context, rows int, rep *report) error {
	cfg, client, ceilings, name := h.cfg, h.client, h.ceilings, h.scenario()
	shadowed := h.pair != nil && h.pair.challenger != nil
	var shadowBefore shadowWork
	if shadowed {
		var err error
		if shadowBefore, err = h.pair.work(ctx); err != nil {
			return err
		}
	}
	refs := make([]string, len(ceilings))
	for i, c := range ceilings {
		refs[i] = c.scenario
	}
	fmt.Fprintf(h.stderr, "loadtest: %d clients, %d-row requests: %v warm-up each, then %d rounds of %v %s and as many requests %s\n",
		cfg.Clients, rows, cfg.Warmup, cfg.Rounds, cfg.Duration, name, strings.Join(slices.Compact(refs), " and "))
	bts := make([]target, len(ceilings))
	st, err := h.target(ctx, rows, cfg.Warmup)
	if err != nil {
		return err
	}
	warm(ctx, client, st, cfg)
	for i, c := range ceilings {
		bts[i] = target{url: c.url(rows), body: st.body}
		warm(ctx, c.client, bts[i], cfg)
	}

	// The endpoint's and the ceilings' runs alternate, so that all see
	// the same moments of a shared machine; a ratio is the median of the
	// rounds' ratios, which one disturbed round does not move.
	var scoredAll result
	bareAll := make([]result, len(ceilings))
	ratios := make([]ratio, len(ceilings))
	for i, c := range ceilings {
		ratios[i] = ratio{Rows: rows, Clients: cfg.Clients, Bare: c.where}
	}
	boundary := ratio{Rows: rows, Clients: cfg.Clients}
	meter := cpuMeter{serverPID: h.pid}
	for round := range cfg.Rounds {
		if st, err = h.target(ctx, rows, cfg.Duration); err != nil {
			return err
		}
		s0 := meter.sample()
		r := drive(ctx, client, st, cfg.Clients, bounds{duration: cfg.Duration, requests: cfg.MaxRequests})
		r.cpu = s0.until(meter.sample())
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sent := r.ok + r.errors
		if sent == 0 {
			return fmt.Errorf("%w: %s, %d rows, round %d", errNoRequests, name, rows, round+1)
		}
		scoringRPS := r.rps()
		progress := fmt.Sprintf("loadtest: round %d: %s %.0f req/s", round+1, name, scoringRPS)
		bareRPS := make([]float64, len(ceilings))
		for i, c := range ceilings {
			// As many requests as the endpoint's run sent; the time cap
			// only guards against a run that stalls. A bare handler's run
			// counts the CPU time of its own process, not the scoring
			// server's, which idles meanwhile.
			bareMeter := cpuMeter{serverPID: c.pid}
			b0 := bareMeter.sample()
			b := drive(ctx, c.client, bts[i], cfg.Clients, bounds{duration: 4*cfg.Duration + 10*time.Second, requests: sent})
			b.cpu = b0.until(bareMeter.sample())
			if ctx.Err() != nil {
				return ctx.Err()
			}
			bareRPS[i] = b.rps()
			progress += fmt.Sprintf(", %s %.0f req/s", c.name(), bareRPS[i])
			if bareRPS[i] > 0 {
				ratios[i].Rounds = append(ratios[i].Rounds, scoringRPS/bareRPS[i])
			}
			bareAll[i] = bareAll[i].merge(b)
		}
		fmt.Fprintln(h.stderr, progress)
		if len(ceilings) == 2 && bareRPS[1] > 0 {
			boundary.Rounds = append(boundary.Rounds, bareRPS[0]/bareRPS[1])
		}
		scoredAll = scoredAll.merge(r)
	}

	scored := summarize(name, rows, cfg.Clients, scoredAll)
	rep.Scenarios = append(rep.Scenarios, scored)
	for i, c := range ceilings {
		b := summarize(c.scenario, rows, cfg.Clients, bareAll[i])
		b.Bare = c.where
		ra := &ratios[i]
		ra.Ratio = median(ra.Rounds)
		switch {
		case rows != 1:
		case cfg.Auth == authBasic:
			ra.Target = authTargetRatio
		case h.pair != nil:
			ra.Target = h.pair.rpsTarget
		case cfg.Auth == "":
			ra.Target = targetRatio
		}
		if shadowed {
			// The plain run came last: the shadows of the shadowed run
			// are done.
			after, err := h.pair.work(ctx)
			if err != nil {
				return err
			}
			w := after.since(shadowBefore)
			ra.Shadow = &w
		}
		if scored.HarnessCPU > 0 && scored.ServerCPU > 0 && b.HarnessCPU > 0 && (c.where == bareHarness || b.ServerCPU > 0) {
			ra.CPURatio = (b.HarnessCPU + b.ServerCPU) / (scored.HarnessCPU + scored.ServerCPU)
		}
		rep.Scenarios = append(rep.Scenarios, b)
		rep.Ratios = append(rep.Ratios, *ra)
	}
	if len(boundary.Rounds) > 0 {
		boundary.Ratio = median(boundary.Rounds)
		rep.Boundary = append(rep.Boundary, boundary)
	}
	return nil
}

// underTest is the scoring server a run measures.
type underTest struct {
	base          string
	pid           int    // 0 when it is not this harness's child
	adminPassword string // the one given to the server started here, else -admin-password
	stop          func() error
}

// serverUnderTest returns the scoring server: the one -server-url names,
// or a standalone server started here.
func serverUnderTest(ctx context.Context, cfg config, stderr io.Writer) (_ *underTest, err error) {
	if cfg.ServerURL != "" {
		return &underTest{base: strings.TrimRight(cfg.ServerURL, "/"), adminPassword: cfg.AdminPassword, stop: func() error { return nil }}, nil
	}
	tmp, err := os.MkdirTemp("", "scorehub-loadtest-")
	if err != nil {
		return nil, fmt.Errorf("loadtest: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	bin := cfg.ServerBin
	if bin == "" {
		fmt.Fprintf(stderr, "loadtest: building ./cmd/scorehub in %s\n", cfg.ModuleDir)
		if bin, err = buildServer(ctx, cfg.ModuleDir, tmp); err != nil {
			return nil, err
		}
	}
	var extra []string
	if cfg.Auth == authBearer {
		// Long enough for any run, so that the idToken is renewed between
		// runs, never during one.
		extra = append(extra, "-token-validity", max(5*time.Minute, 2*(cfg.Warmup+cfg.Duration+cfg.Timeout)).String())
	}
	password := rand.Text()
	srv, err := startServer(ctx, bin, filepath.Join(tmp, "data"), password, cfg.ServerEnv, time.Minute, extra...)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "loadtest: server listening on %s\n", srv.base)
	return &underTest{base: srv.base, pid: srv.cmd.Process.Pid, adminPassword: password, stop: func() error {
		err := srv.stop(30 * time.Second)
		return errors.Join(err, os.RemoveAll(tmp))
	}}, nil
}

// bareUnderTest starts the bare handler, serving responses, where says
// (bareProcess or bareHarness), and returns its base URL, its process ID
// (0 in the harness) and how to stop it.
func bareUnderTest(ctx context.Context, where string, responses map[string][]byte) (base string, pid int, stop func() error, err error) {
	if where == bareHarness {
		b, err := startBare(bareHandler(responses))
		if err != nil {
			return "", 0, nil, fmt.Errorf("loadtest: bare handler: %w", err)
		}
		return b.base, 0, b.Close, nil
	}
	p, err := startBareProcess(ctx, responses, time.Minute)
	if err != nil {
		return "", 0, nil, err
	}
	return p.base, p.cmd.Process.Pid, func() error { return p.stop(30 * time.Second) }, nil
}

// warm sends unmeasured load for cfg.Warmup.
func warm(ctx context.Context, c *http.Client, t target, cfg config) {
	if cfg.Warmup > 0 {
		drive(ctx, c, t, cfg.Clients, bounds{duration: cfg.Warmup})
	}
}

func barePath(rows int) string { return "/bare/" + strconv.Itoa(rows) }

// checkRows makes sure a scoring response holds rows rows.
func checkRows(resp []byte, rows int) error {
	var v struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(resp, &v); err != nil {
		return fmt.Errorf("loadtest: the scoring response is not JSON: %w", err)
	}
	if len(v.Data) != rows {
		return fmt.Errorf("loadtest: the scoring response has %d rows for %d sent", len(v.Data), rows)
	}
	return nil
}
