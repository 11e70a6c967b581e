package middleware_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry"
)

// TestRefusedCredentialsAreLogged replays credentials an attacker would try
// on a read route (behind Bearer), an admin route (Bearer, RequireAdmin) and
// a protected scoring group (Credentials.Authorize): each refusal must leave one
// record at info or warn level naming the route, the reason, the client and,
// for a valid token, its subject; and no record may hold the token.
func TestRefusedCredentialsAreLogged(t *testing.T) {
	const forged = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.forged-signature"
	type want map[string]any // the record's attributes checked, besides time and msg
	tests := []struct {
		name    string
		door    string // "read", "admin" or "scoring"
		target  string
		auth    string
		xff     string
		trusted []netip.Prefix
		want    want
		secret  string // must appear in no log record
	}{
		{name: "read route, no token", door: "read", target: "/api/v1/groups",
			want: want{"level": "INFO", "method": "GET", "path": "/api/v1/groups", "route": "GET /api/v1/groups", "status": 401.0,
				"type": "unauthorized", "reason": "this request needs a bearer token in the Authorization header; GET /api/rest/tokenservice with Basic credentials issues one", "client": "192.0.2.1"}},
		{name: "read route, forged token", door: "read", target: "/api/v1/groups", auth: "Bearer " + forged, secret: forged,
			want: want{"level": "WARN", "method": "GET", "path": "/api/v1/groups", "route": "GET /api/v1/groups", "status": 401.0,
				"type": "invalid_token", "reason": "the token is invalid", "cause": "tokens: invalid signature", "client": "192.0.2.1"}},
		{name: "read route, expired token", door: "read", target: "/api/v1/groups", auth: "Bearer expired",
			want: want{"level": "WARN", "method": "GET", "path": "/api/v1/groups", "route": "GET /api/v1/groups", "status": 401.0,
				"type": "invalid_token", "reason": "the token expired", "cause": "tokens: token expired", "client": "192.0.2.1"}},
		{name: "read route, token in the query", door: "read", target: "/api/v1/groups?access_token=" + forged, secret: forged,
			want: want{"level": "INFO", "method": "GET", "path": "/api/v1/groups", "route": "GET /api/v1/groups", "status": 400.0,
				"type": "invalid_request", "reason": "access tokens are not accepted in the URL query; send them in the Authorization header",
				"client": "192.0.2.1"}},
		{name: "read route behind a trusted proxy", door: "read", target: "/api/v1/groups", auth: "Bearer " + forged, secret: forged,
			xff: "203.0.113.9", trusted: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")},
			want: want{"level": "WARN", "method": "GET", "path": "/api/v1/groups", "route": "GET /api/v1/groups", "status": 401.0,
				"type": "invalid_token", "reason": "the token is invalid", "cause": "tokens: invalid signature", "client": "203.0.113.9"}},
		{name: "read route, X-Forwarded-For of an untrusted client", door: "read", target: "/api/v1/groups", xff: "203.0.113.9",
			want: want{"level": "INFO", "method": "GET", "path": "/api/v1/groups", "route": "GET /api/v1/groups", "status": 401.0,
				"type": "unauthorized", "reason": "this request needs a bearer token in the Authorization header; GET /api/rest/tokenservice with Basic credentials issues one", "client": "192.0.2.1"}},
		{name: "admin route, a user's token", door: "admin", target: "/api/v1/groups", auth: "Bearer ann-token", secret: "ann-token",
			want: want{"level": "WARN", "method": "GET", "path": "/api/v1/groups", "route": "GET /api/v1/groups", "status": 403.0,
				"type": "forbidden", "reason": "this request needs an administrator's token", "client": "192.0.2.1", "subject": "ann"}},
		{name: "protected scoring, no token", door: "scoring", target: "/webapi/risk/api/v1/services/churn/predict",
			want: want{"level": "INFO", "method": "GET", "path": "/webapi/risk/api/v1/services/churn/predict", "status": 401.0,
				"type": "unauthorized", "reason": "this endpoint needs credentials in the Authorization header: Bearer; for a Bearer token, GET /api/rest/tokenservice with Basic credentials issues one", "client": "192.0.2.1"}},
		{name: "protected scoring, forged token", door: "scoring", target: "/webapi/risk/api/v1/services/churn/predict",
			auth: "Bearer " + forged, secret: forged,
			want: want{"level": "WARN", "method": "GET", "path": "/webapi/risk/api/v1/services/churn/predict", "status": 401.0,
				"type": "invalid_token", "reason": "the token is invalid", "cause": "tokens: invalid signature", "client": "192.0.2.1"}},
		{name: "protected scoring, holder outside the groups", door: "scoring", target: "/webapi/risk/api/v1/services/churn/predict",
			auth: "Bearer ann-token", secret: "ann-token",
			want: want{"level": "WARN", "method": "GET", "path": "/webapi/risk/api/v1/services/churn/predict", "status": 403.0,
				"type": "forbidden", "reason": "the token's holder is not in a user group allowed here", "client": "192.0.2.1", "subject": "ann"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, logs := newLogger(slog.LevelInfo)
			cfg := middleware.BearerConfig{Verifier: &fakeVerifier{}, Realm: testRealm, Logger: logger, TrustedProxies: tt.trusted}
			ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
			var h http.Handler
			switch tt.door {
			case "read", "admin":
				bearer, err := middleware.Bearer(cfg)
				if err != nil {
					t.Fatal(err)
				}
				mux := http.NewServeMux()
				if tt.door == "admin" {
					mux.Handle("GET /api/v1/groups", bearer(middleware.RequireAdmin(ok)))
				} else {
					mux.Handle("GET /api/v1/groups", bearer(ok))
				}
				h = mux
			case "scoring":
				c, err := middleware.NewCredentials(middleware.CredentialsConfig{BearerConfig: cfg})
				if err != nil {
					t.Fatal(err)
				}
				authorize := c.Authorize
				policy := registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"risk-analysts"}}
				h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if err := authorize(r, "risk", policy); err != nil {
						httperr.Write(w, r, nil, err)
					}
				})
			}
			r := httptest.NewRequest(http.MethodGet, tt.target, nil)
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			if tt.xff != "" {
				r.Header.Set("X-Forwarded-For", tt.xff)
			}
			rec := serve(h, r)
			if got := float64(rec.Code); got != tt.want["status"] {
				t.Fatalf("status %d, want %v", rec.Code, tt.want["status"])
			}
			recs := logs.records(t)
			if len(recs) != 1 {
				t.Fatalf("log records %v, want one", recs)
			}
			got := recs[0]
			if got["msg"] != "middleware: credentials refused" {
				t.Errorf("msg %q, want middleware: credentials refused", got["msg"])
			}
			delete(got, "time")
			delete(got, "msg")
			if d := cmp.Diff(map[string]any(tt.want), got); d != "" {
				t.Errorf("record (-want +got):\n%s", d)
			}
			if tt.secret != "" && strings.Contains(logs.String(), tt.secret) {
				t.Errorf("the log holds the token %q:\n%s", tt.secret, logs.String())
			}
		})
	}
}

// TestRefusalLogBoundsThePath: the path is the client's to choose; a refusal's
// record carries at most its first 256 bytes.
func TestRefusalLogBoundsThePath(t *testing.T) {
	logger, logs := newLogger(slog.LevelInfo)
	bearer, err := middleware.Bearer(middleware.BearerConfig{Verifier: &fakeVerifier{}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	long := "/" + strings.Repeat("a", 10<<10)
	serve(bearer(http.NotFoundHandler()), httptest.NewRequest(http.MethodGet, long, nil))
	recs := logs.records(t)
	if len(recs) != 1 {
		t.Fatalf("log records %v, want one", recs)
	}
	if p, _ := recs[0]["path"].(string); len(p) > 300 || !strings.HasPrefix(long, strings.TrimSuffix(p, "…")) {
		t.Errorf("logged path of %d bytes, want its first 256", len(p))
	}
}
