package standalone

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
)

// TestAccessLog: by default every request leaves one "http request" line,
// the subject of an accepted token included; -access-log=false turns the
// lines off.
func TestAccessLog(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		on   bool
	}{
		{"default", nil, true},
		{"-access-log=false", []string{"-access-log=false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs testutil.LockedBuffer
			base, stop := startInProcess(t, &logs, tc.args...) // stopped below, to read the whole log
			token := adminToken(t, base)
			req, _ := http.NewRequest(http.MethodGet, base+"/executions/queues", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			line := logLine(logs.String(), "http request", "path=/executions/queues")
			if !tc.on {
				if line != "" {
					t.Errorf("with -access-log=false the request was logged: %s", line)
				}
				return
			}
			for _, want := range []string{"method=GET", "status=200", "subject=admin", "client=127.0.0.1", "duration="} {
				if !strings.Contains(line, want) {
					t.Errorf("access log line %q lacks %s", line, want)
				}
			}
			if strings.Contains(logs.String(), token) {
				t.Error("the log holds the token")
			}
		})
	}
}

// TestAccessLogFlag: the access log is on by default; the flag or
// SCOREHUB_ACCESS_LOG turns it off, the flag winning.
func TestAccessLogFlag(t *testing.T) {
	tests := []struct {
		args []string
		env  string
		want bool
	}{
		{nil, "", true},
		{[]string{"-access-log=false"}, "", false},
		{nil, "false", false},
		{[]string{"-access-log"}, "false", true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " ")+" SCOREHUB_ACCESS_LOG="+tt.env, func(t *testing.T) {
			c, err := parseConfig(tt.args, func(k string) string {
				if k == "SCOREHUB_ACCESS_LOG" {
					return tt.env
				}
				return ""
			}, io.Discard)
			if err != nil || c.AccessLog != tt.want {
				t.Errorf("AccessLog %v, error %v; want %v", c.AccessLog, err, tt.want)
			}
		})
	}
}

// TestRefusedCredentialsAreLogged replays what an attacker without a valid
// token tries: a forged token on a read route, and on a protected scoring
// group; then a valid token of a user outside the group's user groups. Each
// refusal leaves a record naming the route, the reason and the client (and
// the subject of the valid token), and none holds the token.
func TestRefusedCredentialsAreLogged(t *testing.T) {
	var logs testutil.LockedBuffer
	base, stop := startInProcess(t, &logs) // stopped below, to read the whole log
	admin := adminToken(t, base)
	// The demo's group, DEFAULT, takes only tokens of the user group risk,
	// which the admin is not in.
	do(t, http.MethodPut, base+"/api/v1/webapigroups/DEFAULT", admin,
		`{"name":"DEFAULT","description":"protected","auth":{"mode":"token","groups":["risk"]}}`, http.StatusOK)

	const forged = "eyJhbGciOiJSUzI1NiIsImtpZCI6Im5vbmUifQ.eyJzdWIiOiJhZG1pbiJ9.Zm9yZ2VkLXNpZ25hdHVyZQ"
	score := base + "/webapi/DEFAULT/api/v1/services/" + demoPath + "/" + demoAlias
	row := `{"data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`
	do(t, http.MethodGet, base+"/executions/queues", forged, "", http.StatusUnauthorized)
	do(t, http.MethodPost, score, forged, row, http.StatusUnauthorized)
	do(t, http.MethodPost, score, admin, row, http.StatusForbidden)
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	text := logs.String()
	for _, tc := range []struct {
		name string
		path string
		want []string
	}{
		{"forged token on a read route", "path=/executions/queues", []string{"level=WARN", "status=401", "type=invalid_token", "client=127.0.0.1", `route="GET /executions/queues"`}},
		{"forged token on protected scoring", "status=401", []string{"level=WARN", "path=/webapi/DEFAULT/", "type=invalid_token", "client=127.0.0.1"}},
		{"holder outside the user groups", "status=403", []string{"level=WARN", "path=/webapi/DEFAULT/", "type=forbidden", "client=127.0.0.1", "subject=admin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := logLine(text, "credentials refused", tc.path)
			if line == "" {
				t.Fatalf("no refusal record with %s in the log:\n%s", tc.path, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("refusal record %q lacks %s", line, w)
				}
			}
		})
	}
	for _, secret := range []string{forged, admin} {
		if strings.Contains(text, secret) {
			t.Errorf("the log holds a token:\n%s", text)
		}
	}
}

// adminToken returns an idToken of the admin.
func adminToken(t *testing.T, base string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/rest/tokenservice", nil)
	req.SetBasicAuth("admin", smokePassword)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var tok struct{ IDToken string }
	if err := json.NewDecoder(res.Body).Decode(&tok); err != nil || tok.IDToken == "" {
		t.Fatalf("the token service answered %d (%v), want an idToken", res.StatusCode, err)
	}
	return tok.IDToken
}

// do sends a request with the bearer token and the JSON body, if any, and
// fails the test unless the answer has the status.
func do(t *testing.T, method, url, token, body string, status int) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != status {
		t.Fatalf("%s %s: %d, want %d", method, url, res.StatusCode, status)
	}
}

// logLine returns the last line of logs that holds every one of parts.
func logLine(logs string, parts ...string) string {
	var found string
	for _, l := range strings.Split(logs, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			found = l
		}
	}
	return found
}

// slowLog is a standard error that takes delay over every write, as a
// terminal or a pipe whose reader lags may, and fails every write with
// fail when set.
type slowLog struct {
	delay time.Duration
	fail  error
	testutil.LockedBuffer
}

func (s *slowLog) Write(p []byte) (int, error) {
	time.Sleep(s.delay)
	if s.fail != nil {
		return 0, s.fail
	}
	return s.LockedBuffer.Write(p)
}

// TestLogFlushedAtExit: log lines are written in batches, and every one
// of them is written, whole, by the time run returns, however slow
// standard error is; a standard error that fails makes run fail.
func TestLogFlushedAtExit(t *testing.T) {
	logs := &slowLog{delay: 20 * time.Millisecond}
	base, stop := startInProcess(t, logs)
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			res, err := http.Get(base + "/executions/queues") // a 401: logged all the same
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
		})
	}
	wg.Wait()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if got := strings.Count(out, `msg="http request" method=GET path=/executions/queues`); got != n {
		t.Errorf("%d access log lines when run returned, want %d:\n%s", got, n, out)
	}
	if !strings.HasSuffix(out, "\n") || !strings.Contains(out, `msg="shutting down"`) {
		t.Errorf("the log lacks its last line when run returned:\n%s", out)
	}

	failing := &slowLog{fail: errors.New("broken pipe")}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-data", t.TempDir(), "-gc-min-heap", "0"}, smokeEnv, io.Discard, failing, func(string) { cancel() })
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "broken pipe") {
			t.Errorf("run with a failing standard error returned %v, want the write's error", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("run did not return within a minute of its context ending")
	}
}
