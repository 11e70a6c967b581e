package middleware_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens"
)

// fakePasswords knows ann (password "ann-pw", in analysts) and bob
// ("bob-pw", in sales); "boom" makes it fail.
type fakePasswords struct{}

func (fakePasswords) Authenticate(_ context.Context, name, password string) (tokens.Principal, error) {
	switch {
	case name == "ann" && password == "ann-pw":
		return tokens.Principal{Subject: "ann", Groups: []string{"analysts"}, CredentialVersion: "v1"}, nil
	case name == "bob" && password == "bob-pw":
		return tokens.Principal{Subject: "bob", Groups: []string{"sales"}, CredentialVersion: "v1"}, nil
	case name == "boom":
		return tokens.Principal{}, errors.New("user store down")
	}
	return tokens.Principal{}, tokens.ErrBadCredentials
}

// fakeAPITokens knows "scorehub_ann" (ann's, any group), "scorehub_risk"
// (ann's, restricted to the web API group risk), and refuses
// "scorehub_expired" and "scorehub_revoked" as such.
type fakeAPITokens struct{}

func (fakeAPITokens) VerifyAPIToken(_ context.Context, token string) (tokens.Principal, []string, error) {
	ann := tokens.Principal{Subject: "ann", Groups: []string{"analysts"}}
	switch token {
	case "scorehub_ann":
		return ann, nil, nil
	case "scorehub_risk":
		return ann, []string{"risk"}, nil
	case "scorehub_expired":
		return tokens.Principal{}, nil, fmt.Errorf("%w: at noon", tokens.ErrExpired)
	case "scorehub_revoked":
		return tokens.Principal{}, nil, tokens.ErrRevoked
	}
	return tokens.Principal{}, nil, tokens.ErrBadCredentials
}

// fakeProvider accepts "provider-carl" for carl, in analysts, and refuses
// the rest as a bad signature; "provider-down" as unreachable.
type fakeProvider struct{}

func (fakeProvider) Verify(_ context.Context, raw string) (tokens.Principal, error) {
	switch raw {
	case "provider-carl":
		return tokens.Principal{Subject: "oidc:carl", Groups: []string{"analysts"}}, nil
	case "provider-down":
		return tokens.Principal{}, tokens.ErrProviderUnavailable
	}
	return tokens.Principal{}, tokens.ErrSignature
}

// providerAwareVerifier is fakeVerifier, but takes provider-* tokens as
// another issuer's, as the real verifier does.
type providerAwareVerifier struct{ fakeVerifier }

func (v *providerAwareVerifier) Verify(ctx context.Context, raw string) (*tokens.Claims, error) {
	if strings.HasPrefix(raw, "provider-") {
		return nil, fmt.Errorf("%w: iss", tokens.ErrIssuer)
	}
	return v.fakeVerifier.Verify(ctx, raw)
}

// countingObserver records what an AuthObserver is told.
type countingObserver struct {
	mu   sync.Mutex
	seen map[string]int
}

func (o *countingObserver) ObserveAuth(scheme, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen == nil {
		o.seen = map[string]int{}
	}
	o.seen[scheme+" "+outcome]++
}

func (o *countingObserver) count(key string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen[key]
}

func basicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

