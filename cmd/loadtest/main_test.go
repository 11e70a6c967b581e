package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/internal/demo"
)

// fakeServerEnv makes the test binary act as the standalone server, which
// the harness runs as it would run the real one: "1" serves, "exit" fails
// at start.
const fakeServerEnv = "LOADTEST_FAKE_SERVER"

// fakeWantEnv, set to NAME=VALUE, makes the fake server refuse to start
// unless its environment has NAME set to VALUE.
const fakeWantEnv = "LOADTEST_FAKE_WANT_ENV"

func TestMain(m *testing.M) {
	if mode := os.Getenv(bareProcessEnv); mode != "" { // the harness started a peer process
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		err := servePeerProcess(ctx, mode, os.Stdin, os.Stdout)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	switch os.Getenv(fakeServerEnv) {
	case "1":
		os.Exit(fakeServer(os.Args[1:]))
	case "exit":
		fmt.Fprintln(os.Stderr, "standalone: cannot open the data directory")
		os.Exit(1)
	}
	code := m.Run()
	if standaloneDir != "" {
		os.RemoveAll(standaloneDir)
	}
	os.Exit(code)
}

// fakeServer takes the flags the harness gives the standalone server,
// prints the line it prints, serves irisLike until SIGINT, then exits 0.
func fakeServer(args []string) int {
	fs := flag.NewFlagSet("fake", flag.ContinueOnError)
	addr := fs.String("addr", "", "")
	fs.String("data", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if os.Getenv("SCOREHUB_ADMIN_PASSWORD") == "" {
		fmt.Fprintln(os.Stderr, "no admin password given")
		return 1
	}
	if want := os.Getenv(fakeWantEnv); want != "" {
		name, value, _ := strings.Cut(want, "=")
		if got := os.Getenv(name); got != value {
			fmt.Fprintf(os.Stderr, "%s is %q, want %q\n", name, got, value)
			return 1
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv := &http.Server{Handler: irisLike(nil)}
	go srv.Serve(ln)
	// Caught before the harness can know where it listens, and so stop it.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	fmt.Printf("some banner\n%shttp://%s\ndemo endpoint: ...\n", listeningPrefix, ln.Addr())
	<-sig
	srv.Close()
	return 0
}

// irisLike answers a POST to the iris endpoint with one object per row
// sent, as the real endpoint does, and counts the requests in n.
func irisLike(n *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/webapi/DEFAULT/api/v1/services/iris/classify" {
			http.Error(w, `{"error":{"type":"not_found","message":"no such endpoint"}}`, http.StatusNotFound)
			return
		}
		var req struct{ Data []json.RawMessage }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if n != nil {
			n.Add(1)
		}
		out := make([]map[string]string, len(req.Data))
		for i := range out {
			out[i] = map[string]string{"prediction(species)": "setosa"}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"data": out})
	})
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one value is every percentile", ms(7), 99, 7 * time.Millisecond},
		{"median of an odd count is the middle", ms(1, 2, 3, 4, 5), 50, 3 * time.Millisecond},
		{"median of an even count is the lower middle", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p50 of 1..100", ms(hundred...), 50, 50 * time.Millisecond},
		{"p90 of 1..100", ms(hundred...), 90, 90 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p99 of ten values is the largest", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{"p100 is the largest", ms(1, 2, 3), 100, 3 * time.Millisecond},
		{"a tiny percentile is the smallest", ms(4, 5, 6), 0.001, 4 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{0.7}, 0.7},
		{[]float64{0.9, 0.5, 0.7}, 0.7},
		{[]float64{0.9, 0.5, 0.7, 0.6}, 0.65},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.in)
		if got := median(tt.in); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
		if !slices.Equal(in, tt.in) {
			t.Errorf("median reordered its input to %v", tt.in)
		}
	}
}

