package scorehub

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
)

// TestNoSecretReachesTheLogs sends a catalogue of requests that carry
// secrets (passwords, API tokens, idTokens, another issuer's JWT) in the
// path, the query, a header or the body, with every logger at debug level
// and the access log written both through the Logger and as lines of its
// own, and looks for each secret in everything logged.
func TestNoSecretReachesTheLogs(t *testing.T) {
	const (
		adminPassword = "admin-Secret-1"
		wrongPassword = "wrong-Secret-2"
		userPassword  = "user-Secret-3"
		otherPassword = "other-Secret-4"
		// A JWT of no issuer the service knows, as a client would paste
		// one from another system.
		foreignJWT = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJtYWxsb3J5In0.Zm9yZWlnbi1zaWduYXR1cmUtYnl0ZXM"
		// Well formed, but of no token the service issued.
		strayAPIToken = "scorehub_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg123456"
	)
	for _, mode := range []struct {
		name  string
		lines bool // the access log as lines of its own
	}{{"access log through the Logger", false}, {"access log lines", true}} {
		t.Run(mode.name, func(t *testing.T) {
			var logs testutil.LockedBuffer
			cfg := Config{AdminPassword: adminPassword,
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
			if mode.lines {
				cfg.AccessLogOutput = &logs
			}
			svc, err := New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { svc.Close() })
			h := svc.Handler()

			do := func(method, target, auth string, body any) *httptest.ResponseRecorder {
				t.Helper()
				var rd io.Reader
				if body != nil {
					b, err := json.Marshal(body)
					if err != nil {
						t.Fatal(err)
					}
					rd = bytes.NewReader(b)
				}
				r := httptest.NewRequest(method, target, rd)
				r.RemoteAddr = "127.0.0.1:40000"
				if body != nil {
					r.Header.Set("Content-Type", "application/json")
				}
				if auth != "" {
					r.Header.Set("Authorization", auth)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w
			}
			basic := func(user, password string) string {
				r := httptest.NewRequest("GET", "/", nil)
				r.SetBasicAuth(user, password)
				return r.Header.Get("Authorization")
			}

			w := do("GET", "/api/rest/tokenservice", basic("admin", adminPassword), nil)
			var issued struct{ IDToken string }
			if err := json.Unmarshal(w.Body.Bytes(), &issued); err != nil || issued.IDToken == "" {
				t.Fatalf("token service: %d %s", w.Code, w.Body)
			}
			idToken := issued.IDToken
			bearer := "Bearer " + idToken
			w = do("POST", "/api/v1/apitokens", bearer, map[string]any{"name": "ci"})
			var made struct{ ID, Token string }
			if err := json.Unmarshal(w.Body.Bytes(), &made); err != nil || made.Token == "" {
				t.Fatalf("POST /api/v1/apitokens: %d %s", w.Code, w.Body)
			}
			apiToken := made.Token

			catalogue := []struct {
				method, target, auth string
				body                 any
			}{
				// In the path.
				{"GET", "/api/v1/apitokens/" + apiToken, bearer, nil},
				{"DELETE", "/api/v1/apitokens/" + apiToken, bearer, nil},
				{"GET", "/api/v1/apitokens/" + strayAPIToken, bearer, nil},
				{"GET", "/api/v1/apitokens/" + idToken, bearer, nil},
				{"GET", "/api/v1/users/" + foreignJWT, bearer, nil},
				{"GET", "/webapi/" + apiToken + "/p/a", "", nil},
				{"POST", "/webapi/g/" + idToken + "/a", "", nil},
				{"GET", "/" + apiToken, "", nil},
				{"PUT", "/api/rest/tokenservice/" + apiToken, "", nil},
				// In the query.
				{"GET", "/api/v1/webapigroups?access_token=" + idToken, "", nil},
				{"GET", "/api/v1/webapigroups?access_token=" + foreignJWT, "", nil},
				{"POST", "/webapi/g/p/a?access_token=" + apiToken, "", nil},
				{"GET", "/api/rest/tokenservice?password=" + adminPassword, "", nil},
				{"GET", "/api/v1/users?password=" + otherPassword, bearer, nil},
				// In a header.
				{"GET", "/api/rest/tokenservice", basic("admin", wrongPassword), nil},
				{"GET", "/api/rest/tokenservice", basic(adminPassword, adminPassword), nil},
				{"GET", "/api/rest/tokenservice/renew", bearer, nil},
				{"GET", "/api/rest/saml/tokenservice", "Bearer " + foreignJWT, nil},
				{"GET", "/api/v1/webapigroups", "Bearer " + foreignJWT, nil},
				{"GET", "/api/v1/webapigroups", "apitoken " + apiToken, nil},
				{"POST", "/webapi/g/p/a", "apitoken " + strayAPIToken, nil},
				{"POST", "/webapi/g/p/a", basic("admin", wrongPassword), nil},
				// In the body.
				{"POST", "/api/v1/users", bearer, map[string]any{"name": "bob", "password": userPassword}},
				{"POST", "/api/v1/users", bearer, map[string]any{"name": "bob", "password": userPassword}}, // 409
				{"POST", "/api/v1/users", bearer, map[string]any{"name": "carol", "password": otherPassword, "token": apiToken}},
				{"PATCH", "/api/v1/users/bob", bearer, map[string]any{"currentPassword": wrongPassword, "password": otherPassword}},
				{"POST", "/api/v1/apitokens", bearer, map[string]any{"name": idToken}},
				{"POST", "/webapi/g/p/a", bearer, map[string]any{"inputs": []any{apiToken}}},
			}
			for _, c := range catalogue {
				do(c.method, c.target, c.auth, c.body)
			}
			// The access log is written once the answer is; every answer
			// above is done.
			out := logs.String()
			if !strings.Contains(out, "/api/v1/apitokens/") {
				t.Fatalf("the requests were not logged:\n%s", out)
			}
			secrets := map[string]string{
				"the admin's password": adminPassword, "a wrong password": wrongPassword,
				"a user's password": userPassword, "another password": otherPassword,
				"an API token": apiToken, "a stray API token": strayAPIToken,
				"an idToken": idToken, "an idToken's signature": idToken[strings.LastIndexByte(idToken, '.')+1:],
				"a foreign JWT": foreignJWT, "a foreign JWT's claims": strings.Split(foreignJWT, ".")[1],
				"an API token's random part": strings.TrimPrefix(apiToken, "scorehub_")[:20],
			}
			for what, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("the logs hold %s:\n%s", what, linesWith(out, s))
				}
			}
		})
	}
}

// TestNoStorePasswordReachesTheLogs opens a service on a database that
// does not answer: neither the error nor any record holds the password of
// the connection string.
func TestNoStorePasswordReachesTheLogs(t *testing.T) {
	const password = "pg-Secret-5"
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: the connection is refused
	var logs testutil.LockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, url := range []string{
		"postgres://app:" + password + "@" + addr + "/scorehub?sslmode=disable&connect_timeout=5",
		"postgres://app:" + password + "@" + addr + "/scorehub?sslmode=bogus",
		"postgresql://app:" + password + "@[" + addr + "/scorehub",
	} {
		svc, err := New(ctx, Config{StoreURL: url, AdminPassword: "admin-Secret-1",
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err == nil {
			svc.Close()
			t.Fatalf("New with %s: no error, want one", url)
		}
		if strings.Contains(err.Error(), password) {
			t.Errorf("the error holds the password: %v", err)
		}
	}
	if out := logs.String(); strings.Contains(out, password) {
		t.Errorf("the logs hold the password:\n%s", out)
	}
}

// linesWith is the lines of out that hold s.
func linesWith(out, s string) string {
	var b strings.Builder
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, s) {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
