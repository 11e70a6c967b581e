package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/tokens"
)

// fuzzToken is the one token fuzzVerifier accepts.
const fuzzToken = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJhbm4ifQ.c2ln-_~+/=="

// b64token is RFC 6750's b64token, written independently of the
// package's bit sets.
var b64token = regexp.MustCompile(`^[A-Za-z0-9\-._~+/]+=*$`)

// fuzzVerifier accepts fuzzToken alone and refuses everything else with
// one of the verification sentinels, picked by the token's length, so that
// every refusal path is reached. It fails the test when it is handed
// something that is not a b64token: the header parser must never pass such
// text on.
type fuzzVerifier struct{ t *testing.T }

var fuzzSentinels = []error{
	tokens.ErrMissing, tokens.ErrTooLarge, tokens.ErrMalformed, tokens.ErrAlgorithm,
	tokens.ErrUnknownKey, tokens.ErrSignature, tokens.ErrExpired, tokens.ErrNotYetValid,
	tokens.ErrIssuer, tokens.ErrAudience, tokens.ErrClaims, tokens.ErrRevoked,
}

func (v fuzzVerifier) Verify(_ context.Context, raw string) (*tokens.Claims, error) {
	if !b64token.MatchString(raw) {
		v.t.Fatalf("the verifier was handed %q, which is not a b64token", raw)
	}
	if raw == fuzzToken {
		return &tokens.Claims{Subject: "ann"}, nil
	}
	return nil, fmt.Errorf("%w: refused by the fuzz verifier", fuzzSentinels[len(raw)%len(fuzzSentinels)])
}

// FuzzAuthorizationHeader drives Authenticate and the Bearer middleware with
// arbitrary Authorization headers (none, one or two) and query strings. It
// checks that they never panic; that claims come back exactly when there is
// one header, "Bearer", spaces and the verifier's one valid token, and no
// access_token in the query; and that every refusal is a 400 or 401 JSON
// error with a single, header-safe Bearer challenge. The seed corpus is in
// testdata/fuzz/FuzzAuthorizationHeader.
func FuzzAuthorizationHeader(f *testing.F) {
	f.Fuzz(func(t *testing.T, first, second string, headers uint8, query string) {
		a, err := middleware.NewAuthenticator(middleware.BearerConfig{Verifier: fuzzVerifier{t}, Realm: testRealm})
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		switch headers % 3 {
		case 1:
			lines = []string{first}
		case 2:
			lines = []string{first, second}
		}
		newRequest := func() *http.Request {
			r := &http.Request{
				Method: http.MethodGet,
				URL:    &url.URL{Path: "/score", RawQuery: query},
				Header: http.Header{},
				Body:   http.NoBody,
			}
			r = r.WithContext(context.Background())
			for _, l := range lines {
				r.Header.Add("Authorization", l)
			}
			return r
		}

		claims, err := a.Authenticate(newRequest())
		wantOK := len(lines) == 1 && isValidBearer(lines[0]) && !queryNamesToken(query)
		switch {
		case err == nil && claims == nil:
			t.Fatal("neither claims nor an error")
		case err != nil && claims != nil:
			t.Fatalf("claims together with the error %v", err)
		case err == nil && !wantOK:
			t.Fatalf("claims for headers %q and query %q", lines, query)
		case err != nil && wantOK:
			t.Fatalf("headers %q and query %q refused: %v", lines, query, err)
		}
		if err != nil {
			var ae *problem.Error
			if !errors.As(err, &ae) {
				t.Fatalf("refusal %T %v is not a *problem.Error", err, err)
			}
			if s := ae.Status; s != http.StatusBadRequest && s != http.StatusUnauthorized {
				t.Fatalf("status %d for headers %q: %v", s, lines, err)
			}
			if s := httperr.From(err).Status; s != ae.Status {
				t.Fatalf("httperr maps the refusal to %d, the refusal says %d", s, ae.Status)
			}
		}

		// The same request through the middleware: the client sees the same
		// status, a JSON error and one challenge that is safe in a header.
		rec := httptest.NewRecorder()
		a.Middleware(okHandler).ServeHTTP(rec, newRequest())
		if wantOK {
			if rec.Code != http.StatusOK || rec.Body.String() != "ok ann" {
				t.Fatalf("middleware answered %d %q for a valid token", rec.Code, rec.Body)
			}
			return
		}
		if rec.Code != httperr.From(err).Status {
			t.Fatalf("middleware status %d, Authenticate's refusal %v", rec.Code, err)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("refusal Content-Type %q", ct)
		}
		ch := rec.Header().Values("WWW-Authenticate")
		if len(ch) != 1 || !strings.HasPrefix(ch[0], `Bearer realm="`+testRealm+`"`) || !printable(ch[0]) {
			t.Fatalf("challenge %q", ch)
		}
		if strings.Contains(rec.Body.String(), "refused by the fuzz verifier") {
			t.Fatalf("the verifier's detail reached the client: %s", rec.Body)
		}
	})
}

// isValidBearer reports whether h is "Bearer" in any case, one or more
// spaces and fuzzToken.
func isValidBearer(h string) bool {
	scheme, rest, ok := strings.Cut(h, " ")
	return ok && strings.EqualFold(scheme, "Bearer") && strings.TrimLeft(rest, " ") == fuzzToken
}

// queryNamesToken reports whether the query has a field named
// access_token, as sent or percent-decoded.
func queryNamesToken(q string) bool {
	for _, field := range strings.Split(q, "&") {
		key, _, _ := strings.Cut(field, "=")
		if k, err := url.QueryUnescape(key); key == "access_token" || (err == nil && k == "access_token") {
			return true
		}
	}
	return false
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
