package tokens_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// TestDotSegmentsAreNotFoundNotRedirected: a path that cleans to a token
// route is a JSON 404, not the mux's HTML redirect to that route.
func TestDotSegmentsAreNotFoundNotRedirected(t *testing.T) {
	f := newFixture(t, tokens.EdDSA, 0)
	hash, err := accounts.HashPassword("secret", 4)
	if err != nil {
		t.Fatal(err)
	}
	users, err := accounts.NewStaticUsers(accounts.User{Name: "alice", PasswordHash: hash})
	if err != nil {
		t.Fatal(err)
	}
	h, err := tokens.NewService(tokens.ServiceConfig{Issuer: f.issuer, Users: users, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{
		"/api/rest/x/../tokenservice",
		"/api/rest/./jwks.json",
		"/api/rest//jwks.json",
		"/api/rest/%2e%2e/rest/jwks.json",
	} {
		t.Run(target, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
			var got struct{ Error struct{ Type string } }
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusNotFound ||
				got.Error.Type != "not_found" || rec.Header().Get("Location") != "" {
				t.Errorf("answered %d %q %s, want a JSON 404 not_found without a redirect", rec.Code, rec.Header(), rec.Body)
			}
		})
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tokens.PathJWKS, nil))
	if rec.Code != http.StatusOK {
		t.Errorf("GET %s: %d, want the key set", tokens.PathJWKS, rec.Code)
	}
}
