package middleware_test

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens"
)

// fuzzPasswords accepts ann with "pw" alone, and fails the test when handed
// a name with a colon: the Basic parser splits at the first one.
type fuzzPasswords struct{ t *testing.T }

func (p fuzzPasswords) Authenticate(_ context.Context, name, password string) (tokens.Principal, error) {
	if strings.Contains(name, ":") || name == "" {
		p.t.Fatalf("the password check was handed the name %q", name)
	}
	if name == "ann" && password == "pw" {
		return tokens.Principal{Subject: "ann"}, nil
	}
	return tokens.Principal{}, tokens.ErrBadCredentials
}

// fuzzAPITokens accepts "scorehub_ok" alone, and fails the test when handed
// something that is not a b64token.
type fuzzAPITokens struct{ t *testing.T }

func (v fuzzAPITokens) VerifyAPIToken(_ context.Context, token string) (tokens.Principal, []string, error) {
	if !b64token.MatchString(token) {
		v.t.Fatalf("the API token check was handed %q", token)
	}
	if token == "scorehub_ok" {
		return tokens.Principal{Subject: "ann"}, nil, nil
	}
	return tokens.Principal{}, nil, tokens.ErrBadCredentials
}

// FuzzCredentialsHeader drives Credentials.Authorize with an arbitrary
// Authorization header and a policy taking an arbitrary set of kinds. It
// checks that it never panics, lets a request through only with a kind the
// policy takes and the one valid credential of that kind, and refuses
// everything else with a 4xx JSON error whose challenge names only kinds
// the policy takes and is safe to send as a header.
func FuzzCredentialsHeader(f *testing.F) {
	f.Add("Basic "+base64.StdEncoding.EncodeToString([]byte("ann:pw")), uint8(7))
	f.Add("apitoken scorehub_ok", uint8(2))
	f.Add("Bearer "+fuzzToken, uint8(4))
	f.Add("basic YW5uOnB3", uint8(1))
	f.Add("APITOKEN  scorehub_ok", uint8(3))
	f.Add("Basic Og==", uint8(7))
	f.Add("Digest x", uint8(7))
	f.Fuzz(func(t *testing.T, header string, kinds uint8) {
		c, err := middleware.NewCredentials(middleware.CredentialsConfig{
			BearerConfig: middleware.BearerConfig{Verifier: fuzzVerifier{t}, Realm: testRealm, Logger: slog.New(slog.DiscardHandler)},
			Passwords:    fuzzPasswords{t},
			APITokens:    fuzzAPITokens{t},
		})
		if err != nil {
			t.Fatal(err)
		}
		policy := registry.AuthPolicy{Mode: registry.TokenRequired}
		for i, s := range registry.AllSchemes() {
			if kinds&(1<<i) != 0 {
				policy.Schemes = append(policy.Schemes, s)
			}
		}
		r := (&http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/webapi/risk/x"}, Header: http.Header{}, Body: http.NoBody}).
			WithContext(context.Background())
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		err = c.Authorize(r, "risk", policy)

		name, rest, _ := strings.Cut(header, " ")
		value := strings.TrimLeft(rest, " ")
		valid := false
		for _, s := range policy.Accepted() {
			if !strings.EqualFold(name, string(s)) {
				continue
			}
			switch s {
			case registry.SchemeBasic:
				valid = value == base64.StdEncoding.EncodeToString([]byte("ann:pw"))
			case registry.SchemeAPIToken:
				valid = value == "scorehub_ok"
			case registry.SchemeBearer:
				valid = value == fuzzToken
			}
		}
		if valid != (err == nil) {
			t.Fatalf("header %q, kinds %q: valid %v, error %v", header, policy.Schemes, valid, err)
		}
		if err == nil {
			return
		}
		e := httperr.From(err)
		if e.Status < 400 || e.Status > 499 {
			t.Fatalf("header %q: status %d, want a 4xx", header, e.Status)
		}
		for i := 0; i < len(e.Challenge); i++ {
			if c := e.Challenge[i]; c < 0x20 || c > 0x7e {
				t.Fatalf("challenge %q is not printable ASCII", e.Challenge)
			}
		}
		if e.Status == 401 {
			for _, s := range registry.AllSchemes() {
				named := strings.Contains(strings.ToLower(e.Challenge), string(s)+" realm=")
				if named != policy.Accepts(s) {
					t.Fatalf("kinds %q: challenge %q names %s: %v", policy.Schemes, e.Challenge, s, named)
				}
			}
		}
	})
}