func newTestCredentials(t *testing.T, edit func(*middleware.CredentialsConfig)) *middleware.Credentials {
	t.Helper()
	cfg := middleware.CredentialsConfig{
		BearerConfig: middleware.BearerConfig{Verifier: &providerAwareVerifier{}, Realm: testRealm, Logger: slog.New(slog.DiscardHandler)},
		Provider:     fakeProvider{},
		Passwords:    fakePasswords{},
		APITokens:    fakeAPITokens{},
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := middleware.NewCredentials(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCredentialsAuthorize(t *testing.T) {
	const (
		basicCh    = `Basic realm="scorehub-test", charset="UTF-8"`
		apiCh      = `apitoken realm="scorehub-test"`
		bearerCh   = `Bearer realm="scorehub-test"`
		allCh      = basicCh + ", " + apiCh + ", " + bearerCh
		badPwCh    = basicCh + ", " + apiCh + ", " + bearerCh
		expiredCh  = basicCh + ", " + apiCh + `, Bearer realm="scorehub-test", error="invalid_token", error_description="the token expired"`
		forbidCh   = `Bearer realm="scorehub-test", error="insufficient_scope", error_description="the token's holder is not in a user group allowed here"`
		forbidUser = `Bearer realm="scorehub-test", error="insufficient_scope", error_description="the user of the Basic credentials is not in a user group allowed here"`
		apiGroupCh = `Bearer realm="scorehub-test", error="insufficient_scope", error_description="this API token may not call the web API group fraud"`
	)
	all := registry.AuthPolicy{Mode: registry.TokenRequired}
	analysts := registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"analysts"}}
	basicOnly := registry.AuthPolicy{Mode: registry.TokenRequired, Schemes: []registry.Scheme{registry.SchemeBasic}}
	noBasic := registry.AuthPolicy{Mode: registry.TokenRequired, Schemes: []registry.Scheme{registry.SchemeAPIToken, registry.SchemeBearer}}

	tests := []struct {
		name      string
		group     string
		policy    registry.AuthPolicy
		auth      string
		status    int // 0: let through
		typ       string
		challenge string
		is        error
	}{
		{"public takes anything", "risk", registry.AuthPolicy{}, "Basic !!", 0, "", "", nil},
		{"nothing sent", "risk", all, "", 401, "unauthorized", allCh, nil},
		{"nothing sent, Basic-only group", "risk", basicOnly, "", 401, "unauthorized", basicCh, nil},

		{"Basic, right", "risk", all, basicAuth("ann", "ann-pw"), 0, "", "", nil},
		{"Basic, scheme in upper case", "risk", all, "BASIC " + base64.StdEncoding.EncodeToString([]byte("ann:ann-pw")), 0, "", "", nil},
		{"Basic, wrong password", "risk", all, basicAuth("ann", "nope"), 401, "invalid_token", badPwCh, tokens.ErrBadCredentials},
		{"Basic, unknown user", "risk", all, basicAuth("zed", "ann-pw"), 401, "invalid_token", badPwCh, tokens.ErrBadCredentials},
		{"Basic, not base64", "risk", all, "Basic ***", 400, "invalid_request", allCh, nil},
		{"Basic, no colon", "risk", all, "Basic " + base64.StdEncoding.EncodeToString([]byte("ann")), 400, "invalid_request", allCh, nil},
		{"Basic, empty name", "risk", all, basicAuth("", "x"), 400, "invalid_request", allCh, nil},
		{"Basic to a group without Basic", "risk", noBasic, basicAuth("ann", "ann-pw"), 401, "unauthorized", apiCh + ", " + bearerCh, nil},
		{"Basic, user in an allowed group", "risk", analysts, basicAuth("ann", "ann-pw"), 0, "", "", nil},
		{"Basic, user in no allowed group", "risk", analysts, basicAuth("bob", "bob-pw"), 403, "forbidden", forbidUser, nil},

		{"apitoken", "risk", all, "apitoken scorehub_ann", 0, "", "", nil},
		{"APIToken in other case", "risk", all, "APIToken scorehub_ann", 0, "", "", nil},
		{"apitoken, unknown", "risk", all, "apitoken scorehub_nope", 401, "invalid_token", allCh, tokens.ErrBadCredentials},
		{"apitoken, expired", "risk", all, "apitoken scorehub_expired", 401, "invalid_token", allCh, tokens.ErrExpired},
		{"apitoken, revoked", "risk", all, "apitoken scorehub_revoked", 401, "invalid_token", allCh, tokens.ErrRevoked},
		{"apitoken, two tokens", "risk", all, "apitoken a b", 400, "invalid_request", allCh, nil},
		{"apitoken, restricted to the group", "risk", all, "apitoken scorehub_risk", 0, "", "", nil},
		{"apitoken, restricted to another group", "fraud", all, "apitoken scorehub_risk", 403, "forbidden", apiGroupCh, nil},
		{"apitoken to a Basic-only group", "risk", basicOnly, "apitoken scorehub_ann", 401, "unauthorized", basicCh, nil},

		{"idToken", "risk", all, "Bearer ann-token", 0, "", "", nil},
		{"idToken, expired", "risk", all, "Bearer expired", 401, "invalid_token", expiredCh, tokens.ErrExpired},
		{"idToken, revoked", "risk", all, "Bearer revoked", 401, "invalid_token", "", tokens.ErrRevoked},
		{"idToken, holder in no allowed group", "risk", analysts, "Bearer bob-token", 403, "forbidden", forbidCh, nil},
		{"provider token", "risk", analysts, "Bearer provider-carl", 0, "", "", nil},
		{"provider token, forged", "risk", all, "Bearer provider-forged", 401, "invalid_token", "", tokens.ErrSignature},
		{"provider unreachable", "risk", all, "Bearer provider-down", 503, "unavailable", "", tokens.ErrProviderUnavailable},
		{"Bearer to a Basic-only group", "risk", basicOnly, "Bearer ann-token", 401, "unauthorized", basicCh, nil},

		{"unknown scheme", "risk", all, "Digest username=ann", 401, "unauthorized", allCh, nil},
		{"not a scheme", "risk", all, "@@@ x", 400, "invalid_request", "", nil},
		{"unknown mode", "risk", registry.AuthPolicy{Mode: "open"}, "Bearer ann-token", 500, "internal_error", "", nil},
	}
	c := newTestCredentials(t, func(cfg *middleware.CredentialsConfig) {
		// Enough failures for the table; the limit has a test of its own.
		cfg.AddressFailureLimit = tokens.RateLimit{Every: time.Second, Burst: 1000}
		cfg.UserAddressFailureLimit = tokens.RateLimit{Every: time.Second, Burst: 1000}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/webapi/"+tt.group+"/api/v1/services/churn/predict", nil)
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			err := c.Authorize(r, tt.group, tt.policy)
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("let through")
			}
			e := httperr.From(err)
			if e.Status != tt.status || string(e.Code) != tt.typ {
				t.Errorf("answer %d %s (%q), want %d %s", e.Status, string(e.Code), e.Message, tt.status, tt.typ)
			}
			if tt.challenge != "" && e.Challenge != tt.challenge {
				t.Errorf("challenge\n got %q\nwant %q", e.Challenge, tt.challenge)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.is)
			}
			if strings.Contains(e.Message, "secret-detail") || strings.Contains(e.Message, "pw") {
				t.Errorf("message %q tells more than the client needs", e.Message)
			}
		})
	}
}

