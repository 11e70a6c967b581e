package tokens_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/tokens"
)

type exchangeFixture struct {
	*fixture
	idp     *fakeIdP
	rs      signer
	handler *tokens.Service
}

func newExchange(t *testing.T) *exchangeFixture {
	t.Helper()
	f := newFixture(t, tokens.EdDSA, 0)
	rs := newSigner(t, tokens.RS256, 0)
	idp := newFakeIdP(t, rs)
	p := newProvider(t, idp, f.clock, nil)
	h, err := tokens.NewService(tokens.ServiceConfig{Issuer: f.issuer, Provider: p, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &exchangeFixture{fixture: f, idp: idp, rs: rs, handler: h}
}

func (x *exchangeFixture) accessToken(t *testing.T, edit func(jwt.MapClaims)) string {
	c := keycloakClaims(x.idp.Issuer(), x.clock.Now())
	if edit != nil {
		edit(c)
	}
	return x.rs.sign(t, c, nil)
}

func exchangeRequest(auth ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, tokens.PathExchange, nil)
	for _, a := range auth {
		r.Header.Add("Authorization", a)
	}
	return r
}

func TestExchangeIssues(t *testing.T) {
	x := newExchange(t)
	wantClaims := func(c *tokens.Claims) *tokens.Claims {
		return &tokens.Claims{Subject: "oidc:alice", Admin: true, Groups: []string{"analysts", "scoring"}, Issuer: testIssuer,
			Audience: []string{testAudience}, ID: c.ID, IssuedAt: t0, ExpiresAt: t0.Add(5 * time.Minute)}
	}
	tests := []struct {
		accept   string
		wantJSON bool
	}{
		{"application/json", true},
		{"text/plain, application/json;q=0.5", true},
		{"", false},
		{"*/*", false},
		{"text/plain", false},
		{"application/json;q=0", false},
	}
	for _, tt := range tests {
		t.Run("Accept="+tt.accept, func(t *testing.T) {
			r := exchangeRequest("Bearer " + x.accessToken(t, nil))
			if tt.accept != "" {
				r.Header.Set("Accept", tt.accept)
			}
			rec := httptest.NewRecorder()
			x.handler.ServeHTTP(rec, r)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q", cc)
			}
			raw := rec.Body.String()
			if tt.wantJSON {
				if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				var body map[string]string
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
					t.Fatal(err)
				}
				if body["expirationDate"] != "2026-03-14T15:14:26Z" {
					t.Errorf("expirationDate %q", body["expirationDate"])
				}
				raw = body["idToken"]
			} else if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" || strings.Count(raw, ".") != 2 || strings.ContainsAny(raw, "\n{") {
				t.Errorf("Content-Type %q, body %q; want the bare JWT as text/plain", ct, raw)
			}
			c, err := x.verifier.Verify(context.Background(), raw)
			if err != nil {
				t.Fatalf("issued token does not verify: %v", err)
			}
			if diff := cmp.Diff(wantClaims(c), c); diff != "" {
				t.Errorf("claims (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExchangeRefuses: the header-level attacks and bad access tokens,
// each with its status, challenge and error.
func TestExchangeRefuses(t *testing.T) {
	type want struct {
		Status    int
		Challenge string
		Type      string
	}
	const realm = `Bearer realm="scorehub"`
	invalid := func(desc string) want {
		return want{http.StatusUnauthorized, realm + `, error="invalid_token", error_description="` + desc + `"`, "invalid_token"}
	}
	tests := []struct {
		name string
		req  func(t *testing.T, x *exchangeFixture) *http.Request
		want want
	}{
		{"two Authorization headers", func(t *testing.T, x *exchangeFixture) *http.Request {
			tok := x.accessToken(t, nil)
			return exchangeRequest("Bearer "+tok, "Bearer "+tok)
		}, want{http.StatusBadRequest, realm + `, error="invalid_request", error_description="the request has more than one Authorization header"`, "invalid_request"}},
		{"Basic where Bearer is due", func(t *testing.T, x *exchangeFixture) *http.Request {
			r := exchangeRequest()
			r.SetBasicAuth("alice", "wonderland")
			return r
		}, want{http.StatusUnauthorized, realm, "unauthorized"}},
		{"no Authorization", func(t *testing.T, x *exchangeFixture) *http.Request { return exchangeRequest() },
			want{http.StatusUnauthorized, realm, "unauthorized"}},
		{"empty Bearer", func(t *testing.T, x *exchangeFixture) *http.Request { return exchangeRequest("Bearer ") },
			want{http.StatusUnauthorized, realm, "unauthorized"}},
		{"expired", func(t *testing.T, x *exchangeFixture) *http.Request {
			return exchangeRequest("Bearer " + x.accessToken(t, func(c jwt.MapClaims) { c["exp"] = x.clock.Now().Add(-time.Second).Unix() }))
		}, invalid("the access token has expired")},
		{"wrong issuer", func(t *testing.T, x *exchangeFixture) *http.Request {
			return exchangeRequest("Bearer " + x.accessToken(t, func(c jwt.MapClaims) { c["iss"] = "https://evil.example" }))
		}, invalid("the access token is from another issuer")},
		{"wrong audience", func(t *testing.T, x *exchangeFixture) *http.Request {
			return exchangeRequest("Bearer " + x.accessToken(t, func(c jwt.MapClaims) { c["aud"] = "account" }))
		}, invalid("the access token is not meant for this service")},
		{"alg none", func(t *testing.T, x *exchangeFixture) *http.Request {
			return exchangeRequest("Bearer " + mint(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType,
				map[string]any{"kid": x.rs.key.ID()}, keycloakClaims(x.idp.Issuer(), x.clock.Now())))
		}, invalid("the access token's signature cannot be verified")},
		{"tampered", func(t *testing.T, x *exchangeFixture) *http.Request {
			parts := strings.Split(x.accessToken(t, nil), ".")
			other := strings.Split(x.accessToken(t, func(c jwt.MapClaims) { c["preferred_username"] = "admin" }), ".")
			return exchangeRequest("Bearer " + parts[0] + "." + other[1] + "." + parts[2])
		}, invalid("the access token's signature cannot be verified")},
		{"9 KiB", func(t *testing.T, x *exchangeFixture) *http.Request {
			return exchangeRequest("Bearer " + x.accessToken(t, func(c jwt.MapClaims) { c["pad"] = strings.Repeat("x", 9<<10) }))
		}, invalid("the access token is too large")},
		{"bad base64", func(t *testing.T, x *exchangeFixture) *http.Request {
			return exchangeRequest("Bearer " + strings.Replace(x.accessToken(t, nil), ".", ".%", 1))
		}, invalid("the access token is malformed")},
		{"no user name", func(t *testing.T, x *exchangeFixture) *http.Request {
			return exchangeRequest("Bearer " + x.accessToken(t, func(c jwt.MapClaims) { delete(c, "preferred_username") }))
		}, invalid("the access token lacks a claim this service needs")},
		{"provider down", func(t *testing.T, x *exchangeFixture) *http.Request {
			x.idp.mu.Lock()
			x.idp.failJWKS = true
			x.idp.mu.Unlock()
			return exchangeRequest("Bearer " + x.accessToken(t, nil))
		}, want{http.StatusServiceUnavailable, "", "unavailable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := newExchange(t)
			rec := httptest.NewRecorder()
			x.handler.ServeHTTP(rec, tt.req(t, x))
			typ, _ := errorBody(t, rec.Body)
			got := want{rec.Code, rec.Header().Get("WWW-Authenticate"), typ}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if tt.want.Status == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") != "30" {
				t.Errorf("Retry-After %q, want 30", rec.Header().Get("Retry-After"))
			}
		})
	}
}

func TestExchangeNotServedWithoutProvider(t *testing.T) {
	s := newService(t, nil)
	rec := s.do(exchangeRequest("Bearer x.y.z"))
	if rec.Code != http.StatusNotFound {
		t.Errorf("exchange without a Provider: status %d, want 404", rec.Code)
	}
}
