package durability

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// soakEnv names the variable that turns TestSoak on: a duration, such as
// 60s. CI sets it to 60s.
const soakEnv = "SCOREHUB_SOAK"

// Clients of TestSoak, by kind: how many of each run at once.
const (
	soakScore1   = 3 // 1-row iris requests
	soakScore100 = 2 // 100-row iris requests
	soakBad      = 1 // malformed requests, each with its expected 4xx
	soakSlow     = 3 // requests to the endpoint on the small queue
	soakWriters  = 2 // management writers
	soakTokens   = 1 // token issuance and use
	soakJobs     = 1 // jobs submitted, polled to their end and read
	soakModels   = 1 // model uploads, each promoted, scored and its predecessor deleted
	soakUsers    = 4 // htpasswd users the token client takes turns with
)

// soakHeapSlack is how far the heap in use may end above its size after
// the warm-up.
const soakHeapSlack = 64 << 20

// TestSoak runs the server and, for the duration SCOREHUB_SOAK
// gives, scores on the iris endpoint (1 and 100 rows, and bad requests),
// fills a small queue so that it answers 503, writes groups and
// deployments through the management API, issues and uses tokens, runs
// jobs, and uploads model versions, promoting each through an alias an
// endpoint names, all at once. Then it checks that no request got a 5xx other than
// the small queue's 503s, that every acknowledged write reads back as
// acknowledged, that the goroutines go back to their number before the
// load and the heap stays bounded, and that the server stops cleanly. It
// runs over each store in turn, for the duration each: the files of the
// data directory, and a PostgreSQL database (-store; a server of the
// test's own, skipped without one unless SCOREHUB_REQUIRE_ALL_TESTS=1).
func TestSoak(t *testing.T) {
	raw := os.Getenv(soakEnv)
	if raw == "" {
		// The soak is opt-in, also where SCOREHUB_REQUIRE_ALL_TESTS=1
		// makes missing components failures: it needs nothing installed,
		// only time. .ci/run sets SCOREHUB_SOAK, so CI runs it.
		t.Skipf("set %s to a duration (%s=60s) to run the soak test", soakEnv, soakEnv)
	}
	duration, err := time.ParseDuration(raw)
	if err != nil || duration <= 0 {
		t.Fatalf("%s=%q is not a positive duration", soakEnv, raw)
	}
	t.Run("file", func(t *testing.T) { soak(t, duration, nil) })
	t.Run("postgres", func(t *testing.T) {
		pg := pgtest.New(t)
		soak(t, duration, []string{"-store", pg.NewDB(t)})
	})
}

