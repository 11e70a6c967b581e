package middleware_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/tokens"
)

func newBearer(t *testing.T, v middleware.TokenVerifier, logger *slog.Logger) http.Handler {
	t.Helper()
	mw, err := middleware.Bearer(middleware.BearerConfig{Verifier: v, Realm: testRealm, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	return mw(okHandler)
}

func TestBearer(t *testing.T) {
	const (
		bare      = `Bearer realm="scorehub-test"`
		malformed = `Bearer realm="scorehub-test", error="invalid_request", error_description="the Authorization header must be the word Bearer, one space and one token"`
		noToken   = `Bearer realm="scorehub-test", error="invalid_request", error_description="the Authorization header carries no token: Bearer is followed by nothing, or by null, undefined or None; check that the variable meant to hold the token is set"`
		invalid   = `Bearer realm="scorehub-test", error="invalid_token", error_description="the token is invalid"`
	)
	tests := []struct {
		name          string
		target        string
		auth          []string // Authorization header lines
		contentType   string
		body          string
		wantStatus    int
		wantType      string // "" on success
		wantMessage   string
		wantChallenge string
		wantBody      string // on success
		wantVerified  []string
	}{
		{
			name:       "valid token reaches the handler with its claims",
			auth:       []string{"Bearer ann-token"},
			wantStatus: http.StatusOK, wantBody: "ok ann", wantVerified: []string{"ann-token"},
		},
		{
			name:       "scheme is case-insensitive and may be followed by several spaces",
			auth:       []string{"bEARER   root-token"},
			wantStatus: http.StatusOK, wantBody: "ok root", wantVerified: []string{"root-token"},
		},
		{
			name:       "padding is part of a b64token",
			auth:       []string{"Bearer dW5rbm93bg=="},
			wantStatus: http.StatusUnauthorized, wantType: "invalid_token", wantMessage: "the token is invalid",
			wantChallenge: invalid, wantVerified: []string{"dW5rbm93bg=="},
		},
		{
			name:       "query parameters that are not tokens are fine",
			target:     "/score?threshold=0.7&mode=fast",
			auth:       []string{"Bearer ann-token"},
			wantStatus: http.StatusOK, wantBody: "ok ann", wantVerified: []string{"ann-token"},
		},
		{
			name:       "no Authorization header",
			wantStatus: http.StatusUnauthorized, wantType: "unauthorized",
			wantMessage:   "this request needs a bearer token in the Authorization header; GET /api/rest/tokenservice with Basic credentials issues one",
			wantChallenge: bare,
		},
		{
			name:       "Basic where Bearer is due gets the bare Bearer challenge",
			auth:       []string{"Basic YW5uOnNlY3JldA=="},
			wantStatus: http.StatusUnauthorized, wantType: "unauthorized",
			wantMessage:   "the Authorization header must use the Bearer scheme",
			wantChallenge: bare,
		},
		{
			name:       "two Authorization headers",
			auth:       []string{"Bearer ann-token", "Bearer root-token"},
			wantStatus: http.StatusBadRequest, wantType: "invalid_request",
			wantMessage:   "the request has more than one Authorization header",
			wantChallenge: `Bearer realm="scorehub-test", error="invalid_request", error_description="the request has more than one Authorization header"`,
		},
		{
			name:       "token in the query string is refused even with a valid header",
			target:     "/score?access_token=root-token",
			auth:       []string{"Bearer ann-token"},
			wantStatus: http.StatusBadRequest, wantType: "invalid_request",
			wantMessage:   "access tokens are not accepted in the URL query; send them in the Authorization header",
			wantChallenge: `Bearer realm="scorehub-test", error="invalid_request", error_description="access tokens are not accepted in the URL query; send them in the Authorization header"`,
		},
		{
			name:       "token in the query string, percent-encoded name, no header",
			target:     "/score?x=1&access%5Ftoken=root-token",
			wantStatus: http.StatusBadRequest, wantType: "invalid_request",
			wantMessage: "access tokens are not accepted in the URL query; send them in the Authorization header",
		},
		{
			name:        "token in a form body is refused",
			contentType: "application/x-www-form-urlencoded; charset=utf-8",
			body:        "a=1&access_token=root-token",
			wantStatus:  http.StatusBadRequest, wantType: "invalid_request",
			wantMessage: "access tokens are not accepted in the request body; send them in the Authorization header",
		},
		{
			name:       "the word Bearer alone",
			auth:       []string{"Bearer"},
			wantStatus: http.StatusBadRequest, wantType: "invalid_request", wantChallenge: noToken,
			wantMessage: "the Authorization header carries no token: Bearer is followed by nothing, or by null, undefined or None; check that the variable meant to hold the token is set",
		},
		{
			name:       "Bearer and a space",
			auth:       []string{"Bearer "},
			wantStatus: http.StatusBadRequest, wantType: "invalid_request", wantChallenge: noToken,
			wantMessage: "the Authorization header carries no token: Bearer is followed by nothing, or by null, undefined or None; check that the variable meant to hold the token is set",
		},
		{
			name:       "an unset variable in JavaScript",
			auth:       []string{"Bearer undefined"},
			wantStatus: http.StatusBadRequest, wantType: "invalid_request", wantChallenge: noToken,
			wantMessage: "the Authorization header carries no token: Bearer is followed by nothing, or by null, undefined or None; check that the variable meant to hold the token is set",
		},
		{
			name:       "null",
			auth:       []string{"Bearer null"},
			wantStatus: http.StatusBadRequest, wantType: "invalid_request", wantChallenge: noToken,
			wantMessage: "the Authorization header carries no token: Bearer is followed by nothing, or by null, undefined or None; check that the variable meant to hold the token is set",
		},
		{
			name:       "an unset variable in Python",
			auth:       []string{"bearer None"},
			wantStatus: http.StatusBadRequest, wantType: "invalid_request", wantChallenge: noToken,
			wantMessage: "the Authorization header carries no token: Bearer is followed by nothing, or by null, undefined or None; check that the variable meant to hold the token is set",
		},
		{
			name:       "two tokens",
			auth:       []string{"Bearer a b"},
			wantStatus: http.StatusBadRequest, wantType: "invalid_request", wantChallenge: malformed,
			wantMessage: "the Authorization header must be the word Bearer, one space and one token",
		},
		{
			name:       "character outside the b64token syntax",
			auth:       []string{`Bearer ann-token"`},
			wantStatus: http.StatusBadRequest, wantType: "invalid_request", wantChallenge: malformed,
			wantMessage: "the Authorization header must be the word Bearer, one space and one token",
		},
		{
			name:       "padding in the middle",
			auth:       []string{"Bearer ab=cd"},
			wantStatus: http.StatusBadRequest, wantType: "invalid_request", wantChallenge: malformed,
			wantMessage: "the Authorization header must be the word Bearer, one space and one token",
		},
		{
			name:       "empty header",
			auth:       []string{""},
			wantStatus: http.StatusBadRequest, wantType: "invalid_request", wantChallenge: malformed,
			wantMessage: "the Authorization header must be the word Bearer, one space and one token",
		},
		{
			name:       "tab instead of space",
			auth:       []string{"Bearer\tann-token"},
			wantStatus: http.StatusBadRequest, wantType: "invalid_request", wantChallenge: malformed,
			wantMessage: "the Authorization header must be the word Bearer, one space and one token",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &fakeVerifier{}
			target := tt.target
			if target == "" {
				target = "/score"
			}
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			r := httptest.NewRequest(http.MethodPost, target, body)
			for _, a := range tt.auth {
				r.Header.Add("Authorization", a)
			}
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			rec := serve(newBearer(t, v, nil), r)

			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.wantStatus, rec.Body)
			}
			if diff := cmp.Diff(tt.wantVerified, v.calls()); diff != "" {
				t.Errorf("tokens verified (-want +got):\n%s", diff)
			}
			if tt.wantType == "" {
				if got := rec.Body.String(); got != tt.wantBody {
					t.Errorf("body = %q, want %q", got, tt.wantBody)
				}
				if h := rec.Header().Get("WWW-Authenticate"); h != "" {
					t.Errorf("WWW-Authenticate = %q on success", h)
				}
				return
			}
			b := decodeError(t, rec)
			if b.Error.Type != tt.wantType || b.Error.Message != tt.wantMessage {
				t.Errorf("error = %s: %s, want %s: %s", b.Error.Type, b.Error.Message, tt.wantType, tt.wantMessage)
			}
			if got := rec.Header().Values("WWW-Authenticate"); len(got) != 1 {
				t.Fatalf("WWW-Authenticate = %q, want one challenge", got)
			}
			if tt.wantChallenge != "" {
				if got := rec.Header().Get("WWW-Authenticate"); got != tt.wantChallenge {
					t.Errorf("WWW-Authenticate =\n%s\nwant\n%s", got, tt.wantChallenge)
				}
			}
		})
	}
}

