package standalone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/tokens"
)

// TestSmoke runs the server in-process for a moment: it listens, the demo
// endpoint classifies a row, the token service issues a token for the admin
// password, and it stops cleanly when its context ends. The end-to-end
// suites, which run the built server as a process, are in the e2e module.
func TestSmoke(t *testing.T) {
	base, stop := startInProcess(t, io.Discard)
	res, err := http.Post(base+"/webapi/DEFAULT/api/v1/services/iris/classify", "application/json",
		strings.NewReader(`{"data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var scored struct{ Data []map[string]any }
	err = json.NewDecoder(res.Body).Decode(&scored)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || len(scored.Data) != 1 || scored.Data[0]["prediction(species)"] != "setosa" {
		t.Errorf("the demo endpoint answered %d %v (%v), want one setosa row", res.StatusCode, scored.Data, err)
	}

	req, _ := http.NewRequest(http.MethodGet, base+"/api/rest/tokenservice", nil)
	req.SetBasicAuth("admin", smokePassword)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct{ IDToken string }
	err = json.NewDecoder(res.Body).Decode(&tok)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || tok.IDToken == "" {
		t.Errorf("the token service answered %d (%v), want an idToken", res.StatusCode, err)
	}

	// Without an OpenID Connect provider the exchange is not served, so
	// the document does not describe it.
	if documentsExchange(t, base) {
		t.Errorf("the OpenAPI document describes %s, which a server without -oidc-issuer does not serve", tokens.PathExchange)
	}

	if err := stop(); err != nil {
		t.Error(err)
	}
}

// documentsExchange reports whether the OpenAPI document the server at base
// serves describes the token exchange route.
func documentsExchange(t *testing.T, base string) bool {
	t.Helper()
	res, err := http.Get(base + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc struct{ Paths map[string]json.RawMessage }
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil || res.StatusCode != http.StatusOK || len(doc.Paths) == 0 {
		t.Fatalf("GET /api/v1/openapi.json: %d, %d paths (%v)", res.StatusCode, len(doc.Paths), err)
	}
	_, ok := doc.Paths[tokens.PathExchange]
	return ok
}

// smokePassword is the admin password of the servers these tests start.
const smokePassword = "correct horse battery staple"

// startInProcess runs the server in this process on a free port with a data
// directory of its own and the admin password smokePassword, logging to
// logs. stop ends its
// context and reports how it ended.
func startInProcess(t *testing.T, logs io.Writer, args ...string) (base string, stop func() error) {
	t.Helper()
	return startWithEnv(t, logs, smokeEnv, args...)
}

// smokeEnv is the environment of the servers the tests run: the admin
// password smokePassword, and nothing else set.
func smokeEnv(k string) string {
	if k == "SCOREHUB_ADMIN_PASSWORD" {
		return smokePassword
	}
	return ""
}

// newTestServer builds the server, without listening, over the data
// directory dir with the flags args, its access log off and the admin
// password smokePassword. The caller closes it.
func newTestServer(tb testing.TB, dir string, args ...string) *server {
	tb.Helper()
	cfg, err := parseConfig(append([]string{"-data", dir, "-access-log=false"}, args...), smokeEnv, io.Discard)
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := newServer(context.Background(), cfg, smokeEnv, io.Discard, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return srv
}

// startWithEnv is startInProcess with the environment getenv.
func startWithEnv(t *testing.T, logs io.Writer, getenv func(string) string, args ...string) (base string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addr := make(chan string, 1)
	done := make(chan error, 1)
	// The heap floor is the process's, which the servers of these tests
	// share, and TestGCFloor checks on its own.
	args = append([]string{"-addr", "127.0.0.1:0", "-data", t.TempDir(), "-gc-min-heap", "0"}, args...)
	go func() { done <- run(ctx, args, getenv, io.Discard, logs, func(a string) { addr <- a }) }()
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("the server stopped before listening: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the server did not listen within a minute")
	}
	return base, func() error {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("run returned %v after its context ended, want nil", err)
			}
			return nil
		case <-time.After(time.Minute):
			return errors.New("the server did not stop within a minute of its context ending")
		}
	}
}

// TestTrustedProxiesNameTheClient: behind a reverse proxy the token
// service's per-address limits and its log must name the client, not the
// proxy, or one client's failed logins would lock out everyone behind the
// proxy. With -trusted-proxies X-Forwarded-For names the client; without
// it the header is not believed. (The limits themselves are tested in the
// tokens package; this checks the flag reaches them.)
func TestTrustedProxiesNameTheClient(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		client string
	}{
		{"no trusted proxy", nil, "127.0.0.1"},
		{"the proxy trusted", []string{"-trusted-proxies", "127.0.0.1"}, "203.0.113.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs testutil.LockedBuffer
			base, stop := startInProcess(t, &logs, tc.args...)
			defer stop()
			req, _ := http.NewRequest(http.MethodGet, base+"/api/rest/tokenservice", nil)
			req.SetBasicAuth("admin", "wrong")
			req.Header.Set("X-Forwarded-For", "203.0.113.7")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized {
				t.Fatalf("a wrong password got %d, want 401", res.StatusCode)
			}
			var line string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "authentication failed") {
					line = l
				}
			}
			if !strings.Contains(line, "client="+tc.client+" ") && !strings.HasSuffix(line, "client="+tc.client) &&
				!strings.Contains(line, `"client":"`+tc.client+`"`) {
				t.Errorf("the failed login was logged as %q, want the client %s", line, tc.client)
			}
		})
	}
}
