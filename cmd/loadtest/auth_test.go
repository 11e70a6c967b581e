package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/demo"
)

// irisPath is the standalone server's public iris endpoint.
const irisPath = "/webapi/DEFAULT/api/v1/services/iris/classify"

// standaloneDir holds the standalone server that the tests of -auth build
// once, when one has; TestMain removes it.
var standaloneDir string

// standaloneBinary builds the reference server, cmd/scorehub, once.
var standaloneBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "scorehub-loadtest-test-")
	if err != nil {
		return "", err
	}
	standaloneDir = dir
	return buildServer(context.Background(), "../..", dir)
})

// builtStandalone returns the reference server's binary, built once.
func builtStandalone(t *testing.T) string {
	t.Helper()
	bin, err := standaloneBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startStandalone starts the real standalone server with the admin
// password given, until the test ends.
func startStandalone(t *testing.T, adminPassword string, extra ...string) *serverProc {
	t.Helper()
	srv, err := startServer(context.Background(), builtStandalone(t), t.TempDir(), adminPassword, nil, time.Minute, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.stop(30 * time.Second); err != nil {
			t.Error(err)
		}
	})
	return srv
}

// score posts one iris row to url with the Authorization header auth, if
// any, and returns the status, the WWW-Authenticate header and the body.
func score(t *testing.T, url, auth string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(demo.IrisRequest(1)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("WWW-Authenticate"), body
}

// TestProtect makes the protected copy of the iris endpoint on the real
// server for each kind of credentials: it answers those credentials,
// refuses a request without them with a challenge of that kind only, and
// is gone, with its user, once removed.
func TestProtect(t *testing.T) {
	const password = "loadtest-admin-password"
	srv := startStandalone(t, password)
	ctx := context.Background()
	c := newClient(1, 10*time.Second)
	defer c.CloseIdleConnections()
	for _, kind := range authKinds {
		t.Run(kind, func(t *testing.T) {
			p, err := protect(ctx, c, srv.base, irisPath, kind, password)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(p.url, srv.base+"/webapi/loadtest-") || !strings.HasSuffix(p.url, "/api/v1/services/iris/classify") {
				t.Errorf("protected endpoint %s, want the iris endpoint in a group of its own", p.url)
			}
			auth, err := p.cred.fresh(ctx, time.Now().Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			wantPrefix := map[string]string{authBasic: "Basic ", authAPIToken: "apitoken ", authBearer: "Bearer "}[kind]
			if !strings.HasPrefix(auth, wantPrefix) {
				t.Errorf("Authorization %q, want %q…", auth, wantPrefix)
			}
			status, _, body := score(t, p.url, auth)
			if status != http.StatusOK || checkRows(body, 1) != nil {
				t.Errorf("with the credentials: %d %s", status, body)
			}
			status, challenge, body := score(t, p.url, "")
			wantChallenge := map[string]string{authBasic: `Basic realm="scorehub", charset="UTF-8"`,
				authAPIToken: `apitoken realm="scorehub"`, authBearer: `Bearer realm="scorehub"`}[kind]
			if status != http.StatusUnauthorized || challenge != wantChallenge {
				t.Errorf("without credentials: %d, WWW-Authenticate %q, %s; want 401 with %q, the one kind the group takes", status, challenge, body, wantChallenge)
			}
			if kind == authBearer {
				again, err := p.cred.fresh(ctx, time.Now().Add(time.Minute))
				if err != nil || again != auth {
					t.Errorf("an idToken valid for the next run is kept: %v", err)
				}
				// The server issues idTokens for 5 minutes.
				if _, err := p.cred.fresh(ctx, time.Now().Add(time.Hour)); err == nil || !strings.Contains(err.Error(), "-token-validity") {
					t.Errorf("a run that outlasts an idToken: %v, want an error naming -token-validity", err)
				}
			}

			user := strings.Split(p.url, "/")[4] // the group's name, and the user's
			if err := p.remove(ctx); err != nil {
				t.Fatal(err)
			}
			if status, _, body := score(t, p.url, auth); status != http.StatusNotFound && status != http.StatusUnauthorized {
				t.Errorf("after remove, the protected endpoint answers %d %s", status, body)
			}
			var se *statusError
			err = p.admin.call(ctx, http.MethodGet, "/api/v1/users/"+user, nil, nil)
			if !errors.As(err, &se) || se.status != http.StatusNotFound {
				t.Errorf("after remove, GET the user %s: %v, want a 404", user, err)
			}
			if status, _, _ := score(t, srv.base+irisPath, ""); status != http.StatusOK {
				t.Errorf("after remove, the public endpoint answers %d", status)
			}
		})
	}
}

// TestRunProtected runs the harness with -auth against the real server,
// started by the harness (-server-bin) and already running (-server-url),
// for a fraction of a second, and checks the report: a protected and an
// unprotected scenario per size, without errors, as many requests each, a
// ratio per size with the target at 1 row for Basic; and that nothing the
// run made is left on the running server.
func TestRunProtected(t *testing.T) {
	const password = "loadtest-admin-password"
	srv, bin := startStandalone(t, password), builtStandalone(t)
	tests := []struct {
		kind  string
		where []string
	}{
		{authBasic, []string{"-server-url", srv.base, "-admin-password", password}},
		{authAPIToken, []string{"-server-url", srv.base, "-admin-password", password}},
		{authBearer, []string{"-server-bin", bin}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			rep := runReport(t, append([]string{"-auth", tt.kind, "-clients", "2", "-rounds", "2", "-duration", "100ms", "-warmup", "20ms",
				"-rows", "1,3", "-json"}, tt.where...)...)
			if rep.Auth != tt.kind || !strings.Contains(rep.ScoringURL, "/webapi/loadtest-") || !strings.HasSuffix(rep.UnprotectedURL, irisPath) || len(rep.Bare) != 0 {
				t.Errorf("auth %q, protected %s, unprotected %s, bare %v", rep.Auth, rep.ScoringURL, rep.UnprotectedURL, rep.Bare)
			}
			checkScenarioPairs(t, rep, [2]string{"protected", "unprotected"}, 1, 3)
			if len(rep.Ratios) != 2 {
				t.Fatalf("ratios %+v, want one per size", rep.Ratios)
			}
			for i, ra := range rep.Ratios {
				wantTarget := map[bool]float64{true: authTargetRatio}[i == 0 && tt.kind == authBasic]
				if ra.Rows != []int{1, 3}[i] || ra.Bare != "" || len(ra.Rounds) != 2 || ra.Ratio != median(ra.Rounds) || ra.Ratio <= 0 || ra.Target != wantTarget {
					t.Errorf("ratio %+v, want the median of 2 rounds, target %v", ra, wantTarget)
				}
			}
		})
	}

	// The runs at -server-url removed what they made.
	checkNothingLeft(t, srv.base, password, "/api/v1/users", "/api/v1/webapigroups", "/api/v1/deployments", "/api/v1/apitokens")
}

// checkNothingLeft checks, logged in to the server at base as the admin
// with password, that each of the management API's lists holds nothing
// the harness made.
func checkNothingLeft(t *testing.T, base, password string, lists ...string) {
	t.Helper()
	admin := &manager{client: http.DefaultClient, base: base, user: adminName, password: password}
	if err := admin.login(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, list := range lists {
		var raw json.RawMessage
		if err := admin.call(context.Background(), http.MethodGet, list, nil, &raw); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte("loadtest")) {
			t.Errorf("GET %s after the runs: %s, want nothing the harness made", list, raw)
		}
	}
}

// TestRunProtectedRefused: with a wrong admin password, -auth stops before
// any load with an error that says so, and the server's public endpoint is
// untouched.
func TestRunProtectedRefused(t *testing.T) {
	srv := startStandalone(t, "loadtest-admin-password")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"-server-url", srv.base, "-auth", "basic", "-admin-password", "not-the-password",
		"-duration", "100ms", "-warmup", "0s", "-rows", "1"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "refused the admin password") || !strings.Contains(err.Error(), "-admin-password") {
		t.Errorf("run with a wrong admin password: %v, want an error that the server refused it", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("a refused run wrote a report: %s", stdout.String())
	}
	if status, _, body := score(t, srv.base+irisPath, ""); status != http.StatusOK {
		t.Errorf("the public endpoint answers %d %s", status, body)
	}
}