// TestBearerVerifierErrors holds each verification error to its answer: only
// expiry, "not valid yet" and revocation are told apart, nothing about why a token is
// invalid reaches the client, and a verifier that breaks is a 5xx, never a
// way in.
func TestBearerVerifierErrors(t *testing.T) {
	type want struct {
		status      int
		typ         string
		message     string
		challenge   string
		levelLogged string
	}
	invalid := want{http.StatusUnauthorized, "invalid_token", "the token is invalid",
		`Bearer realm="scorehub-test", error="invalid_token", error_description="the token is invalid"`, "WARN"}
	tests := map[string]want{
		"expired": {http.StatusUnauthorized, "invalid_token", "the token expired",
			`Bearer realm="scorehub-test", error="invalid_token", error_description="the token expired"`, "WARN"},
		"not-yet": {http.StatusUnauthorized, "invalid_token", "the token is not valid yet",
			`Bearer realm="scorehub-test", error="invalid_token", error_description="the token is not valid yet"`, "WARN"},
		"missing": {http.StatusUnauthorized, "unauthorized", "this request needs a bearer token in the Authorization header; GET /api/rest/tokenservice with Basic credentials issues one",
			`Bearer realm="scorehub-test"`, "INFO"},
		"too-large":   invalid,
		"malformed":   invalid,
		"algorithm":   invalid,
		"unknown-key": invalid,
		"signature":   invalid,
		"issuer":      invalid,
		"audience":    invalid,
		"claims":      invalid,
		"revoked": {http.StatusUnauthorized, "invalid_token", "the token was revoked",
			`Bearer realm="scorehub-test", error="invalid_token", error_description="the token was revoked"`, "WARN"},
		"broken":     {http.StatusInternalServerError, "internal_error", "internal error", "", "ERROR"},
		"nil-claims": {http.StatusInternalServerError, "internal_error", "internal error", "", "ERROR"},
		"cancelled":  {499, "client_closed_request", "the request was cancelled", "", "DEBUG"},
	}
	if len(tests) != len(sentinelTokens)+3 {
		t.Fatalf("the table misses a sentinel: %d cases for %d sentinels", len(tests), len(sentinelTokens))
	}
	for raw, w := range tests {
		t.Run(raw, func(t *testing.T) {
			logger, logs := newLogger(slog.LevelDebug)
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("Authorization", "Bearer "+raw)
			rec := serve(newBearer(t, &fakeVerifier{}, logger), r)

			if rec.Code != w.status {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, w.status, rec.Body)
			}
			b := decodeError(t, rec)
			if b.Error.Type != w.typ || b.Error.Message != w.message {
				t.Errorf("error = %s: %s, want %s: %s", b.Error.Type, b.Error.Message, w.typ, w.message)
			}
			if got := rec.Header().Get("WWW-Authenticate"); got != w.challenge {
				t.Errorf("WWW-Authenticate = %q, want %q", got, w.challenge)
			}
			for _, secret := range []string{"secret-detail", "kid=k9", "10.0.0.7", "tokens:"} {
				if strings.Contains(rec.Body.String(), secret) || strings.Contains(rec.Header().Get("WWW-Authenticate"), secret) {
					t.Errorf("response leaks %q: %s", secret, rec.Body)
				}
			}
			recs := logs.records(t)
			if len(recs) != 1 || recs[0]["level"] != w.levelLogged {
				t.Fatalf("log = %v, want one %s record", recs, w.levelLogged)
			}
			if raw != "nil-claims" {
				if cause, _ := recs[0]["cause"].(string); cause == "" {
					t.Errorf("log record %v has no cause", recs[0])
				}
			}
			// A refusal's record names the sentinel, never the detail a
			// verifier wraps it with, which could quote the token.
			if w.status < 500 && w.status != 499 && strings.Contains(logs.String(), "secret-detail") {
				t.Errorf("the refusal's log record carries the verifier's detail: %s", logs.String())
			}
		})
	}
}

