package standalone

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/testutil"
)

// sleepy runs the server with the demo sleep process and deploys it at
// DEFAULT/slow/sleep.
func sleepy(t *testing.T, opts harness.Options) (*harness.Server, string) {
	t.Helper()
	opts.Args = append(opts.Args, "-demo-sleep")
	s := harness.Start(t, opts)
	tok := s.AdminToken(t)
	if status, got := s.API(t, tok, "POST", "/api/v1/deployments", "application/json",
		`{"group":"DEFAULT","path":"slow","enabled":true,"endpoints":[{"alias":"sleep","process":"sleep","timeoutMs":600000}]}`); status != 201 {
		t.Fatalf("deploy: %d %v", status, got)
	}
	return s, tok
}

// submitSleep submits a job that sleeps for ms and returns its id.
func submitSleep(t *testing.T, s *harness.Server, tok string, ms int) string {
	t.Helper()
	status, got := s.API(t, tok, "POST", "/executions/jobs", "application/json",
		`{"queueName":"DEFAULT","process":"sleep","macros":{"ms":"`+strconv.Itoa(ms)+`"},"data":[{"x":1}]}`)
	id, _ := got["id"].(string)
	if status != http.StatusCreated || id == "" {
		t.Fatalf("submit a job: %d %v", status, got)
	}
	return id
}

// waitRunning waits until n requests or jobs run on the DEFAULT queue.
func waitRunning(t *testing.T, s *harness.Server, tok string, n int) {
	t.Helper()
	var status int
	var q map[string]any
	if !testutil.Poll(time.Minute, func() bool {
		status, q = s.API(t, tok, "GET", "/api/v1/queues/DEFAULT", "", "")
		return status == http.StatusOK && q["running"] == float64(n)
	}) {
		t.Fatalf("the DEFAULT queue never ran %d at once: %d %v", n, status, q)
	}
}

// TestShutdownDrainsRequestsAndStopsLongJobs starts the server, sends slow
// scoring requests and two jobs, and stops it with SIGTERM: the requests
// are answered 200, the job that fits in the grace period finishes, the one
// that does not is STOPPED, and the server exits 0.
func TestShutdownDrainsRequestsAndStopsLongJobs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, tok := sleepy(t, harness.Options{Dir: dir, Args: []string{"-grace", "10s"}})

	const requests = 3
	answers := make(chan int, requests)
	for range requests {
		go func() {
			res, err := http.Post(s.Base+"/webapi/DEFAULT/api/v1/services/slow/sleep?ms=5000", "application/json", strings.NewReader(`{"data":[{"x":1}]}`))
			if err != nil {
				answers <- 0
				return
			}
			res.Body.Close()
			answers <- res.StatusCode
		}()
	}
	// Long enough to be seen running together on a loaded machine, short
	// enough for the grace period.
	short, long := submitSleep(t, s, tok, 5000), submitSleep(t, s, tok, 600000)
	waitRunning(t, s, tok, requests+2)

	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	for range requests {
		if status := <-answers; status != http.StatusOK {
			t.Errorf("a request in flight at shutdown was answered %d, want 200", status)
		}
	}

	// The jobs' ends were stored: a restart shows them as they ended (it
	// would mark a job it found unended as ERROR interrupted).
	s = harness.Start(t, harness.Options{Dir: dir, Args: []string{"-demo-sleep"}})
	tok = s.AdminToken(t)
	for _, want := range []struct{ id, state string }{{short, "FINISHED"}, {long, "STOPPED"}} {
		status, j := s.API(t, tok, "GET", "/executions/jobs/"+want.id, "", "")
		if status != http.StatusOK || j["state"] != want.state {
			t.Errorf("job %s after the drain: %d %v, want %s", want.id, status, j, want.state)
		}
	}
}

// A restart ends the jobs the last run did not, as ERROR interrupted.
func TestRestartEndsInterruptedJobs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, tok := sleepy(t, harness.Options{Dir: dir})
	id := submitSleep(t, s, tok, 600000)
	waitRunning(t, s, tok, 1)
	s.Kill(t)

	s = harness.Start(t, harness.Options{Dir: dir, Args: []string{"-demo-sleep"}})
	status, got := s.API(t, s.AdminToken(t), "GET", "/executions/jobs/"+id, "", "")
	jerr, _ := got["error"].(map[string]any)
	if status != 200 || got["state"] != "ERROR" || jerr["type"] != "interrupted" {
		t.Errorf("interrupted job after restart: %d %v", status, got)
	}
}