// soak is TestSoak over the store storeArgs name, nil for the data
// directory's files.
func soak(t *testing.T, duration time.Duration, storeArgs []string) {
	dir := t.TempDir()
	users := soakUsersFile(t, dir)
	validity := max(time.Hour, 2*duration)
	srv := harness.Start(t, harness.Options{Dir: dir, Args: append([]string{"-users", users, "-grace", "10s",
		"-token-validity", validity.String(), "-demo-sleep", "-debug-addr", "127.0.0.1:0"}, storeArgs...)})
	profiles := srv.Profiles(t)
	base := srv.Base

	stats := &soakStats{t: t, counts: map[string]map[int]int{}, took: map[string][]time.Duration{}}
	c := newCrashClient(base)
	c.observe = func(method, path string, status int, took time.Duration) {
		stats.record(soakKind(method, path), status, took)
	}
	c.token = c.adminToken(t)
	model, err := os.ReadFile(crashModelFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ method, path, body string }{
		{"PUT", "/api/v1/queues/soak-slow", `{"maxConcurrent":1,"maxWaiting":1}`},
		{"POST", "/api/v1/webapigroups", `{"name":"soak"}`},
		{"POST", "/api/v1/deployments", `{"group":"soak","path":"slow","endpoints":[{"alias":"sleep","process":"sleep","queue":"soak-slow"}]}`},
		{"POST", soakModelVersions + "0", string(model)},
		{"PUT", "/api/v1/models/soak-m/aliases/prod", `{"version":1}`},
		{"POST", "/api/v1/deployments", `{"group":"soak","path":"model","endpoints":[{"alias":"species","model":"soak-m@prod"}]}`},
	} {
		if status, got, err := c.do(w.method, w.path, "application/json", "", w.body); err != nil || status != http.StatusCreated {
			t.Fatalf("%s %s: %d %v %v", w.method, w.path, status, got, err)
		}
	}

	// Warm-up: one round of every client, so that what is made once (the
	// queue's workers, pools, the limiters) is there before the baseline.
	clients := soakClients(c, stats, users, string(model))
	for _, cl := range clients {
		cl.run(time.Time{})
		if t.Failed() {
			t.Fatalf("warm-up: the %s client's first round failed", cl.name)
		}
	}
	c.close()
	baseline := soakSettledGoroutines(t, profiles)
	warmHeap := profiles.HeapInuse(t)
	t.Logf("after the warm-up: %d goroutines, %.1f MiB heap in use", baseline, float64(warmHeap)/(1<<20))

	until := time.Now().Add(duration)
	var maxHeap atomic.Uint64
	maxHeap.Store(warmHeap)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for time.Now().Before(until) {
			time.Sleep(time.Second)
			if h := profiles.HeapInuse(t); h > maxHeap.Load() {
				maxHeap.Store(h)
			}
		}
	}()
	var wg sync.WaitGroup
	for _, cl := range clients {
		for range cl.n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl.run(until)
			}()
		}
	}
	writers := make([]*crashWriter, soakWriters)
	var acked atomic.Int64
	for i := range writers {
		writers[i] = newCrashWriter(i, rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i))))
		wg.Add(1)
		go func() {
			defer wg.Done()
			writers[i].run(t, c, &acked, until)
		}()
	}
	wg.Wait()
	<-sampled

	// No lost write: each writer's records read back as last acknowledged.
	for _, w := range writers {
		if w.pending != nil {
			t.Errorf("writer %d: %s %s got no answer: %v", w.id, w.pending.method, w.pending.path, w.pending.want)
		}
		w.reconcile(t, 0, c)
	}
	c.close()

	endHeap := profiles.HeapInuse(t)
	if m := maxHeap.Load(); endHeap > m {
		maxHeap.Store(endHeap)
	}
	goroutines, dump := soakGoroutinesBackTo(t, profiles, baseline)
	stats.report(t, acked.Load())
	t.Logf("heap in use: %.1f MiB after the warm-up, %.1f MiB at most, %.1f MiB at the end; goroutines: %d before, %d after",
		float64(warmHeap)/(1<<20), float64(maxHeap.Load())/(1<<20), float64(endHeap)/(1<<20), baseline, goroutines)
	if endHeap > warmHeap+soakHeapSlack {
		t.Errorf("heap in use grew from %d to %d bytes, more than %d", warmHeap, endHeap, soakHeapSlack)
	}
	if goroutines > baseline {
		t.Errorf("%d goroutines after the load, %d before it:\n%s", goroutines, baseline, dump)
	}

	if err := srv.Stop(); err != nil {
		t.Error(err)
	}
	if errs := soakLogErrors(srv.Stderr()); len(errs) > 0 {
		t.Errorf("the server logged %d errors other than full queues, the first:\n%s", len(errs), strings.Join(errs, "\n"))
	}
}

// soakClient is one kind of client: n of them run at once, each doing one
// round after another until the deadline.
type soakClient struct {
	name  string
	n     int
	round func() // one request, or a few that belong together, checked
}

// run does rounds until the deadline; a zero deadline means one round.
func (c soakClient) run(until time.Time) {
	c.round()
	for time.Now().Before(until) {
		c.round()
	}
}

// soakIrisRow is a 1-row request's row.
const soakIrisRow = `{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}`

// soakRowArray is a JSON array of n iris rows; soakRows is a scoring
// request's body of them.
func soakRowArray(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(soakIrisRow+",", n), ",") + "]"
}

func soakRows(n int) string { return `{"data":` + soakRowArray(n) + `}` }

// soakModelVersions is where TestSoak uploads versions of its model, the
// example model of docs/models.md, with metadata in the query; a description
// follows.
const soakModelVersions = "/api/v1/models/soak-m/versions?label=species&classes=setosa,versicolor,virginica" +
	"&features=sepal_length,sepal_width,petal_length,petal_width&description=soak+upload+"