func TestBearerFormBody(t *testing.T) {
	big := "data=" + strings.Repeat("x", 100<<10)
	tests := []struct {
		name        string
		contentType string
		body        string
		chunked     bool
		wantStatus  int
	}{
		{"form without a token", "application/x-www-form-urlencoded", "a=1&b=2", false, http.StatusOK},
		{"form larger than the scanned prefix", "application/x-www-form-urlencoded", big, false, http.StatusOK},
		{"chunked form", "application/x-www-form-urlencoded", "a=1&b=2", true, http.StatusOK},
		{"JSON body naming access_token", "application/json", `{"access_token":"x"}`, false, http.StatusOK},
		{"access_token as the last field of a chunked form", "application/x-www-form-urlencoded", "a=1&access_token=x", true, http.StatusBadRequest},
		{"percent-encoded access_token name", "application/x-www-form-urlencoded", "access%5ftoken=x", false, http.StatusBadRequest},
		{"access_token without a value", "application/x-www-form-urlencoded", "access_token", false, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, err := io.ReadAll(r.Body)
				if err != nil {
					t.Errorf("handler read: %v", err)
				}
				got = string(b)
			})
			mw, err := middleware.Bearer(middleware.BearerConfig{Verifier: &fakeVerifier{}})
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
			if tt.chunked {
				r.ContentLength = -1
				r.Body = io.NopCloser(io.MultiReader(strings.NewReader(tt.body)))
			}
			r.Header.Set("Content-Type", tt.contentType)
			r.Header.Set("Authorization", "Bearer ann-token")
			rec := serve(mw(echo), r)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %.200s", rec.Code, tt.wantStatus, rec.Body)
			}
			if tt.wantStatus == http.StatusOK && got != tt.body {
				t.Errorf("handler read %d bytes, want the %d sent", len(got), len(tt.body))
			}
		})
	}
}