func TestCredentialsBasicFailuresAreLimited(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	obs := &countingObserver{}
	c := newTestCredentials(t, func(cfg *middleware.CredentialsConfig) {
		cfg.UserAddressFailureLimit = tokens.RateLimit{Every: time.Minute, Burst: 3}
		cfg.Now = func() time.Time { return now }
		cfg.Observer = obs
	})
	policy := registry.AuthPolicy{Mode: registry.TokenRequired}
	try := func(addr, auth string) *problem.Error {
		r := httptest.NewRequest(http.MethodPost, "/webapi/risk/api/v1/services/churn/predict", nil)
		r.RemoteAddr = addr + ":1234"
		r.Header.Set("Authorization", auth)
		if err := c.Authorize(r, "risk", policy); err != nil {
			return httperr.From(err)
		}
		return nil
	}
	for i := range 3 {
		if e := try("192.0.2.1", basicAuth("ann", "guess")); e == nil || e.Status != 401 {
			t.Fatalf("guess %d: %v, want 401", i, e)
		}
	}
	e := try("192.0.2.1", basicAuth("ann", "ann-pw"))
	if e == nil || e.Status != 429 || e.RetryAfter < 1 {
		t.Fatalf("the right password after 3 failures from the address: %+v, want 429 with Retry-After", e)
	}
	// Nobody locks ann out from elsewhere, and other users are not held.
	if e := try("198.51.100.7", basicAuth("ann", "ann-pw")); e != nil {
		t.Errorf("ann from another address: %d %s", e.Status, e.Message)
	}
	if e := try("192.0.2.1", basicAuth("bob", "bob-pw")); e != nil {
		t.Errorf("bob from the same address: %d %s", e.Status, e.Message)
	}
	now = now.Add(time.Minute)
	if e := try("192.0.2.1", basicAuth("ann", "ann-pw")); e != nil {
		t.Errorf("ann a minute later: %d %s", e.Status, e.Message)
	}
	if got := obs.count("basic bad_credentials"); got != 3 {
		t.Errorf("observed %d basic bad_credentials, want 3", got)
	}
	if got := obs.count("basic rate_limited"); got != 1 {
		t.Errorf("observed %d basic rate_limited, want 1", got)
	}
	if got := obs.count("basic accepted"); got != 3 {
		t.Errorf("observed %d basic accepted, want 3", got)
	}
}