func TestMerge(t *testing.T) {
	a := result{ok: 2, errors: 1, elapsed: time.Second, latencies: []time.Duration{1, 2}}
	b := result{ok: 3, elapsed: 2 * time.Second, latencies: []time.Duration{3, 4, 5}, firstError: "status 503"}
	got := a.merge(b)
	if got.ok != 5 || got.errors != 1 || got.elapsed != 3*time.Second || len(got.latencies) != 5 || got.firstError != "status 503" {
		t.Errorf("merge = %+v", got)
	}
	if s := summarize("scoring", 1, 1, got); s.RPS != 5.0/3 {
		t.Errorf("requests per second over merged rounds = %v, want 5/3", s.RPS)
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name   string
		stat   string
		want   time.Duration
		wantOK bool
	}{
		{"plain", "4242 (standalone) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 31 0 0 20 0 7 0", 2810 * time.Millisecond, true},
		{"name with spaces and parentheses", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0", 70 * time.Millisecond, true},
		{"cut short", "7 (x) R 1 7 7", 0, false},
		{"no name", "garbage", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseStat([]byte(tt.stat))
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("parseStat = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	r := result{ok: 4, errors: 1, elapsed: 2 * time.Second, firstError: "status 500",
		cpu:       cpuUse{harness: 8 * time.Millisecond, server: 4 * time.Millisecond},
		latencies: []time.Duration{4 * time.Millisecond, time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}}
	got := summarize("scoring", 100, 8, r)
	want := summary{Scenario: "scoring", Rows: 100, Clients: 8, Requests: 4, Errors: 1, Seconds: 2, RPS: 2,
		P50ms: 2, P90ms: 4, P99ms: 4, HarnessCPU: 1600, ServerCPU: 800, FirstError: "status 500"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

// TestDrive runs load against a test server, bounded by a request count,
// and checks that every request is counted once, as a success or an error.
func TestDrive(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(irisLike(&served))
	defer srv.Close()
	c := newClient(4, 10*time.Second)
	defer c.CloseIdleConnections()

	good := target{url: srv.URL + "/webapi/DEFAULT/api/v1/services/iris/classify", body: demo.IrisRequest(3)}
	r := drive(context.Background(), c, good, 4, bounds{duration: time.Minute, requests: 200})
	if r.ok != 200 || r.errors != 0 || len(r.latencies) != 200 || served.Load() != 200 {
		t.Errorf("ok %d, errors %d, %d latencies, %d served; want 200 requests, all answered: %s",
			r.ok, r.errors, len(r.latencies), served.Load(), r.firstError)
	}

	bad := target{url: srv.URL + "/elsewhere", body: demo.IrisRequest(1)}
	r = drive(context.Background(), c, bad, 2, bounds{duration: time.Minute, requests: 10})
	if r.ok != 0 || r.errors != 10 || !strings.HasPrefix(r.firstError, "status 404") {
		t.Errorf("ok %d, errors %d, first error %q; want 10 errors, a 404", r.ok, r.errors, r.firstError)
	}
}

func TestBareHandler(t *testing.T) {
	h := bareHandler(map[string][]byte{"/bare/1": []byte(`{"data":[{}]}` + "\n")})
	tests := []struct {
		name, method, path string
		wantStatus         int
		wantBody           string
	}{
		{"fixed response", http.MethodPost, "/bare/1", http.StatusOK, `{"data":[{}]}` + "\n"},
		{"unknown size", http.MethodPost, "/bare/2", http.StatusNotFound, "not found\n"},
		{"GET", http.MethodGet, "/bare/1", http.StatusNotFound, "not found\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(tt.method, tt.path, strings.NewReader(`{"data":[{"a":1}]}`)))
			if w.Code != tt.wantStatus || w.Body.String() != tt.wantBody {
				t.Errorf("%d %q, want %d %q", w.Code, w.Body, tt.wantStatus, tt.wantBody)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"defaults", nil, ""},
		{"zero clients", []string{"-clients", "0"}, "-clients"},
		{"zero rounds", []string{"-rounds", "0"}, "-rounds"},
		{"rows not a number", []string{"-rows", "1,x"}, "-rows"},
		{"no rows", []string{"-rows", "0"}, "-rows"},
		{"negative warm-up", []string{"-warmup", "-1s"}, "-warmup"},
		{"negative pause", []string{"-large-pause", "-1ms"}, "-large-pause"},
		{"binary and URL", []string{"-server-bin", "a", "-server-url", "http://b"}, "not both"},
		{"relative path", []string{"-path", "webapi"}, "must start with /"},
		{"stray argument", []string{"now"}, "unexpected"},
		{"bare handler nowhere", []string{"-bare", "elsewhere"}, "-bare"},
		{"bare handler everywhere", []string{"-bare", "all"}, `"both"`},
		{"unknown credentials", []string{"-auth", "digest"}, `-auth "digest" must be`},
		{"credentials and a bare handler", []string{"-auth", "basic", "-bare", "harness"}, "-auth or -bare"},
		{"credentials at a server without its password", []string{"-auth", "apitoken", "-server-url", "http://b"}, "needs -admin-password"},
		{"admin password for a server started here", []string{"-auth", "basic", "-admin-password", "x"}, "-admin-password is for -auth, -challenger or -monitor with -server-url"},
		{"admin password without credentials", []string{"-server-url", "http://b", "-admin-password", "x"}, "-admin-password is for -auth, -challenger or -monitor with -server-url"},
		{"unknown challenger", []string{"-challenger", "split"}, `-challenger "split" must be`},
		{"challenger and credentials", []string{"-challenger", "shadow", "-auth", "basic"}, "-auth or -challenger"},
		{"challenger and a bare handler", []string{"-challenger", "shadow", "-bare", "both"}, "-challenger or -bare"},
		{"challenger at a server without its password", []string{"-challenger", "shadow", "-server-url", "http://b"}, "-challenger with -server-url needs -admin-password"},
		{"admin password for a challenger at a server started here", []string{"-challenger", "shadow", "-admin-password", "x"}, "-admin-password is for -auth, -challenger or -monitor with -server-url"},
		{"monitor and credentials", []string{"-monitor", "-auth", "basic"}, "-auth or -monitor"},
		{"monitor and a bare handler", []string{"-monitor", "-bare", "process"}, "-monitor or -bare"},
		{"monitor and a challenger", []string{"-monitor", "-challenger", "shadow"}, "-challenger or -monitor"},
		{"monitor at a server without its password", []string{"-monitor", "-server-url", "http://b"}, "-monitor with -server-url needs -admin-password"},
		{"admin password for a monitor at a server started here", []string{"-monitor", "-admin-password", "x"}, "-admin-password is for -auth, -challenger or -monitor with -server-url"},
		{"a setting without a value", []string{"-server-env", "GOGC=400,GOMAXPROCS"}, `-server-env "GOGC=400,GOMAXPROCS": each must be NAME=VALUE`},
		{"a setting without a name", []string{"-server-env", "=400"}, "each must be NAME=VALUE"},
		{"a setting of a bad name", []string{"-server-env", "GO GC=400"}, "each must be NAME=VALUE"},
		{"settings for a running server", []string{"-server-url", "http://b", "-server-env", "GOGC=400"}, "-server-env is for a server the harness starts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig(tt.args, io.Discard)
			if tt.wantErr == "" {
				if err != nil || c.Clients != 32 || !cmp.Equal(c.ClientCounts, []int{16, 32}) || c.Large != 10_000 || c.Duration != 10*time.Second || !cmp.Equal(c.Rows, []int{1, 100}) || c.Bare != bareProcess || c.Auth != "" || c.Challenger != "" || c.Monitor {
					t.Errorf("parseConfig = %+v, %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

// TestRun runs the whole harness against a stand-in for the standalone
// server (this test binary in fakeServer mode) for a fraction of a second,
// with the bare handler in a process of its own (this test binary again),
// in the harness, and in both, and checks the JSON report: every scenario
// answered, each bare run sent exactly as many requests as its scoring
// run, and a ratio per size and place. Once the run is over, nothing
// serves at a bare handler's address.
func TestRun(t *testing.T) {
	for _, bare := range []string{bareProcess, bareHarness, bareBoth} {
		t.Run(bare, func(t *testing.T) { testRun(t, bare) })
	}
}

func testRun(t *testing.T, bare string) {
	t.Setenv(fakeServerEnv, "1")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{
		"-server-bin", os.Args[0], "-clients", "2,3", "-rounds", "2", "-duration", "100ms", "-warmup", "20ms",
		"-rows", "1,5", "-bare", bare, "-large", "40", "-large-requests", "3", "-json",
	}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report %q: %v", stdout.String(), err)
	}
	places := config{Bare: bare}.placements()
	type shape struct {
		Scenario string
		Bare     string
		Clients  int
		Rows     int
		Errors   int64
	}
	var got, want []shape
	for _, clients := range []int{2, 3} {
		for _, rows := range []int{1, 5} {
			want = append(want, shape{"scoring", "", clients, rows, 0})
			for _, where := range places {
				want = append(want, shape{"bare", where, clients, rows, 0})
			}
		}
	}
	for _, s := range rep.Scenarios {
		got = append(got, shape{s.Scenario, s.Bare, s.Clients, s.Rows, s.Errors})
		if s.Requests == 0 || s.RPS <= 0 || s.P50ms <= 0 || s.P99ms < s.P50ms {
			t.Errorf("%s %s %d rows: %+v", s.Scenario, s.Bare, s.Rows, s)
		}
		if s.HarnessCPU < 0 || s.ServerCPU < 0 || (s.Bare == bareHarness && s.ServerCPU != 0) {
			t.Errorf("%s %s %d rows: CPU per request %v harness, %v server", s.Scenario, s.Bare, s.Rows, s.HarnessCPU, s.ServerCPU)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("scenarios (-want +got):\n%s", diff)
	}
	for i, s := range rep.Scenarios {
		if s.Scenario != "scoring" {
			continue
		}
		for _, b := range rep.Scenarios[i+1 : i+1+len(places)] {
			if s.Requests != b.Requests {
				t.Errorf("%d rows: scoring answered %d requests, bare %s %d; want as many", s.Rows, s.Requests, b.Bare, b.Requests)
			}
		}
	}
	var ratios []shape
	for _, ra := range rep.Ratios {
		ratios = append(ratios, shape{"ratio", ra.Bare, ra.Clients, ra.Rows, 0})
		if len(ra.Rounds) != 2 || ra.Ratio != median(ra.Rounds) || ra.Ratio <= 0 {
			t.Errorf("%d rows, bare %s: ratio %v of rounds %v, want the median of 2", ra.Rows, ra.Bare, ra.Ratio, ra.Rounds)
		}
		if wantTarget := map[bool]float64{true: targetRatio}[ra.Rows == 1]; ra.Target != wantTarget {
			t.Errorf("%d rows, bare %s: target %v, want %v", ra.Rows, ra.Bare, ra.Target, wantTarget)
		}
	}
	want = want[:0]
	for _, clients := range []int{2, 3} {
		for _, rows := range []int{1, 5} {
			for _, where := range places {
				want = append(want, shape{"ratio", where, clients, rows, 0})
			}
		}
	}
	if diff := cmp.Diff(want, ratios); diff != "" {
		t.Errorf("ratios (-want +got):\n%s", diff)
	}
	wantBoundary := 0
	if bare == bareBoth {
		wantBoundary = 4
	}
	if len(rep.Boundary) != wantBoundary {
		t.Errorf("%d process-boundary ratios, want %d", len(rep.Boundary), wantBoundary)
	}
	for _, ra := range rep.Boundary {
		if len(ra.Rounds) != 2 || ra.Ratio != median(ra.Rounds) || ra.Ratio <= 0 {
			t.Errorf("%d rows: process boundary %v of rounds %v, want the median of 2", ra.Rows, ra.Ratio, ra.Rounds)
		}
	}
	if len(rep.Bare) != len(places) {
		t.Fatalf("report names %d bare handlers, want %d: %+v", len(rep.Bare), len(places), rep.Bare)
	}
	for i, b := range rep.Bare {
		if b.Where != places[i] {
			t.Errorf("bare handler %d ran in %q, want %q", i, b.Where, places[i])
		}
		bareURL := strings.Replace(b.URL, "{rows}", "1", 1)
		if res, err := http.Post(bareURL, "application/json", strings.NewReader(string(demo.IrisRequest(1)))); err == nil {
			res.Body.Close()
			t.Errorf("after the run, %s still answers %s", bareURL, res.Status)
		}
	}
	if rep.Machine.CPUs < 1 || rep.Machine.Go == "" {
		t.Errorf("machine %+v", rep.Machine)
	}
	checkLarge(t, rep.Large, 40, 2, 3)
}

// runReport runs the harness with args, which ask for -json, and
// returns its report.
func runReport(t *testing.T, args ...string) *report {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report %q: %v", stdout.String(), err)
	}
	return &rep
}

// checkScenarioPairs checks that rep's scenarios are, for each of rows
// in turn, the endpoint measured and its ceiling, names, each answering
// without errors, both as many requests.
func checkScenarioPairs(t *testing.T, rep *report, names [2]string, rows ...int) {
	t.Helper()
	type shape struct {
		Scenario string
		Rows     int
		Errors   int64
	}
	var got, want []shape
	for _, n := range rows {
		want = append(want, shape{names[0], n, 0}, shape{names[1], n, 0})
	}
	for _, s := range rep.Scenarios {
		got = append(got, shape{s.Scenario, s.Rows, s.Errors})
		if s.Requests == 0 || s.RPS <= 0 || s.P50ms <= 0 {
			t.Errorf("%s %d rows: %+v", s.Scenario, s.Rows, s)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("scenarios (-want +got):\n%s", diff)
	}
	for i := 0; i < len(rep.Scenarios); i += 2 {
		if a, b := rep.Scenarios[i], rep.Scenarios[i+1]; a.Requests != b.Requests {
			t.Errorf("%d rows: %s answered %d requests, %s %d; want as many", a.Rows, a.Scenario, a.Requests, b.Scenario, b.Requests)
		}
	}
}

// checkLarge checks the large-request comparison of a run of rounds
// rounds of n requests of rows rows: the scoring server, the floor and the
// naive server each answered every request, the floor and the naive
// server's CPU time was measured (both are the harness's children), and
// each ratio is the median of one per round.
func checkLarge(t *testing.T, lr *largeReport, rows, rounds, n int) {
	t.Helper()
	if lr == nil {
		t.Fatal("no large-request comparison in the report")
	}
	if lr.Rows != rows || lr.RequestBytes != len(demo.IrisRequest(rows)) || lr.ResponseBytes == 0 {
		t.Errorf("large: %d rows, %d bytes in, %d out; want %d rows, %d bytes in", lr.Rows, lr.RequestBytes, lr.ResponseBytes, rows, len(demo.IrisRequest(rows)))
	}
	var names []string
	for _, s := range lr.Servers {
		names = append(names, s.Server)
		if s.Requests != int64(rounds*n) || s.Errors != 0 || len(s.WallRounds) != rounds || s.WallMs != median(s.WallRounds) || s.WallMs <= 0 {
			t.Errorf("large, %s: %+v; want %d requests, no errors, a wall time per round", s.Server, s, rounds*n)
		}
		if s.Server != largeScoring && s.ServerCPUMs < 0 {
			t.Errorf("large, %s: server CPU %v", s.Server, s.ServerCPUMs)
		}
	}
	if diff := cmp.Diff([]string{largeScoring, largeFloor, largeNaive}, names); diff != "" {
		t.Errorf("large servers (-want +got):\n%s", diff)
	}
	if len(lr.SpeedupRounds) != rounds || lr.Speedup != median(lr.SpeedupRounds) || lr.Speedup <= 0 {
		t.Errorf("large: naive/scoring %v of rounds %v", lr.Speedup, lr.SpeedupRounds)
	}
}

// TestServerEnvParsed: -server-env's settings are kept in order, values
// with "=" whole.
func TestServerEnvParsed(t *testing.T) {
	c, err := parseConfig([]string{"-server-env", "GOGC=400,SCOREHUB_ACCESS_LOG=false,X=a=b"}, io.Discard)
	if want := []string{"GOGC=400", "SCOREHUB_ACCESS_LOG=false", "X=a=b"}; err != nil || !cmp.Equal(c.ServerEnv, want) {
		t.Errorf("ServerEnv = %q, %v; want %q", c.ServerEnv, err, want)
	}
}

// TestServerEnv: the settings given to startServer reach the server's
// environment; without them the fake server, which needs one, refuses to
// start.
func TestServerEnv(t *testing.T) {
	t.Setenv(fakeServerEnv, "1")
	t.Setenv(fakeWantEnv, "LOADTEST_SETTING=on")
	srv, err := startServer(context.Background(), os.Args[0], t.TempDir(), "pw", []string{"LOADTEST_SETTING=on"}, time.Minute)
	if err != nil {
		t.Fatalf("a server given the setting: %v", err)
	}
	if err := srv.stop(10 * time.Second); err != nil {
		t.Error(err)
	}
	srv, err = startServer(context.Background(), os.Args[0], t.TempDir(), "pw", nil, time.Minute)
	if err == nil {
		srv.stop(10 * time.Second)
	}
	if err == nil || !strings.Contains(err.Error(), `LOADTEST_SETTING is "", want "on"`) {
		t.Errorf("a server not given the setting: %v", err)
	}
}

// TestStartServerFails: a server that exits before it listens, or that
// cannot be started, is reported with what it wrote to stderr.
func TestStartServerFails(t *testing.T) {
	t.Setenv(fakeServerEnv, "exit")
	_, err := startServer(context.Background(), os.Args[0], t.TempDir(), "pw", nil, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "exited before listening") || !strings.Contains(err.Error(), "cannot open the data directory") {
		t.Errorf("a server that exits: %v", err)
	}
	_, err = startServer(context.Background(), os.Args[0]+"-missing", t.TempDir(), "pw", nil, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "loadtest: start ") {
		t.Errorf("a missing binary: %v", err)
	}
}

// TestBareUnderTest: the bare handler runs where -bare says, serves the
// responses it is given, and is gone once stopped.
func TestBareUnderTest(t *testing.T) {
	responses := map[string][]byte{"/bare/1": []byte(`{"data":[{"p":"q"}]}` + "\n")}
	for _, where := range []string{bareProcess, bareHarness} {
		t.Run(where, func(t *testing.T) {
			base, pid, stop, err := bareUnderTest(context.Background(), where, responses)
			if err != nil {
				t.Fatal(err)
			}
			if inProcess := where == bareProcess; inProcess != (pid != 0 && pid != os.Getpid()) {
				t.Errorf("-bare %s: pid %d (the harness is %d)", where, pid, os.Getpid())
			}
			res, err := http.Post(base+"/bare/1", "application/json", strings.NewReader(`{"data":[{"x":1}]}`))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK || !bytes.Equal(body, responses["/bare/1"]) {
				t.Errorf("POST /bare/1: %s %q", res.Status, body)
			}
			if err := stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
			if res, err := http.Post(base+"/bare/1", "application/json", strings.NewReader(`{}`)); err == nil {
				res.Body.Close()
				t.Errorf("after stop, %s still answers %s", base, res.Status)
			}
		})
	}
}

// TestServeBareProcess: the bare process serves the responses it reads
// until its context ends, and refuses input that is not a JSON object of
// bodies.
func TestServeBareProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serveBareProcess(ctx, strings.NewReader(`{"/bare/1":"eyJkYXRhIjpbXX0="}`), pw) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	base, ok := strings.CutPrefix(strings.TrimSpace(line), bareListening)
	if !ok {
		t.Fatalf("first line %q, want %q and the base URL", line, bareListening)
	}
	res, err := http.Post(base+"/bare/1", "application/json", strings.NewReader(`{"data":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(body) != `{"data":[]}` {
		t.Errorf("POST /bare/1: %s %q, want 200 {\"data\":[]}", res.Status, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serveBareProcess after its context ended: %v", err)
	}

	for _, in := range []string{"", "[1]", `{"/bare/1":1}`} {
		if err := serveBareProcess(context.Background(), strings.NewReader(in), io.Discard); err == nil || !strings.Contains(err.Error(), "read the responses") {
			t.Errorf("responses %q: %v, want an error about reading them", in, err)
		}
	}
}

// TestParseAuth: -auth takes each kind of credentials, and none, which is
// the default; at a running server it takes the admin password too.
func TestParseAuth(t *testing.T) {
	tests := []struct {
		args     []string
		wantAuth string
	}{
		{[]string{"-auth", "none"}, ""},
		{[]string{"-auth", "basic"}, authBasic},
		{[]string{"-auth", "apitoken"}, authAPIToken},
		{[]string{"-auth", "bearer"}, authBearer},
		{[]string{"-auth", "basic", "-server-url", "http://b", "-admin-password", "secret"}, authBasic},
	}
	for _, tt := range tests {
		c, err := parseConfig(tt.args, io.Discard)
		if err != nil || c.Auth != tt.wantAuth {
			t.Errorf("parseConfig(%q): -auth %q, %v; want %q", tt.args, c.Auth, err, tt.wantAuth)
		}
	}
}

func TestTableReport(t *testing.T) {
	rep := report{
		Machine: machine{CPU: "Test CPU", CPUs: 2, Go: "go1.25.0", OS: "linux/amd64"},
		Clients: []int{32}, Rounds: 3, Duration: "10s", Warmup: "2s", ScoringURL: "http://s/x",
		Bare: []bareInfo{{Where: bareProcess, URL: "http://b/bare/{rows}"}},
		Scenarios: []summary{
			{Scenario: "scoring", Clients: 32, Rows: 1, Requests: 1000, RPS: 100, P50ms: 1, P90ms: 2, P99ms: 3, HarnessCPU: 40, ServerCPU: 60},
			{Scenario: "bare", Bare: bareProcess, Clients: 32, Rows: 1, Requests: 1000, RPS: 125, P50ms: 0.5, P90ms: 1, P99ms: 1.5, HarnessCPU: 35, ServerCPU: 40},
		},
		Ratios: []ratio{{Rows: 1, Clients: 32, Bare: bareProcess, Ratio: 0.8, Rounds: []float64{0.75, 0.8, 0.9}, Target: 0.8, CPURatio: 0.75}},
	}
	const head = `clients 32, 3 rounds of a 10s scoring run and a bare run of as many requests, after 2s of warm-up
scoring http://s/x
`
	const machineLine = "machine Test CPU, 2 CPUs, go1.25.0 linux/amd64\n\n"
	const table = machineLine + `scenario  clients  rows  requests  errors  req/s  p50 ms  p90 ms  p99 ms
scoring   32       1     1000      0       100    1.000   2.000   3.000
bare      32       1     1000      0       125    0.500   1.000   1.500

scoring/bare req/s, 1 row, 32 clients: 0.80 median of 0.75, 0.80, 0.90 (target 0.80: met)
`
	check := func(name, want string) {
		t.Helper()
		var b bytes.Buffer
		if err := rep.writeTable(&b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, b.String()); diff != "" {
			t.Errorf("%s: table (-want +got):\n%s", name, diff)
		}
	}
	check("bare in a process of its own", head+"bare    http://b/bare/{rows} (in a process of its own)\n"+table+
		"CPU per request, 1 row, 32 clients: scoring 100.0 µs (clients 40.0 + server 60.0), bare 75.0 µs (clients 35.0 + server 40.0); bare/scoring 0.75; server scoring/bare 1.50\n")
	rep.ServerEnv = []string{"GOGC=400", "SCOREHUB_METRICS=false"}
	check("settings added to the server's environment", head+"        its server's environment adds GOGC=400 SCOREHUB_METRICS=false\n"+
		"bare    http://b/bare/{rows} (in a process of its own)\n"+table+
		"CPU per request, 1 row, 32 clients: scoring 100.0 µs (clients 40.0 + server 60.0), bare 75.0 µs (clients 35.0 + server 40.0); bare/scoring 0.75; server scoring/bare 1.50\n")
	rep.ServerEnv = nil

	inHarness := summary{Scenario: "bare", Clients: 32, Bare: bareHarness, Rows: 1, Requests: 1000, RPS: 125, P50ms: 0.5, P90ms: 1, P99ms: 1.5, HarnessCPU: 75}
	rep.Bare = []bareInfo{{Where: bareHarness, URL: "http://b/bare/{rows}"}}
	rep.Scenarios[1] = inHarness
	rep.Ratios[0].Bare = bareHarness
	check("bare in the harness", head+"bare    http://b/bare/{rows} (in the harness's process)\n"+table+
		"CPU per request, 1 row, 32 clients: scoring 100.0 µs (clients 40.0 + server 60.0), bare 75.0 µs (clients and handler); bare/scoring 0.75\n")

	inHarness.RPS, inHarness.HarnessCPU = 160, 60
	rep.Bare = []bareInfo{{Where: bareProcess, URL: "http://b/bare/{rows}"}, {Where: bareHarness, URL: "http://h/bare/{rows}"}}
	rep.Scenarios = append(rep.Scenarios[:1],
		summary{Scenario: "bare", Clients: 32, Bare: bareProcess, Rows: 1, Requests: 1000, RPS: 125, P50ms: 0.5, P90ms: 1, P99ms: 1.5, HarnessCPU: 35, ServerCPU: 40},
		inHarness)
	rep.Ratios = []ratio{
		{Rows: 1, Clients: 32, Bare: bareProcess, Ratio: 0.8, Rounds: []float64{0.75, 0.8, 0.9}, Target: 0.8, CPURatio: 0.75},
		{Rows: 1, Clients: 32, Bare: bareHarness, Ratio: 0.62, Rounds: []float64{0.6, 0.62, 0.7}, Target: 0.8, CPURatio: 0.6},
	}
	rep.Boundary = []ratio{{Rows: 1, Clients: 32, Ratio: 0.78, Rounds: []float64{0.78, 0.8, 0.7}}}
	check("bare in both places", head+`bare    http://b/bare/{rows} (in a process of its own)
bare    http://h/bare/{rows} (in the harness's process)
`+machineLine+`scenario        clients  rows  requests  errors  req/s  p50 ms  p90 ms  p99 ms
scoring         32       1     1000      0       100    1.000   2.000   3.000
bare (process)  32       1     1000      0       125    0.500   1.000   1.500
bare (harness)  32       1     1000      0       160    0.500   1.000   1.500

scoring/bare (process) req/s, 1 row, 32 clients: 0.80 median of 0.75, 0.80, 0.90 (target 0.80: met)
scoring/bare (harness) req/s, 1 row, 32 clients: 0.62 median of 0.60, 0.62, 0.70 (target 0.80: not met)
bare (process)/bare (harness) req/s, 1 row, 32 clients: 0.78 median of 0.78, 0.80, 0.70 (the process boundary alone)
CPU per request, 1 row, 32 clients: scoring 100.0 µs (clients 40.0 + server 60.0), bare (process) 75.0 µs (clients 35.0 + server 40.0); bare (process)/scoring 0.75; server scoring/bare (process) 1.50
CPU per request, 1 row, 32 clients: scoring 100.0 µs (clients 40.0 + server 60.0), bare (harness) 60.0 µs (clients and handler); bare (harness)/scoring 0.60
`)

	rep.Bare, rep.Boundary = nil, nil
	rep.Auth, rep.ScoringURL, rep.UnprotectedURL = authBasic, "http://s/webapi/loadtest-x/api/v1/services/iris/classify", "http://s/webapi/DEFAULT/api/v1/services/iris/classify"
	rep.Scenarios = []summary{
		{Scenario: "protected", Clients: 32, Rows: 1, Requests: 1000, RPS: 95, P50ms: 1, P90ms: 2, P99ms: 3, HarnessCPU: 40, ServerCPU: 65},
		{Scenario: "unprotected", Clients: 32, Rows: 1, Requests: 1000, RPS: 100, P50ms: 0.9, P90ms: 1.8, P99ms: 2.7, HarnessCPU: 40, ServerCPU: 60},
	}
	rep.Ratios = []ratio{{Rows: 1, Clients: 32, Ratio: 0.95, Rounds: []float64{0.95, 0.93, 0.97}, Target: authTargetRatio, CPURatio: 100.0 / 105}}
	check("protected against unprotected", `clients 32, 3 rounds of a 10s protected run and an unprotected run of as many requests, after 2s of warm-up
protected   http://s/webapi/loadtest-x/api/v1/services/iris/classify (Authorization: Basic)
unprotected http://s/webapi/DEFAULT/api/v1/services/iris/classify
`+machineLine+`scenario     clients  rows  requests  errors  req/s  p50 ms  p90 ms  p99 ms
protected    32       1     1000      0       95     1.000   2.000   3.000
unprotected  32       1     1000      0       100    0.900   1.800   2.700

protected/unprotected req/s, 1 row, 32 clients: 0.95 median of 0.95, 0.93, 0.97 (target 0.90: met)
CPU per request, 1 row, 32 clients: protected 105.0 µs (clients 40.0 + server 65.0), unprotected 100.0 µs (clients 40.0 + server 60.0); unprotected/protected 0.95; server protected/unprotected 1.08
`)

	rep.Auth, rep.UnprotectedURL = "", ""
	rep.ScoringURL = "http://s/webapi/DEFAULT/api/v1/services/loadtest-x/shadowed"
	rep.Pair = &pairReport{Measured: "shadowed", Ceiling: "plain", CeilingURL: "http://s/webapi/DEFAULT/api/v1/services/loadtest-x/plain",
		Model: "loadtest-x@1", Challenger: challengeShadow, ChallengerModel: "loadtest-x@2"}
	rep.Scenarios[0].Scenario, rep.Scenarios[1].Scenario = "shadowed", "plain"
	rep.Ratios[0].Target, rep.Ratios[0].Shadow = shadowTargetRatio, &shadowWork{Compared: 1900, Agreed: 1900, Skipped: 100}
	rep.Pair.Large = &pairLargeReport{Rows: 10_000, RequestBytes: 760_010, ResponseBytes: 2_405_011,
		Servers: []largeServer{
			{Server: "shadowed", Requests: 60, WallMs: 13, WallRounds: []float64{13, 12, 14}, ServerCPUMs: 20},
			{Server: "plain", Requests: 60, WallMs: 10, WallRounds: []float64{10, 10, 11}, ServerCPUMs: 10},
		},
		Wall: 1.3, WallRounds: []float64{1.3, 1.2, 1.27}, Target: shadowLargeTarget, CPU: 2, CPURounds: []float64{2, 2.1, 1.9},
		Shadow: &shadowWork{Compared: 660_000, Agreed: 660_000}}
	check("shadowed against plain", `clients 32, 3 rounds of a 10s shadowed run and a plain run of as many requests, after 2s of warm-up
shadowed http://s/webapi/DEFAULT/api/v1/services/loadtest-x/shadowed (loadtest-x@1, challenger loadtest-x@2 in shadow mode)
plain    http://s/webapi/DEFAULT/api/v1/services/loadtest-x/plain (loadtest-x@1)
`+machineLine+`scenario  clients  rows  requests  errors  req/s  p50 ms  p90 ms  p99 ms
shadowed  32       1     1000      0       95     1.000   2.000   3.000
plain     32       1     1000      0       100    0.900   1.800   2.700

shadowed/plain req/s, 1 row, 32 clients: 0.95 median of 0.95, 0.93, 0.97 (target 0.90: met)
  shadow meanwhile, warm-up included: 1900 rows compared (100.0% agreed), 100 skipped (5.0% of the rows offered: the server's shadow budget was spent and shed them), 0 failed executions
CPU per request, 1 row, 32 clients: shadowed 105.0 µs (clients 40.0 + server 65.0), plain 100.0 µs (clients 40.0 + server 60.0); plain/shadowed 0.95; server shadowed/plain 1.08

10000 rows, 760010 bytes in, 2405011 bytes out, one request at a time, shadowed and plain alternating:
  shadowed wall 13.00 ms (median of rounds 13.00, 12.00, 14.00), server CPU 20.00 ms per request, 60 requests, 0 errors
  plain    wall 10.00 ms (median of rounds 10.00, 10.00, 11.00), server CPU 10.00 ms per request, 60 requests, 0 errors
shadowed/plain wall: 1.30 median of 1.30, 1.20, 1.27 (target ≤ 1.2: not met)
shadowed/plain server CPU per request: 2.00 median of 2.00, 2.10, 1.90
shadow meanwhile, warm-up included: 660000 rows compared (100.0% agreed), 0 skipped, 0 failed executions
`)

	rep.ScoringURL = "http://s/webapi/DEFAULT/api/v1/services/loadtest-x/monitored"
	rep.Pair = &pairReport{Measured: "monitored", Ceiling: "unmonitored", CeilingURL: "http://s/webapi/DEFAULT/api/v1/services/loadtest-x/unmonitored",
		Model: "loadtest-x@1", Reference: &driftReference{Rows: 150, Features: []string{"a", "b", "c", "d"}, Prediction: "species"},
		Drift: &driftFigures{Rows: 100_000, Window: "1h", MaxRows: 100_000, Features: 4, Prediction: true}}
	rep.Scenarios[0].Scenario, rep.Scenarios[1].Scenario = "monitored", "unmonitored"
	rep.Ratios[0].Target, rep.Ratios[0].Shadow = monitorTargetRatio, nil
	rep.Pair.Large = &pairLargeReport{Rows: 10_000, RequestBytes: 760_010, ResponseBytes: 2_405_011,
		Servers: []largeServer{
			{Server: "monitored", Requests: 60, WallMs: 11, WallRounds: []float64{11, 11, 12}, ServerCPUMs: 11},
			{Server: "unmonitored", Requests: 60, WallMs: 10, WallRounds: []float64{10, 10, 11}, ServerCPUMs: 10},
		},
		Wall: 1.1, WallRounds: []float64{1.1, 1.1, 1.09}, Target: monitorLargeTarget, CPU: 1.1, CPURounds: []float64{1.1, 1.1, 1.1}}
	check("monitored against unmonitored", `clients 32, 3 rounds of a 10s monitored run and an unmonitored run of as many requests, after 2s of warm-up
monitored   http://s/webapi/DEFAULT/api/v1/services/loadtest-x/monitored (loadtest-x@1, monitor on with its defaults)
unmonitored http://s/webapi/DEFAULT/api/v1/services/loadtest-x/unmonitored (loadtest-x@1, monitor off)
`+machineLine+`scenario     clients  rows  requests  errors  req/s  p50 ms  p90 ms  p99 ms
monitored    32       1     1000      0       95     1.000   2.000   3.000
unmonitored  32       1     1000      0       100    0.900   1.800   2.700

monitored/unmonitored req/s, 1 row, 32 clients: 0.95 median of 0.95, 0.93, 0.97 (target 0.90: met)
CPU per request, 1 row, 32 clients: monitored 105.0 µs (clients 40.0 + server 65.0), unmonitored 100.0 µs (clients 40.0 + server 60.0); unmonitored/monitored 0.95; server monitored/unmonitored 1.08

10000 rows, 760010 bytes in, 2405011 bytes out, one request at a time, monitored and unmonitored alternating:
  monitored   wall 11.00 ms (median of rounds 11.00, 11.00, 12.00), server CPU 11.00 ms per request, 60 requests, 0 errors
  unmonitored wall 10.00 ms (median of rounds 10.00, 10.00, 11.00), server CPU 10.00 ms per request, 60 requests, 0 errors
monitored/unmonitored wall: 1.10 median of 1.10, 1.10, 1.09 (target ≤ 1.15: met)
monitored/unmonitored server CPU per request: 1.10 median of 1.10, 1.10, 1.10

monitored drift after the run: 100000 rows measured (the newest within 1h, at most 100000) of 4 inputs and the prediction, against a reference of 150 rows; unmonitored drift: not measured, its monitor off
`)
}

// TestNaiveHandler: the naive server answers every row sent with the rows
// echoed and the demo model's classification added, the same species as
// the iris process gives, and refuses a row without a measurement.
func TestNaiveHandler(t *testing.T) {
	iris, err := demo.Iris()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(naiveHandler(iris))
	defer srv.Close()
	res, err := http.Post(srv.URL+"/naive", "application/json", bytes.NewReader(demo.IrisRequest(4)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v", res.StatusCode, err)
	}
	want := []string{"setosa", "versicolor", "virginica", "virginica"}
	if len(got.Data) != len(want) {
		t.Fatalf("%d rows, want %d", len(got.Data), len(want))
	}
	for i, row := range got.Data {
		if row["prediction(species)"] != want[i] || row["sepal_length"] == nil {
			t.Errorf("row %d: %v, want the row with prediction(species) %s", i, row, want[i])
		}
		if c, ok := row["confidence("+want[i]+")"].(float64); !ok || c < 0.5 || c > 1 {
			t.Errorf("row %d: confidence %v", i, row["confidence("+want[i]+")"])
		}
	}
	res, err = http.Post(srv.URL+"/naive", "application/json", strings.NewReader(`{"data":[{"sepal_length":5}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("a row without three measurements: status %d, want 400", res.StatusCode)
	}
}

// TestThreadsCPU: the CPU time of this process's threads, read to the
// nanosecond, grows by about what a busy loop spends, which the 10 ms
// ticks of /proc/<pid>/stat could not show.
func TestThreadsCPU(t *testing.T) {
	before, ok := threadsCPU(os.Getpid())
	if !ok {
		t.Skip("no /proc/<pid>/task/*/schedstat on this system")
	}
	// The kernel adds a running thread's time to schedstat at its
	// scheduler ticks, not continuously: spin until a reading moves, which
	// one tick (at most 10 ms) makes it do, within a generous bound.
	start := time.Now()
	after, ok := before, true
	for ok && after == before && time.Since(start) < 5*time.Second {
		after, ok = threadsCPU(os.Getpid())
	}
	spun := time.Since(start)
	// A clock of 10 ms ticks would read a whole number of milliseconds;
	// one read to the nanosecond almost never does.
	if d := after - before; !ok || d <= 0 || d > spun+time.Second || d%time.Millisecond == 0 {
		t.Errorf("threadsCPU went from %v to %v (%v) over a %v busy loop", before, after, ok, spun)
	}
	if _, ok := threadsCPU(-1); ok {
		t.Error("threadsCPU of no process reported a time")
	}
}