type closeTracker struct {
	io.Reader
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

// TestBearerFormBodyClose checks that closing the body a handler gets after
// the form scan closes the request's own body.
func TestBearerFormBodyClose(t *testing.T) {
	body := &closeTracker{Reader: strings.NewReader("a=1")}
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.Body, r.ContentLength = body, 3
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Authorization", "Bearer ann-token")
	mw, err := middleware.Bearer(middleware.BearerConfig{Verifier: &fakeVerifier{}})
	if err != nil {
		t.Fatal(err)
	}
	serve(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { r.Body.Close() })), r)
	if !body.closed {
		t.Error("the request body was not closed")
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestBearerFormBodyUnreadable(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", io.NopCloser(failingReader{}))
	r.ContentLength = -1
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Authorization", "Bearer ann-token")
	rec := serve(newBearer(t, &fakeVerifier{}, nil), r)
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status = %d, want 400", rec.Code)
	}
	if b := decodeError(t, rec); b.Error.Message != "the request body could not be read" {
		t.Errorf("message = %q", b.Error.Message)
	}
}

func TestBearerConfig(t *testing.T) {
	tests := []struct {
		name          string
		cfg           middleware.BearerConfig
		wantErr       string
		wantChallenge string
	}{
		{"no verifier", middleware.BearerConfig{Realm: "x"}, "needs a Verifier", ""},
		{"realm with a line break", middleware.BearerConfig{Verifier: &fakeVerifier{}, Realm: "a\r\nSet-Cookie: x"}, "printable ASCII", ""},
		{"realm with non-ASCII", middleware.BearerConfig{Verifier: &fakeVerifier{}, Realm: "Zürich"}, "printable ASCII", ""},
		{"default realm", middleware.BearerConfig{Verifier: &fakeVerifier{}}, "", `Bearer realm="scorehub"`},
		{"quotes and backslashes are escaped", middleware.BearerConfig{Verifier: &fakeVerifier{}, Realm: `a "b" \c`}, "", `Bearer realm="a \"b\" \\c"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mw, err := middleware.Bearer(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "middleware: ") {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				if mw != nil {
					t.Error("middleware returned with an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rec := serve(mw(okHandler), httptest.NewRequest(http.MethodGet, "/", nil))
			if got := rec.Header().Get("WWW-Authenticate"); got != tt.wantChallenge {
				t.Errorf("WWW-Authenticate = %s, want %s", got, tt.wantChallenge)
			}
		})
	}
}

func TestAuthenticate(t *testing.T) {
	a, err := middleware.NewAuthenticator(middleware.BearerConfig{Verifier: &fakeVerifier{}})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer bob-token")
	c, err := a.Authenticate(r)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(bobClaims, c); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}

	r.Header.Set("Authorization", "Bearer expired")
	_, err = a.Authenticate(r)
	var ae *problem.Error
	if !errors.As(err, &ae) {
		t.Fatalf("err = %T %v, want *problem.Error", err, err)
	}
	if ae.Status != http.StatusUnauthorized || ae.Challenge != `Bearer realm="scorehub", error="invalid_token", error_description="the token expired"` {
		t.Errorf("refusal = %d %q", ae.Status, ae.Challenge)
	}
	if !errors.Is(err, tokens.ErrExpired) {
		t.Errorf("errors.Is(%v, tokens.ErrExpired) = false", err)
	}
	if want := "invalid_token: the token expired: tokens: token expired: detail kid=k9 secret-detail"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestClaimsContext(t *testing.T) {
	if _, ok := middleware.ClaimsFrom(context.Background()); ok {
		t.Error("ClaimsFrom(Background) reports claims")
	}
	ctx := middleware.WithClaims(context.Background(), annClaims)
	got, ok := middleware.ClaimsFrom(ctx)
	if !ok || got != annClaims {
		t.Errorf("ClaimsFrom(WithClaims(ann)) = %v, %v", got, ok)
	}
	if _, ok := middleware.ClaimsFrom(middleware.WithClaims(context.Background(), nil)); ok {
		t.Error("ClaimsFrom(WithClaims(nil)) reports claims")
	}
}