// TestCredentialsBasicSlowsGuessingFromManyAddresses: 40 wrong passwords
// for ann, each from another address. Past the limit per user they are
// answered 429 with Retry-After, as the token service answers them; ann
// still gets in from an address her password was right from before, while
// from an address new to her she waits too.
func TestCredentialsBasicSlowsGuessingFromManyAddresses(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	obs := &countingObserver{}
	c := newTestCredentials(t, func(cfg *middleware.CredentialsConfig) {
		cfg.Now = func() time.Time { return now }
		cfg.Observer = obs
	})
	policy := registry.AuthPolicy{Mode: registry.TokenRequired}
	try := func(addr, auth string) *problem.Error {
		r := httptest.NewRequest(http.MethodPost, "/webapi/risk/api/v1/services/churn/predict", nil)
		r.RemoteAddr = addr + ":1234"
		r.Header.Set("Authorization", auth)
		if err := c.Authorize(r, "risk", policy); err != nil {
			return httperr.From(err)
		}
		return nil
	}
	const home, travel = "198.51.100.7", "192.0.2.200"
	if e := try(home, basicAuth("ann", "ann-pw")); e != nil {
		t.Fatalf("ann from home: %d %s", e.Status, e.Message)
	}
	for i := range 40 {
		e := try(fmt.Sprintf("203.0.113.%d", i+1), basicAuth("ann", fmt.Sprint("guess", i)))
		if e == nil || e.Status != 401 && (e.Status != 429 || e.RetryAfter < 1) {
			t.Fatalf("guess %d: %+v, want 401, or 429 with Retry-After", i+1, e)
		}
	}
	if got := obs.count("basic rate_limited"); got != 40-tokens.DefaultUserFailureBurst {
		t.Errorf("%d of 40 guesses from 40 addresses answered 429, want %d", got, 40-tokens.DefaultUserFailureBurst)
	}
	if e := try(home, basicAuth("ann", "ann-pw")); e != nil {
		t.Errorf("ann from home during the guessing: %d %s", e.Status, e.Message)
	}
	if e := try(travel, basicAuth("ann", "ann-pw")); e == nil || e.Status != 429 || e.RetryAfter != 60 {
		t.Errorf("ann from a new address during the guessing: %+v, want 429 with Retry-After 60", e)
	}
	if e := try(travel, basicAuth("bob", "bob-pw")); e != nil {
		t.Errorf("bob from that address: %d %s", e.Status, e.Message)
	}
	now = now.Add(tokens.DefaultUserFailureEvery)
	if e := try(travel, basicAuth("ann", "ann-pw")); e != nil {
		t.Errorf("ann from the new address a minute later: %d %s", e.Status, e.Message)
	}
}

func TestCredentialsWithoutBasicOrAPITokens(t *testing.T) {
	c := newTestCredentials(t, func(cfg *middleware.CredentialsConfig) {
		cfg.Passwords, cfg.APITokens, cfg.Provider = nil, nil, nil
	})
	r := httptest.NewRequest(http.MethodPost, "/webapi/risk/api/v1/services/churn/predict", nil)
	r.Header.Set("Authorization", basicAuth("ann", "ann-pw"))
	e := httperr.From(c.Authorize(r, "risk", registry.AuthPolicy{Mode: registry.TokenRequired}))
	if e.Status != 401 || e.Challenge != `Bearer realm="scorehub-test"` {
		t.Errorf("Basic to a server that checks no passwords: %d %q, want 401 with a Bearer challenge only", e.Status, e.Challenge)
	}
	r.Header.Set("Authorization", "Bearer provider-carl")
	if e := httperr.From(c.Authorize(r, "risk", registry.AuthPolicy{Mode: registry.TokenRequired})); e.Status != 401 || string(e.Code) != "invalid_token" {
		t.Errorf("a provider's token without a provider: %d %s, want 401 invalid_token", e.Status, string(e.Code))
	}
}

