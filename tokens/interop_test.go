package tokens_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/oidctest"
	"github.com/scorehub/scorehub/tokens"
)

// TestInteropOIDCProvider runs the whole offline-token story against a real,
// certified OpenID Connect provider: a user logs in through the
// authorization-code flow with PKCE and grants offline_access, the client
// keeps the offline (refresh) token, later trades it for a JWT access token,
// exchanges that at /api/rest/saml/tokenservice, and uses the scorehub token
// it gets on a Bearer-protected route.
func TestInteropOIDCProvider(t *testing.T) {
	op := oidctest.Start(t, filepath.Join("testdata", "oidc"))

	// 1–2. Log in as a browser would, grant offline_access, and keep the
	// offline token.
	offline := op.OfflineToken(t, "alice", "alice-password")

	// 3. Later: the offline token buys a JWT access token for scorehub.
	access := op.AccessToken(t, offline)

	// 4. scorehub exchanges it.
	keys, err := tokens.NewKeySet(tokens.KeySetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	const self = "http://127.0.0.1/scorehub"
	issuer, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: self, Audience: []string{"scorehub-api"}})
	if err != nil {
		t.Fatal(err)
	}
	provider, err := tokens.NewProvider(tokens.ProviderConfig{Issuer: op.Issuer, Audience: []string{op.Audience},
		ClientIDs: []string{op.ClientID}, TokenTypes: []string{"at+jwt"}, Leeway: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h, err := tokens.NewService(tokens.ServiceConfig{Issuer: issuer, Provider: provider})
	if err != nil {
		t.Fatal(err)
	}
	hub := httptest.NewServer(h)
	defer hub.Close()
	exchange := func(bearer, accept string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, hub.URL+tokens.PathExchange, nil)
		req.Header.Set("Authorization", "Bearer "+bearer)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := hub.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, body
	}
	resp, body := exchange(access, "application/json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("exchange: status %d: %s", resp.StatusCode, body)
	}
	var issued struct {
		IDToken        string `json:"idToken"`
		ExpirationDate string `json:"expirationDate"`
	}
	if err := json.Unmarshal(body, &issued); err != nil {
		t.Fatal(err)
	}
	if exp, err := time.Parse(time.RFC3339, issued.ExpirationDate); err != nil || exp.Location() != time.UTC {
		t.Errorf("expirationDate %q is not RFC 3339 UTC", issued.ExpirationDate)
	}
	resp, plain := exchange(access, "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || strings.Count(string(plain), ".") != 2 {
		t.Errorf("exchange without Accept: status %d, %q, body %q; want the bare JWT", resp.StatusCode, resp.Header.Get("Content-Type"), plain)
	}
	if resp, body := exchange(offline, "application/json"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the offline token itself was exchanged: status %d: %s", resp.StatusCode, body)
	}

	// 5. The scorehub token opens a Bearer-protected route.
	v, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: self, Audience: "scorehub-api"})
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(bearerOnly(v))
	defer api.Close()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, api.URL, nil)
	req.Header.Set("Authorization", "Bearer "+issued.IDToken)
	resp, err = api.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var who map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&who); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("protected route: status %d, %v", resp.StatusCode, err)
	}
	want := map[string]any{"sub": "oidc:alice", "admin": true, "groups": []any{"analysts", "scoring"}}
	if diff := cmp.Diff(want, who); diff != "" {
		t.Errorf("the protected route saw (-want +got):\n%s", diff)
	}
}
