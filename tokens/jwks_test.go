package tokens_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/scorehub/scorehub/tokens"
)

func TestJWKSHandler(t *testing.T) {
	f := newFixture(t, tokens.EdDSA, 0)
	f.clock.Advance(time.Minute)
	if _, err := f.keys.Rotate(); err != nil {
		t.Fatal(err)
	}
	h := tokens.JWKSHandler(f.keys)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tokens.PathJWKS, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	for k, want := range map[string]string{
		"Content-Type":  "application/jwk-set+json",
		"Cache-Control": "public, max-age=300",
	} {
		if got := rec.Header().Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	var set tokens.JWKS
	if err := json.Unmarshal(rec.Body.Bytes(), &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 2 {
		t.Fatalf("JWKS has %d keys, want the signing and the retired key", len(set.Keys))
	}
	for _, j := range set.Keys {
		if j.KeyType != "OKP" || j.Curve != "Ed25519" || j.Algorithm != "EdDSA" || j.Use != "sig" || j.X == "" {
			t.Errorf("JWK %+v is not a complete Ed25519 signing key", j)
		}
	}

	etag := rec.Header().Get("ETag")
	req := httptest.NewRequest(http.MethodGet, tokens.PathJWKS, nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("If-None-Match with the current ETag: status %d, %d bytes; want 304 and no body", rec.Code, rec.Body.Len())
	}

	f.clock.Advance(f.keys.Retention() + time.Second)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("after the retired key left, the old ETag still matched: status %d", rec.Code)
	}
}

func TestJWKSNeverPublishesHMAC(t *testing.T) {
	f := newFixture(t, tokens.HS256, 0)
	rec := httptest.NewRecorder()
	tokens.JWKSHandler(f.keys).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tokens.PathJWKS, nil))
	if got, want := rec.Body.String(), `{"keys":[]}`+"\n"; got != want {
		t.Errorf("JWKS of an HS256 key set is %s, want %s", got, want)
	}
}

// TestJWKSVerifiesElsewhere: another process that knows only the published
// JWKS (here a Provider pointed at it) verifies the tokens, for every
// published algorithm.
func TestJWKSVerifiesElsewhere(t *testing.T) {
	for _, alg := range []tokens.Algorithm{tokens.EdDSA, tokens.ES256, tokens.RS256} {
		t.Run(string(alg), func(t *testing.T) {
			f := newFixture(t, alg, 0)
			srv := httptest.NewServer(tokens.JWKSHandler(f.keys))
			defer srv.Close()
			p, err := tokens.NewProvider(tokens.ProviderConfig{
				Issuer: testIssuer, JWKSURL: srv.URL + tokens.PathJWKS, Audience: []string{testAudience},
				Algorithms: []tokens.Algorithm{alg}, Now: f.clock.Now, HTTPClient: srv.Client(),
				Claims: tokens.ClaimMapping{Subject: "sub", Roles: "roles", Groups: "grp"},
			})
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Verify(context.Background(), f.issue(t, alice))
			if err != nil {
				t.Fatal(err)
			}
			if got.Subject != "oidc:alice" || len(got.Groups) != 2 {
				t.Errorf("principal %+v", got)
			}
		})
	}
}