// soakClients builds every kind of client but the management writers.
func soakClients(c *crashClient, stats *soakStats, usersFile, model string) []soakClient {
	one, hundred := soakRows(1), soakRows(100)
	score := func(rows int, body string) func() {
		kind := "POST iris, 1 row"
		if rows > 1 {
			kind = fmt.Sprintf("POST iris, %d rows", rows)
		}
		return func() {
			status, got, err := soakPost(c, stats, kind, harness.IrisURL, "application/json", body)
			if err != nil {
				stats.fail("%d-row scoring: %v", rows, err)
				return
			}
			if data, _ := got["data"].([]any); status != http.StatusOK || len(data) != rows {
				stats.fail("%d-row scoring: %d with %d rows, want 200 with %d", rows, status, len(data), rows)
			}
		}
	}
	bad := []struct {
		contentType, path, body string
		status                  int
		errType                 string
	}{
		{"application/json", harness.IrisURL, `{"data":[{"sepal_length":`, http.StatusBadRequest, ""},
		{"text/plain", harness.IrisURL, one, http.StatusUnsupportedMediaType, ""},
		{"application/json", "/webapi/DEFAULT/api/v1/services/nowhere/none", one, http.StatusNotFound, ""},
		{"application/json", harness.IrisURL, `{"data":[{"sepal_length":"long","sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`, http.StatusBadRequest, ""},
		{"application/json", harness.IrisURL, `{"data":[{"sepal_length":{"cm":5}}]}`, http.StatusBadRequest, ""},
	}
	var next atomic.Int64
	var issued atomic.Int64
	var uploads atomic.Int64
	return []soakClient{
		{name: "score 1 row", n: soakScore1, round: score(1, one)},
		{name: "score 100 rows", n: soakScore100, round: score(100, hundred)},
		{name: "bad request", n: soakBad, round: func() {
			b := bad[int(next.Add(1))%len(bad)]
			status, got, err := soakPost(c, stats, "POST scoring, bad request", b.path, b.contentType, b.body)
			e, _ := got["error"].(map[string]any)
			if err != nil || status != b.status || e["type"] == nil {
				stats.fail("bad request to %s (%.30q): %d %v %v, want %d with an error type", b.path, b.body, status, got, err, b.status)
			}
		}},
		{name: "slow endpoint", n: soakSlow, round: func() {
			status, got, err := soakPost(c, stats, soakSlowKind, "/webapi/soak/api/v1/services/slow/sleep?ms=20", "application/json", `{"data":[{"a":1}]}`)
			e, _ := got["error"].(map[string]any)
			switch {
			case err != nil:
				stats.fail("slow endpoint: %v", err)
			case status == http.StatusServiceUnavailable && e["type"] == "queue_full":
			case status != http.StatusOK:
				stats.fail("slow endpoint: %d %v, want 200 or 503 queue_full", status, got)
			}
		}},
		{name: "tokens", n: soakTokens, round: func() {
			// One login every 1.5 s keeps under the token service's rate
			// limits: per address 1/s, per user 1 in 6 s after a burst.
			time.Sleep(1500 * time.Millisecond)
			i := int(issued.Add(1))
			if i%4 == 0 {
				if status, _ := soakLogin(c, "nobody", "wrong"); status != http.StatusUnauthorized {
					stats.fail("token with a wrong password: %d, want 401", status)
				}
				return
			}
			user := "soak" + strconv.Itoa(i%soakUsers)
			status, tok := soakLogin(c, user, soakPassword(user))
			if status != http.StatusOK || tok == "" {
				stats.fail("token for %s: %d", user, status)
				return
			}
			uc := &crashClient{base: c.base, token: tok, client: c.client, observe: c.observe}
			if status, got, err := uc.do(http.MethodGet, "/api/v1/webapigroups/DEFAULT", "", "", ""); err != nil || status != http.StatusOK {
				stats.fail("reading with %s's token: %d %v %v", user, status, got, err)
			}
			if status, got, err := uc.do(http.MethodPost, "/api/v1/webapigroups", "application/json", "", `{"name":"not-allowed"}`); err != nil || status != http.StatusForbidden {
				stats.fail("writing with %s's token: %d %v %v, want 403", user, status, got, err)
			}
		}},
		{name: "models", n: soakModels, round: func() {
			// A new version of the same file (the description differs),
			// the alias moved to it, the endpoint naming the alias scored,
			// and the version before deleted, so that the model stays small.
			time.Sleep(100 * time.Millisecond)
			status, got, err := c.do(http.MethodPost, soakModelVersions+strconv.Itoa(int(uploads.Add(1))), "application/json", "", model)
			v, _ := got["version"].(float64)
			if err != nil || status != http.StatusCreated || v < 2 {
				stats.fail("model upload: %d %v %v, want 201 and a new version", status, got, err)
				return
			}
			if status, got, err := c.do(http.MethodPut, "/api/v1/models/soak-m/aliases/prod", "application/json", "", fmt.Sprintf(`{"version":%d}`, int(v))); err != nil || status != http.StatusOK {
				stats.fail("promoting version %d: %d %v %v", int(v), status, got, err)
				return
			}
			status, got, err = soakPost(c, stats, "POST model endpoint, 1 row", "/webapi/soak/api/v1/services/model/species", "application/json", one)
			if data, _ := got["data"].([]any); err != nil || status != http.StatusOK || len(data) != 1 || data[0].(map[string]any)["prediction(species)"] != "setosa" {
				stats.fail("scoring the model endpoint: %d %v %v, want one setosa row", status, got, err)
			}
			if status, got, err := c.do(http.MethodDelete, fmt.Sprintf("/api/v1/models/soak-m/versions/%d", int(v)-1), "", "", ""); err != nil || status != http.StatusNoContent {
				stats.fail("deleting version %d: %d %v %v", int(v)-1, status, got, err)
			}
		}},
		{name: "jobs", n: soakJobs, round: func() {
			status, got, err := c.do(http.MethodPost, "/executions/jobs", "application/json", "", `{"process":"iris","data":`+soakRowArray(10)+`}`)
			id, _ := got["id"].(string)
			if err != nil || status != http.StatusCreated || id == "" {
				stats.fail("submit a job: %d %v %v", status, got, err)
				return
			}
			end := time.Now().Add(time.Minute)
			for {
				status, got, err = c.do(http.MethodGet, "/executions/jobs/"+id, "", "", "")
				if err != nil || status != http.StatusOK {
					stats.fail("job %s: %d %v %v", id, status, got, err)
					return
				}
				if s := jobs.State(got["state"].(string)); s.Final() {
					if s != jobs.StateFinished {
						stats.fail("job %s ended %s: %v", id, s, got)
						return
					}
					break
				}
				if time.Now().After(end) {
					stats.fail("job %s still %s after a minute", id, got["state"])
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			status, got, err = c.do(http.MethodGet, "/executions/jobs/"+id+"/result", "", "", "")
			if rows, _ := got["data"].([]any); err != nil || status != http.StatusOK || len(rows) != 10 {
				stats.fail("result of job %s: %d with %d rows %v, want 200 with 10", id, status, len(rows), err)
			}
		}},
	}
}

// soakPost sends a scoring request through c's client, with no token, and
// counts its answer under kind.
func soakPost(c *crashClient, stats *soakStats, kind, path, contentType, body string) (int, map[string]any, error) {
	req, err := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", contentType)
	status, got, err := c.roundTrip(req, func(status int, d time.Duration) { stats.record(kind, status, d) })
	if err == nil && got == nil {
		err = fmt.Errorf("POST %s answered %d with an empty body", path, status)
	}
	if err != nil {
		return 0, nil, err
	}
	return status, got, nil
}

// soakLogin asks the token service for a token with HTTP Basic.
func soakLogin(c *crashClient, user, password string) (int, string) {
	req, _ := http.NewRequest(http.MethodGet, c.base+"/api/rest/tokenservice", nil)
	req.SetBasicAuth(user, password)
	start := time.Now()
	res, err := c.client.Do(req)
	if err != nil {
		return 0, ""
	}
	defer res.Body.Close()
	var got struct{ IDToken string }
	json.NewDecoder(res.Body).Decode(&got)
	c.observe(http.MethodGet, "/api/rest/tokenservice", res.StatusCode, time.Since(start))
	return res.StatusCode, got.IDToken
}

// bcryptMinCost is the least bcrypt cost a users file may have.
const bcryptMinCost = 10

func soakPassword(user string) string { return "password of " + user }

// soakUsersFile writes an htpasswd file of the users soak0… and returns
// its path.
func soakUsersFile(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for i := range soakUsers {
		user := "soak" + strconv.Itoa(i)
		// The least cost a users file may have: under the race detector
		// every step up doubles a login's seconds.
		hash, err := accounts.HashPassword(soakPassword(user), bcryptMinCost)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s:%s\n", user, hash)
	}
	path := filepath.Join(dir, "users.htpasswd")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// soakSlowKind is the route of the requests to the endpoint on the small
// queue, the one route where a 503 is intended.
const soakSlowKind = "POST slow endpoint (small queue)"

// soakKind names the route of a management or token request for the
// figures.
func soakKind(method, path string) string {
	path, _, _ = strings.Cut(path, "?")
	switch {
	case strings.HasPrefix(path, "/executions/jobs/") && strings.HasSuffix(path, "/result"):
		return method + " /executions/jobs/{id}/result"
	case strings.HasPrefix(path, "/executions/jobs/"):
		return method + " /executions/jobs/{id}"
	case strings.HasPrefix(path, "/api/v1/deployments/"):
		return method + " /api/v1/deployments/{group}/{path}"
	case strings.HasPrefix(path, "/api/v1/webapigroups/"):
		return method + " /api/v1/webapigroups/{group}"
	case strings.HasPrefix(path, "/api/v1/models/") && strings.Contains(path, "/versions/"):
		return method + " /api/v1/models/{name}/versions/{version}"
	}
	return method + " " + path
}

// soakStats counts answers by route and status, and keeps their latencies.
// It is safe for concurrent use.
type soakStats struct {
	t      *testing.T
	mu     sync.Mutex
	counts map[string]map[int]int
	took   map[string][]time.Duration
	fails  atomic.Int64
}

func (s *soakStats) record(kind string, status int, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts[kind] == nil {
		s.counts[kind] = map[int]int{}
	}
	s.counts[kind][status]++
	s.took[kind] = append(s.took[kind], took)
}

// fail reports a wrong answer; past the first 20 it only counts them.
func (s *soakStats) fail(format string, args ...any) {
	if n := s.fails.Add(1); n <= 20 {
		s.t.Errorf(format, args...)
	}
}

// report logs the figures and fails on any 5xx but the slow endpoint's
// 503s, and when that endpoint never answered 503.
func (s *soakStats) report(t *testing.T, acked int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kinds := make([]string, 0, len(s.counts))
	for k := range s.counts {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var b strings.Builder
	fmt.Fprintf(&b, "%-42s %8s %8s %8s %8s %9s\n", "route", "requests", "2xx", "4xx", "5xx", "p99")
	total, intended := 0, 0
	for _, k := range kinds {
		var n, ok, client, server int
		for status, c := range s.counts[k] {
			n += c
			switch {
			case status < 300:
				ok += c
			case status < 500:
				client += c
			default:
				server += c
				if k == soakSlowKind && status == http.StatusServiceUnavailable {
					intended += c
					continue
				}
				t.Errorf("%s answered %d %d times", k, status, c)
			}
		}
		total += n
		d := s.took[k]
		slices.Sort(d)
		fmt.Fprintf(&b, "%-42s %8d %8d %8d %8d %9s\n", k, n, ok, client, server, d[min(len(d)-1, len(d)*99/100)].Round(10*time.Microsecond))
	}
	t.Logf("%d requests, %d management writes acknowledged, %d intended 503s (queue full), %d wrong answers:\n%s",
		total, acked, intended, s.fails.Load(), b.String())
	if intended == 0 {
		t.Errorf("the slow endpoint's small queue never answered 503: the test did not fill it")
	}
}

// soakSettledGoroutines returns the number of goroutines in the server once
// it has stopped falling: connections closed a moment ago take a moment to
// end.
func soakSettledGoroutines(t *testing.T, p *harness.Profiles) int {
	n := p.Goroutines(t)
	for range 40 {
		time.Sleep(50 * time.Millisecond)
		m := p.Goroutines(t)
		if m >= n {
			return n
		}
		n = m
	}
	return n
}

// soakGoroutinesBackTo waits up to 30 s for the number of goroutines in the
// server to fall to baseline, and returns it, with a dump of them when it
// did not.
func soakGoroutinesBackTo(t *testing.T, p *harness.Profiles, baseline int) (int, string) {
	var n int
	if testutil.Poll(30*time.Second, func() bool { n = p.Goroutines(t); return n <= baseline }) {
		return n, ""
	}
	return n, p.GoroutineDump(t)
}

// soakLogErrors returns the first error records of the server's log other
// than full queues'.
func soakLogErrors(log string) []string {
	var first []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "level=ERROR") && !strings.Contains(line, "type=queue_full") && len(first) < 10 {
			first = append(first, line)
		}
	}
	return first
}
