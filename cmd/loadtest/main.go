package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if os.Getenv(bareProcessEnv) != "" {
		if err := serveBareProcess(ctx, os.Stdin, os.Stdout); err != nil {
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
	Clients     int
	Rounds      int
	Duration    time.Duration
	Warmup      time.Duration
	Timeout     time.Duration
	Rows        []int
	MaxRequests int64
	ServerBin   string
	ServerURL   string
	ModuleDir   string
	Path        string
	Bare        string // where the bare handler runs: bareProcess, bareHarness or bareBoth
	JSON        bool
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
		Clients:     32,
		Rounds:      3,
		Duration:    10 * time.Second,
		Warmup:      2 * time.Second,
		Timeout:     10 * time.Second,
		MaxRequests: 10_000_000,
		ModuleDir:   ".",
		Path:        "/webapi/DEFAULT/api/v1/services/iris/classify",
		Bare:        bareProcess,
	}
	rows := "1,100"
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.Clients, "clients", c.Clients, "concurrent clients, each with its own keep-alive connection")
	fs.IntVar(&c.Rounds, "rounds", c.Rounds, "scoring and bare runs, alternated, per request size; the ratio is their median")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "how long each scoring run lasts")
	fs.DurationVar(&c.Warmup, "warmup", c.Warmup, "unmeasured load before each scenario")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "timeout of one request")
	fs.StringVar(&rows, "rows", rows, "comma-separated rows per request, one scenario pair each")
	fs.Int64Var(&c.MaxRequests, "max-requests", c.MaxRequests, "most requests of one scoring run")
	fs.StringVar(&c.ServerBin, "server-bin", "", "standalone server binary to run (default: go build ./examples/standalone)")
	fs.StringVar(&c.ServerURL, "server-url", "", "base URL of a server that is already running, instead of starting one")
	fs.StringVar(&c.ModuleDir, "module", c.ModuleDir, "the scorehub module's directory, where the server is built")
	fs.StringVar(&c.Path, "path", c.Path, "path of the scoring endpoint on the server")
	fs.StringVar(&c.Bare, "bare", c.Bare, "where the bare handler runs: \"process\", a process of its own like the scoring server; \"harness\", this one; or \"both\", one in each")
	fs.BoolVar(&c.JSON, "json", false, "write the report as JSON")
	if err := fs.Parse(args); err != nil {
		return c, err
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
	switch {
	case c.Clients < 1 || c.Clients > maxClients:
		return c, fmt.Errorf("loadtest: -clients must be from 1 to %d", maxClients)
	case c.Rounds < 1 || c.Rounds > maxRounds:
		return c, fmt.Errorf("loadtest: -rounds must be from 1 to %d", maxRounds)
	case c.Duration <= 0 || c.Warmup < 0 || c.Timeout <= 0:
		return c, errors.New("loadtest: -duration and -timeout must be positive, -warmup not negative")
	case c.MaxRequests < 1:
		return c, errors.New("loadtest: -max-requests must be positive")
	case c.ServerBin != "" && c.ServerURL != "":
		return c, errors.New("loadtest: give -server-bin or -server-url, not both")
	case !strings.HasPrefix(c.Path, "/"):
		return c, fmt.Errorf("loadtest: -path %q must start with /", c.Path)
	case c.Bare != bareProcess && c.Bare != bareHarness && c.Bare != bareBoth:
		return c, fmt.Errorf("loadtest: -bare %q must be %q, %q or %q", c.Bare, bareProcess, bareHarness, bareBoth)
	}
	return c, nil
}

// targetRatio is what 1-row scoring should reach of the bare handler's
// requests per second.
const targetRatio = 0.8

