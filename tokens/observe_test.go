package tokens_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/tokens"
)

// outcomes records what a tokens.Observer is told.
type outcomes struct {
	mu  sync.Mutex
	got []string
}

func (o *outcomes) ObserveToken(route, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, route+" "+outcome)
}

func (o *outcomes) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	got := o.got
	o.got = nil
	return got
}

// TestObserveTokenService checks that every answer of the token service is
// reported once, with the outcome an operator would count it under.
func TestObserveTokenService(t *testing.T) {
	rec := &outcomes{}
	s := newService(t, func(c *tokens.ServiceConfig) {
		c.Observer = rec
		c.UserAddressLimit = tokens.RateLimit{Every: 1 << 40, Burst: 2} // bob gets two attempts
	})
	twoHeaders := basicRequest("alice", "wonderland")
	twoHeaders.Header.Add("Authorization", "Basic Zm9vOmJhcg==")
	tests := []struct {
		name string
		req  *http.Request
		code int
		want string
	}{
		{"right password", basicRequest("alice", "wonderland"), 200, tokens.OutcomeIssued},
		{"wrong password", basicRequest("alice", "looking-glass"), 401, tokens.OutcomeBadCredentials},
		{"no credentials", httptest.NewRequest(http.MethodGet, tokens.PathTokenService, nil), 401, tokens.OutcomeBadCredentials},
		{"two Authorization headers", twoHeaders, 400, tokens.OutcomeBadCredentials},
		{"bob's first attempt", basicRequest("bob", "x"), 401, tokens.OutcomeBadCredentials},
		{"bob's second attempt", basicRequest("bob", "y"), 401, tokens.OutcomeBadCredentials},
		{"bob past his limit", basicRequest("bob", "builder"), 429, tokens.OutcomeRateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			s.handler.ServeHTTP(w, tt.req)
			if w.Code != tt.code {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.code, w.Body)
			}
			if diff := cmp.Diff([]string{tokens.PathTokenService + " " + tt.want}, rec.take()); diff != "" {
				t.Errorf("observed (-want +got):\n%s", diff)
			}
		})
	}

	// Routes that are not token requests are not reported.
	for _, target := range []string{tokens.PathJWKS, "/nowhere"} {
		s.handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, target, nil))
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("JWKS and unknown routes observed as %v, want nothing", got)
	}
}

// TestObserveExchange checks the exchange's outcomes.
func TestObserveExchange(t *testing.T) {
	f := newFixture(t, tokens.EdDSA, 0)
	rs := newSigner(t, tokens.RS256, 0)
	idp := newFakeIdP(t, rs)
	rec := &outcomes{}
	h, err := tokens.NewService(tokens.ServiceConfig{Issuer: f.issuer, Provider: newProvider(t, idp, f.clock, nil), Now: f.clock.Now, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	good := rs.sign(t, keycloakClaims(idp.Issuer(), f.clock.Now()), nil)
	expired := keycloakClaims(idp.Issuer(), f.clock.Now())
	expired["iat"], expired["exp"] = f.clock.Now().Add(-2*time.Hour).Unix(), f.clock.Now().Add(-time.Hour).Unix()
	tests := []struct {
		name string
		auth []string
		code int
		want string
	}{
		{"valid access token", []string{"Bearer " + good}, 200, tokens.OutcomeIssued},
		{"expired access token", []string{"Bearer " + rs.sign(t, expired, nil)}, 401, tokens.OutcomeInvalidToken},
		{"garbage", []string{"Bearer not-a-jwt"}, 401, tokens.OutcomeInvalidToken},
		{"no token", nil, 401, tokens.OutcomeInvalidToken},
		{"two Authorization headers", []string{"Bearer " + good, "Bearer " + good}, 400, tokens.OutcomeInvalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, exchangeRequest(tt.auth...))
			if w.Code != tt.code {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.code, w.Body)
			}
			if diff := cmp.Diff([]string{tokens.PathExchange + " " + tt.want}, rec.take()); diff != "" {
				t.Errorf("observed (-want +got):\n%s", diff)
			}
		})
	}
}
