package middleware_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens"
)

// TestBearerOnlyAuthorize checks Authorize of a Credentials that takes
// bearer idTokens only, the check of a service without other kinds.
func TestBearerOnlyAuthorize(t *testing.T) {
	c, err := middleware.NewCredentials(middleware.CredentialsConfig{BearerConfig: middleware.BearerConfig{Verifier: &fakeVerifier{}, Realm: testRealm}})
	if err != nil {
		t.Fatal(err)
	}
	authorize := c.Authorize
	token := registry.AuthPolicy{Mode: registry.TokenRequired}
	restricted := registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"finance", "sales"}}
	tests := []struct {
		name          string
		policy        registry.AuthPolicy
		auth          string
		wantStatus    int // 0: let through
		wantType      string
		wantChallenge string
		wantIs        error
	}{
		{"public needs nothing", registry.AuthPolicy{Mode: registry.Public}, "", 0, "", "", nil},
		{"empty mode is public", registry.AuthPolicy{}, "", 0, "", "", nil},
		{"public ignores a bad token", registry.AuthPolicy{Mode: registry.Public}, "Bearer expired", 0, "", "", nil},
		{"token required, none sent", token, "", http.StatusUnauthorized, "unauthorized", `Bearer realm="scorehub-test"`, nil},
		{"token required, any valid token", token, "Bearer ann-token", 0, "", "", nil},
		{"token required, expired", token, "Bearer expired", http.StatusUnauthorized, "invalid_token",
			`Bearer realm="scorehub-test", error="invalid_token", error_description="the token expired"`, tokens.ErrExpired},
		{"token required, bad signature", token, "Bearer forged", http.StatusUnauthorized, "invalid_token",
			`Bearer realm="scorehub-test", error="invalid_token", error_description="the token is invalid"`, tokens.ErrSignature},
		{"token required, malformed header", token, "Bearer a b", http.StatusBadRequest, "invalid_request",
			`Bearer realm="scorehub-test", error="invalid_request", error_description="the Authorization header must be the word Bearer, one space and one token"`, nil},
		{"groups, holder in the second", restricted, "Bearer bob-token", 0, "", "", nil},
		{"groups, holder in none", restricted, "Bearer ann-token", http.StatusForbidden, "forbidden",
			`Bearer realm="scorehub-test", error="insufficient_scope", error_description="the token's holder is not in a user group allowed here"`, nil},
		{"groups, admin in none", restricted, "Bearer root-token", http.StatusForbidden, "forbidden",
			`Bearer realm="scorehub-test", error="insufficient_scope", error_description="the token's holder is not in a user group allowed here"`, nil},
		{"groups, no token", restricted, "", http.StatusUnauthorized, "unauthorized", `Bearer realm="scorehub-test"`, nil},
		{"unknown mode is refused", registry.AuthPolicy{Mode: "open-sesame"}, "Bearer root-token", http.StatusInternalServerError, "internal_error", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/webapi/DEFAULT/api/v1/services/churn/predict", nil)
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			err := authorize(r, "DEFAULT", tt.policy)
			if tt.wantStatus == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("let through")
			}
			// What the scoring handler does with it: httperr.From for the
			// answer, its Challenge for WWW-Authenticate.
			e := httperr.From(err)
			if e.Status != tt.wantStatus || string(e.Code) != tt.wantType {
				t.Errorf("answer = %d %s, want %d %s", e.Status, string(e.Code), tt.wantStatus, tt.wantType)
			}
			if gotChallenge := e.Challenge; gotChallenge != tt.wantChallenge {
				t.Errorf("challenge = %q, want %q", gotChallenge, tt.wantChallenge)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
		})
	}
}

func TestBearerOnlyConfig(t *testing.T) {
	if _, err := middleware.NewCredentials(middleware.CredentialsConfig{}); err == nil {
		t.Fatal("Credentials without a verifier succeeded")
	}
}