// run measures and reports; progress goes to stderr, the report to stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		return err
	}
	base, pid, stop, err := serverUnderTest(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer func() {
		if serr := stop(); serr != nil {
			fmt.Fprintln(stderr, serr)
		}
	}()

	client := newClient(cfg.Clients, cfg.Timeout)
	defer client.CloseIdleConnections()
	responses := make(map[string][]byte, len(cfg.Rows))
	for _, rows := range cfg.Rows {
		resp, err := probe(ctx, client, target{url: base + cfg.Path, body: irisBody(rows)})
		if err != nil {
			return fmt.Errorf("loadtest: the scoring endpoint does not answer: %w", err)
		}
		if err := checkRows(resp, rows); err != nil {
			return err
		}
		responses[barePath(rows)] = resp
	}

	rep := report{
		Machine: currentMachine(), Clients: cfg.Clients, Rounds: cfg.Rounds,
		Duration: cfg.Duration.String(), Warmup: cfg.Warmup.String(), ScoringURL: base + cfg.Path,
	}
	var ceilings []*ceiling
	defer func() {
		for _, c := range ceilings {
			if serr := c.close(); serr != nil {
				fmt.Fprintln(stderr, serr)
			}
		}
	}()
	for _, where := range cfg.placements() {
		c, err := startCeiling(ctx, cfg, where, responses)
		if err != nil {
			return err
		}
		ceilings = append(ceilings, c)
		rep.Bare = append(rep.Bare, bareInfo{Where: where, URL: c.base + "/bare/{rows}"})
	}

	h := harness{cfg: cfg, scoringURL: base + cfg.Path, client: client, pid: pid, ceilings: ceilings, stderr: stderr}
	for _, rows := range cfg.Rows {
		if err := h.measure(ctx, rows, &rep); err != nil {
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

// ceiling is one running bare handler and the clients that drive it.
type ceiling struct {
	where  string // bareProcess or bareHarness
	base   string
	pid    int // the bare process's; 0 in the harness
	stop   func() error
	client *http.Client
}

// startCeiling starts the bare handler where says, serving responses.
func startCeiling(ctx context.Context, cfg config, where string, responses map[string][]byte) (*ceiling, error) {
	base, pid, stop, err := bareUnderTest(ctx, where, responses)
	if err != nil {
		return nil, err
	}
	return &ceiling{where: where, base: base, pid: pid, stop: stop, client: newClient(cfg.Clients, cfg.Timeout)}, nil
}

func (c *ceiling) close() error {
	c.client.CloseIdleConnections()
	return c.stop()
}

// harness is what a run measures with: the scoring server, its clients
// and the bare handlers.
type harness struct {
	cfg        config
	scoringURL string
	client     *http.Client // the scoring server's clients
	pid        int          // the scoring server's, 0 when not started here
	ceilings   []*ceiling
	stderr     io.Writer // progress
}

// measure runs the rounds of one request size: a scoring run, then as
// many requests to each bare handler, and adds their summaries and ratios
// to rep.
func (h *harness) measure(ctx context.Context, rows int, rep *report) error {
	cfg, client, ceilings := h.cfg, h.client, h.ceilings
	st := target{url: h.scoringURL, body: irisBody(rows)}
	fmt.Fprintf(h.stderr, "loadtest: %d-row requests: %v warm-up each, then %d rounds of %v scoring and as many requests bare\n",
		rows, cfg.Warmup, cfg.Rounds, cfg.Duration)
	bts := make([]target, len(ceilings))
	warm(ctx, client, st, cfg)
	for i, c := range ceilings {
		bts[i] = target{url: c.base + barePath(rows), body: st.body}
		warm(ctx, c.client, bts[i], cfg)
	}

	// Scoring and bare runs alternate, so that all see the same moments
	// of a shared machine; a ratio is the median of the rounds' ratios,
	// which one disturbed round does not move.
	var scoredAll result
	bareAll := make([]result, len(ceilings))
	ratios := make([]ratio, len(ceilings))
	for i, c := range ceilings {
		ratios[i] = ratio{Rows: rows, Bare: c.where}
	}
	boundary := ratio{Rows: rows}
	meter := cpuMeter{serverPID: h.pid}
	for round := range cfg.Rounds {
		s0 := meter.sample()
		r := drive(ctx, client, st, cfg.Clients, bounds{duration: cfg.Duration, requests: cfg.MaxRequests})
		r.cpu = s0.until(meter.sample())
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sent := r.ok + r.errors
		if sent == 0 {
			return fmt.Errorf("%w: scoring, %d rows, round %d", errNoRequests, rows, round+1)
		}
		scoringRPS := r.rps()
		progress := fmt.Sprintf("loadtest: round %d: scoring %.0f req/s", round+1, scoringRPS)
		bareRPS := make([]float64, len(ceilings))
		for i, c := range ceilings {
			// As many requests as scoring sent; the time cap only guards
			// against a bare run that stalls. The scoring server idles
			// meanwhile: its time is not the bare run's.
			bareMeter := cpuMeter{serverPID: c.pid}
			b0 := bareMeter.sample()
			b := drive(ctx, c.client, bts[i], cfg.Clients, bounds{duration: 4*cfg.Duration + 10*time.Second, requests: sent})
			b.cpu = b0.until(bareMeter.sample())
			if ctx.Err() != nil {
				return ctx.Err()
			}
			bareRPS[i] = b.rps()
			progress += fmt.Sprintf(", bare %s %.0f req/s", c.where, bareRPS[i])
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

	scored := summarize("scoring", rows, cfg.Clients, scoredAll)
	rep.Scenarios = append(rep.Scenarios, scored)
	for i, c := range ceilings {
		b := summarize("bare", rows, cfg.Clients, bareAll[i])
		b.Bare = c.where
		ra := &ratios[i]
		ra.Ratio = median(ra.Rounds)
		if rows == 1 {
			ra.Target = targetRatio
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

// serverUnderTest returns the base URL of the scoring server, its process
// ID (0 when it is not this harness's child) and how to stop it: the one
// -server-url names, or a standalone server started here.
func serverUnderTest(ctx context.Context, cfg config, stderr io.Writer) (base string, pid int, stop func() error, err error) {
	if cfg.ServerURL != "" {
		return strings.TrimRight(cfg.ServerURL, "/"), 0, func() error { return nil }, nil
	}
	tmp, err := os.MkdirTemp("", "scorehub-loadtest-")
	if err != nil {
		return "", 0, nil, fmt.Errorf("loadtest: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	bin := cfg.ServerBin
	if bin == "" {
		fmt.Fprintf(stderr, "loadtest: building ./examples/standalone in %s\n", cfg.ModuleDir)
		if bin, err = buildServer(ctx, cfg.ModuleDir, tmp); err != nil {
			return "", 0, nil, err
		}
	}
	srv, err := startServer(ctx, bin, filepath.Join(tmp, "data"), time.Minute)
	if err != nil {
		return "", 0, nil, err
	}
	fmt.Fprintf(stderr, "loadtest: server listening on %s\n", srv.base)
	return srv.base, srv.cmd.Process.Pid, func() error {
		err := srv.stop(30 * time.Second)
		return errors.Join(err, os.RemoveAll(tmp))
	}, nil
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

// irisFlowers are request rows of the iris endpoint, one per species and
// one in between.
var irisFlowers = [...]string{
	`{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}`,
	`{"sepal_length":6.4,"sepal_width":3.2,"petal_length":4.5,"petal_width":1.5}`,
	`{"sepal_length":6.3,"sepal_width":3.3,"petal_length":6.0,"petal_width":2.5}`,
	`{"sepal_length":5.9,"sepal_width":3.0,"petal_length":5.1,"petal_width":1.8}`,
}

// irisBody returns a scoring request of rows rows.
func irisBody(rows int) []byte {
	b := []byte(`{"data":[`)
	for i := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, irisFlowers[i%len(irisFlowers)]...)
	}
	return append(b, "]}"...)
}

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
