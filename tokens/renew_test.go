package tokens_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/tokens"
)

// versions is a CredentialSource whose answers a test sets.
type versions struct {
	v   map[string]string
	err error
}

func (s *versions) CredentialVersion(_ context.Context, subject string) (string, bool, error) {
	v, ok := s.v[subject]
	return v, ok, s.err
}

func renewRequest(auth ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, tokens.PathRenew, nil)
	for _, a := range auth {
		r.Header.Add("Authorization", a)
	}
	return r
}

// newRenewal is a Service with a Renewer that checks credential versions
// against src.
func newRenewal(t *testing.T, src *versions) *serviceFixture {
	t.Helper()
	s := newService(t, nil)
	// The fixture's own verifier has no credential source: one over the
	// same keys that has.
	v, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: s.keys, Issuer: testIssuer, Audience: testAudience,
		Now: s.clock.Now, Credentials: src})
	if err != nil {
		t.Fatal(err)
	}
	h, err := tokens.NewService(tokens.ServiceConfig{Issuer: s.issuer, Users: s.users, Renewer: v, Now: s.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	s.handler = h
	return s
}

// A valid idToken is renewed for the same user, groups, admin flag and
// credential version, with a later expiry; the page keeps its session
// this way without keeping the password.
func TestRenewIssuesTheSameClaims(t *testing.T) {
	src := &versions{v: map[string]string{"alice": "v1"}}
	s := newRenewal(t, src)
	p := alice
	p.CredentialVersion = "v1"
	old := s.issue(t, p)
	oldClaims, err := s.verifier.Verify(context.Background(), old)
	if err != nil {
		t.Fatal(err)
	}
	s.clock.Advance(time.Minute)

	rec := s.do(renewRequest("Bearer " + old))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", rec.Code, rec.Body)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	var body struct{ IDToken, ExpirationDate string }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	c, err := s.verifier.Verify(context.Background(), body.IDToken)
	if err != nil {
		t.Fatalf("the renewed token does not verify: %v", err)
	}
	if d := cmp.Diff(tokens.Principal{Subject: oldClaims.Subject, Admin: oldClaims.Admin, Groups: oldClaims.Groups, CredentialVersion: "v1"},
		tokens.Principal{Subject: c.Subject, Admin: c.Admin, Groups: c.Groups, CredentialVersion: c.CredentialVersion}); d != "" {
		t.Errorf("renewed token's principal (-old +new):\n%s", d)
	}
	if !c.ExpiresAt.After(oldClaims.ExpiresAt) || c.ID == oldClaims.ID {
		t.Errorf("renewed token expires %v (old %v), id %q (old %q): want a new token that lives longer", c.ExpiresAt, oldClaims.ExpiresAt, c.ID, oldClaims.ID)
	}
	if want := c.ExpiresAt.UTC().Format(time.RFC3339); body.ExpirationDate != want {
		t.Errorf("expirationDate %q, want %q", body.ExpirationDate, want)
	}
}

func TestRenewRefuses(t *testing.T) {
	src := &versions{v: map[string]string{"alice": "v1"}}
	s := newRenewal(t, src)
	p := alice
	p.CredentialVersion = "v1"
	valid := s.issue(t, p)
	expired := s.issue(t, p)
	for _, tc := range []struct {
		name    string
		req     func() *http.Request
		status  int
		typ     string
		message string
	}{
		{"no credentials", func() *http.Request { return renewRequest() }, 401, "unauthorized", "get one at " + tokens.PathTokenService},
		{"Basic instead of Bearer", func() *http.Request { return renewRequest("Basic YWxpY2U6d29uZGVybGFuZA==") }, 401, "unauthorized", "Bearer idToken"},
		{"two headers", func() *http.Request { return renewRequest("Bearer "+valid, "Bearer "+valid) }, 400, "invalid_request", "more than one"},
		{"forged", func() *http.Request { return renewRequest("Bearer " + valid[:len(valid)-4] + "AAAA") }, 401, "invalid_token", "not valid"},
		{"expired", func() *http.Request {
			s.clock.Advance(24 * time.Hour)
			return renewRequest("Bearer " + expired)
		}, 401, "invalid_token", "has expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := s.do(tc.req())
			typ, msg := errorBody(t, rec.Body)
			if rec.Code != tc.status || typ != tc.typ || !strings.Contains(msg, tc.message) {
				t.Errorf("%d %s %q, want %d %s containing %q", rec.Code, typ, msg, tc.status, tc.typ, tc.message)
			}
			if tc.status == 401 && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer ") {
				t.Errorf("WWW-Authenticate %q, want a Bearer challenge", rec.Header().Get("WWW-Authenticate"))
			}
		})
	}
}

// A changed password ends the chain of renewals: the token's credential
// version no longer matches, and the holder must sign in again.
func TestRenewEndsWithThePassword(t *testing.T) {
	src := &versions{v: map[string]string{"alice": "v1"}}
	s := newRenewal(t, src)
	p := alice
	p.CredentialVersion = "v1"
	tok := s.issue(t, p)
	src.v["alice"] = "v2"
	rec := s.do(renewRequest("Bearer " + tok))
	typ, msg := errorBody(t, rec.Body)
	if rec.Code != 401 || typ != "invalid_token" || !strings.Contains(msg, "sign in again") {
		t.Errorf("%d %s %q, want 401 invalid_token asking to sign in again", rec.Code, typ, msg)
	}

	// A credential store that cannot answer is the server's fault, not
	// the token's: no challenge to sign in again.
	src.v["alice"] = "v1"
	src.err = errors.New("store down")
	rec = s.do(renewRequest("Bearer " + tok))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("with the credential store down: %d %s, want 500", rec.Code, rec.Body)
	}
}

// Without a Renewer the route is not served.
func TestRenewNeedsARenewer(t *testing.T) {
	s := newService(t, nil)
	if rec := s.do(renewRequest("Bearer x")); rec.Code != http.StatusNotFound {
		t.Errorf("status %d, want 404 without ServiceConfig.Renewer", rec.Code)
	}
	for _, r := range s.handler.Routes() {
		if strings.Contains(r, tokens.PathRenew) {
			t.Errorf("Routes lists %q without a Renewer", r)
		}
	}
}

// Renewals count against the client address's limit, as logins do: a
// stolen token cannot be renewed as fast as a script can ask.
func TestRenewIsRateLimited(t *testing.T) {
	s := newService(t, nil)
	h, err := tokens.NewService(tokens.ServiceConfig{Issuer: s.issuer, Users: s.users, Renewer: s.verifier, Now: s.clock.Now,
		AddressLimit: tokens.RateLimit{Every: time.Hour, Burst: 2}})
	if err != nil {
		t.Fatal(err)
	}
	s.handler = h
	tok := s.issue(t, alice)
	for i, want := range []int{200, 200, 429} {
		rec := s.do(renewRequest("Bearer " + tok))
		if rec.Code != want {
			t.Fatalf("renewal %d: %d, want %d", i+1, rec.Code, want)
		}
		if want == 429 && rec.Header().Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
}