// TestCredentialsMissingMessage checks that a request without credentials
// is told what the group takes and, when that includes Bearer tokens,
// where one comes from.
func TestCredentialsMissingMessage(t *testing.T) {
	c := newTestCredentials(t, nil)
	const hint = "; for a Bearer token, GET /api/rest/tokenservice with Basic credentials issues one"
	tests := []struct {
		name   string
		policy registry.AuthPolicy
		want   string
	}{
		{"every kind", registry.AuthPolicy{Mode: registry.TokenRequired},
			"this endpoint needs credentials in the Authorization header: Basic, apitoken or Bearer" + hint},
		{"Bearer only", registry.AuthPolicy{Mode: registry.TokenRequired, Schemes: []registry.Scheme{registry.SchemeBearer}},
			"this endpoint needs credentials in the Authorization header: Bearer" + hint},
		{"Basic only: no token to fetch", registry.AuthPolicy{Mode: registry.TokenRequired, Schemes: []registry.Scheme{registry.SchemeBasic}},
			"this endpoint needs credentials in the Authorization header: Basic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/webapi/risk/api/v1/services/churn/predict", nil)
			e := httperr.From(c.Authorize(r, "risk", tt.policy))
			if e.Status != 401 || e.Message != tt.want {
				t.Errorf("answer %d %q, want 401 %q", e.Status, e.Message, tt.want)
			}
		})
	}
}

func TestCredentialsMiddleware(t *testing.T) {
	c := newTestCredentials(t, nil)
	var got *tokens.Claims
	h := c.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = middleware.ClaimsFrom(r.Context())
	}))
	for _, tc := range []struct{ auth, subject string }{
		{basicAuth("ann", "ann-pw"), "ann"},
		{"apitoken scorehub_ann", "ann"},
		{"Bearer bob-token", "bob"},
		{"Bearer provider-carl", "oidc:carl"},
	} {
		got = nil
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/executions/jobs", nil)
		r.Header.Set("Authorization", tc.auth)
		h.ServeHTTP(w, r)
		if w.Code != 200 || got == nil || got.Subject != tc.subject {
			t.Errorf("%s: %d, claims %+v; want 200 as %s", tc.auth, w.Code, got, tc.subject)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/executions/jobs", nil))
	if w.Code != 401 || !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("no credentials: %d %q, want 401 with every challenge", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}

// TestCredentialsRefusalsSpeakToTheCaller: a refusal says what is wrong in
// the terms of the credentials sent: no token at all where a client's
// unset variable left none, and whose membership is lacking, a user's,
// an API token owner's or a token holder's.
func TestCredentialsRefusalsSpeakToTheCaller(t *testing.T) {
	all := registry.AuthPolicy{Mode: registry.TokenRequired}
	ops := registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"ops"}}
	c := newTestCredentials(t, func(*middleware.CredentialsConfig) {})
	for _, tt := range []struct {
		name, auth string
		policy     registry.AuthPolicy
		status     int
		message    string
	}{
		{"Bearer and nothing", "Bearer ", all, 400, "the Authorization header carries no token: Bearer is followed by nothing"},
		{"Bearer null", "Bearer null", all, 400, "the Authorization header carries no token"},
		{"apitoken undefined", "apitoken undefined", all, 400, "the Authorization header carries no API token"},
		{"apitoken alone", "apitoken", all, 400, "the Authorization header carries no API token"},
		{"a user not in the groups", basicAuth("bob", "bob-pw"), ops, 403,
			"the user of the Basic credentials is not in a user group allowed here"},
		{"an API token's owner not in the groups", "apitoken scorehub_ann", ops, 403,
			"the owner of the API token is not in a user group allowed here"},
		{"a token's holder not in the groups", "Bearer bob-token", ops, 403,
			"the token's holder is not in a user group allowed here"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/webapi/risk/api/v1/services/churn/predict", nil)
		r.Header.Set("Authorization", tt.auth)
		e := httperr.From(c.Authorize(r, "risk", tt.policy))
		if e.Status != tt.status || !strings.HasPrefix(e.Message, tt.message) {
			t.Errorf("%s: %d %q, want %d %q", tt.name, e.Status, e.Message, tt.status, tt.message)
		}
	}
}
