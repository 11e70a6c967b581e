package tokens_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/tokens"
)

// fakeIdP is an OpenID Connect provider reduced to what scorehub reads
// from one: the discovery document and the JWKS.
type fakeIdP struct {
	srv       *httptest.Server
	mu        sync.Mutex
	keys      []tokens.JWK
	issuer    string // in the discovery document; the server URL unless set
	failJWKS  bool
	gate      chan struct{} // when set, JWKS requests wait for it to close
	fetching  chan struct{} // when set, told of each JWKS request
	discovery atomic.Int64
	jwks      atomic.Int64
}

func newFakeIdP(t *testing.T, signers ...signer) *fakeIdP {
	t.Helper()
	p := &fakeIdP{}
	for _, s := range signers {
		p.keys = append(p.keys, jwkOf(t, s))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /realms/scorehub/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		p.discovery.Add(1)
		p.mu.Lock()
		iss := p.issuer
		p.mu.Unlock()
		if iss == "" {
			iss = p.Issuer()
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"issuer": iss, "jwks_uri": p.srv.URL + "/realms/scorehub/certs"})
	})
	mux.HandleFunc("GET /realms/scorehub/certs", func(w http.ResponseWriter, r *http.Request) {
		p.jwks.Add(1)
		p.mu.Lock()
		gate, fetching, fail, keys := p.gate, p.fetching, p.failJWKS, tokens.JWKS{Keys: p.keys}
		p.mu.Unlock()
		if fetching != nil {
			fetching <- struct{}{}
		}
		if gate != nil {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		if fail {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(keys)
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *fakeIdP) Issuer() string { return p.srv.URL + "/realms/scorehub" }

func (p *fakeIdP) setKeys(t *testing.T, signers ...signer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = nil
	for _, s := range signers {
		p.keys = append(p.keys, jwkOf(t, s))
	}
}

// jwkOf is the public JWK of s, as a provider publishes it.
func jwkOf(t testing.TB, s signer) tokens.JWK {
	t.Helper()
	ks, err := tokens.NewKeySet(tokens.KeySetConfig{Signing: s.key})
	if err != nil {
		t.Fatal(err)
	}
	return ks.JWKS().Keys[0]
}

// keycloakClaims are the claims of a Keycloak access token for alice.
func keycloakClaims(issuer string, now time.Time) jwt.MapClaims {
	return jwt.MapClaims{
		"iss": issuer, "aud": []string{"scorehub", "account"}, "azp": "scorehub-cli", "typ": "Bearer",
		"sub": "0b5f2f7c-2a9e-4a5e-9d4e-7f0c7a1d2e3f", "jti": "kc-1",
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"preferred_username": "alice",
		"realm_access":       map[string]any{"roles": []string{"admin", "offline_access"}},
		"groups":             []string{"/analysts", "/scoring"},
	}
}

func newProvider(t *testing.T, idp *fakeIdP, c *testutil.Clock, edit func(*tokens.ProviderConfig)) *tokens.Provider {
	t.Helper()
	cfg := tokens.ProviderConfig{Issuer: idp.Issuer(), Audience: []string{"scorehub"}, HTTPClient: idp.srv.Client(), Now: c.Now}
	if edit != nil {
		edit(&cfg)
	}
	p, err := tokens.NewProvider(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProviderMapsClaims(t *testing.T) {
	rs := newSigner(t, tokens.RS256, 0)
	tests := []struct {
		name    string
		mapping tokens.ClaimMapping
		edit    func(jwt.MapClaims)
		want    tokens.Principal
		wantErr error
	}{
		{name: "Keycloak defaults",
			want: tokens.Principal{Subject: "oidc:alice", Admin: true, Groups: []string{"analysts", "scoring"}}},
		{name: "not an admin",
			edit: func(c jwt.MapClaims) { c["realm_access"] = map[string]any{"roles": []string{"user"}} },
			want: tokens.Principal{Subject: "oidc:alice", Groups: []string{"analysts", "scoring"}}},
		{name: "no roles, no groups",
			edit: func(c jwt.MapClaims) { delete(c, "realm_access"); delete(c, "groups") },
			want: tokens.Principal{Subject: "oidc:alice", Groups: []string{}}},
		{name: "client roles and another subject claim",
			mapping: tokens.ClaimMapping{Subject: "email", Roles: "resource_access.scorehub.roles",
				AdminRoles: []string{"scorehub-admin"}, Groups: "teams"},
			edit: func(c jwt.MapClaims) {
				c["email"] = "alice@example.com"
				c["resource_access"] = map[string]any{"scorehub": map[string]any{"roles": []string{"scorehub-admin"}}}
				c["teams"] = []string{"red"}
			},
			want: tokens.Principal{Subject: "oidc:alice@example.com", Admin: true, Groups: []string{"red"}}},
		{name: "no preferred_username",
			edit:    func(c jwt.MapClaims) { delete(c, "preferred_username") },
			wantErr: tokens.ErrClaims},
		{name: "roles not an array",
			edit:    func(c jwt.MapClaims) { c["realm_access"] = map[string]any{"roles": "admin"} },
			wantErr: tokens.ErrClaims},
		{name: "group not a string",
			edit:    func(c jwt.MapClaims) { c["groups"] = []any{"a", 1} },
			wantErr: tokens.ErrClaims},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idp := newFakeIdP(t, rs)
			c := newClock()
			p := newProvider(t, idp, c, func(cfg *tokens.ProviderConfig) { cfg.Claims = tt.mapping })
			claims := keycloakClaims(idp.Issuer(), c.Now())
			if tt.edit != nil {
				tt.edit(claims)
			}
			got, err := p.Verify(context.Background(), rs.sign(t, claims, nil))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Verify: %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("principal (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProviderAttacks: tokens that must not pass for the provider's.
func TestProviderAttacks(t *testing.T) {
	rs := newSigner(t, tokens.RS256, 0)
	tests := []struct {
		name  string
		token func(t *testing.T, iss string, now time.Time) string
		want  error
	}{
		{"alg none", func(t *testing.T, iss string, now time.Time) string {
			return mint(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, map[string]any{"kid": rs.key.ID()}, keycloakClaims(iss, now))
		}, tokens.ErrAlgorithm},
		{"ES256 where the key is RSA", func(t *testing.T, iss string, now time.Time) string {
			return newSigner(t, tokens.ES256, 3).sign(t, keycloakClaims(iss, now), map[string]any{"kid": rs.key.ID()})
		}, tokens.ErrAlgorithm},
		{"unknown kid", func(t *testing.T, iss string, now time.Time) string {
			return rs.sign(t, keycloakClaims(iss, now), map[string]any{"kid": "nope"})
		}, tokens.ErrUnknownKey},
		{"expired", func(t *testing.T, iss string, now time.Time) string {
			return rs.sign(t, keycloakClaims(iss, now.Add(-time.Hour)), nil)
		}, tokens.ErrExpired},
		{"another realm", func(t *testing.T, iss string, now time.Time) string {
			return rs.sign(t, keycloakClaims(iss+"-other", now), nil)
		}, tokens.ErrIssuer},
		{"not for scorehub", func(t *testing.T, iss string, now time.Time) string {
			c := keycloakClaims(iss, now)
			c["aud"] = "account"
			return rs.sign(t, c, nil)
		}, tokens.ErrAudience},
		{"issued to another client", func(t *testing.T, iss string, now time.Time) string {
			c := keycloakClaims(iss, now)
			c["azp"] = "some-other-app"
			return rs.sign(t, c, nil)
		}, tokens.ErrAudience},
		{"a Keycloak ID token of another client", func(t *testing.T, iss string, now time.Time) string {
			c := keycloakClaims(iss, now)
			c["azp"], c["aud"], c["typ"] = "some-other-app", "scorehub", "ID"
			return rs.sign(t, c, nil)
		}, tokens.ErrAudience},
		{"a Keycloak ID token of the allowed client", func(t *testing.T, iss string, now time.Time) string {
			c := keycloakClaims(iss, now)
			c["typ"] = "ID"
			return rs.sign(t, c, nil)
		}, tokens.ErrAudience},
		{"a Keycloak refresh token", func(t *testing.T, iss string, now time.Time) string {
			c := keycloakClaims(iss, now)
			c["typ"] = "Refresh"
			return rs.sign(t, c, nil)
		}, tokens.ErrAudience},
		{"no token type", func(t *testing.T, iss string, now time.Time) string {
			c := keycloakClaims(iss, now)
			delete(c, "typ")
			return rs.sign(t, c, map[string]any{"typ": "JWT"})
		}, tokens.ErrAudience},
		{"preferred_username twice", func(t *testing.T, iss string, now time.Time) string {
			claims, err := json.Marshal(keycloakClaims(iss, now))
			if err != nil {
				t.Fatal(err)
			}
			return rs.signRaw(t, `{"alg":"RS256","kid":"`+rs.key.ID()+`"}`,
				strings.Replace(string(claims), `"preferred_username":"alice"`, `"preferred_username":"alice","preferred_username":"admin"`, 1))
		}, tokens.ErrMalformed},
		{"crit in the header", func(t *testing.T, iss string, now time.Time) string {
			return rs.sign(t, keycloakClaims(iss, now), map[string]any{"crit": []string{"x-ext"}, "x-ext": true})
		}, tokens.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idp := newFakeIdP(t, rs)
			c := newClock()
			p := newProvider(t, idp, c, func(cfg *tokens.ProviderConfig) {
				cfg.ClientIDs, cfg.TokenTypes = []string{"scorehub-cli"}, []string{"Bearer"}
			})
			got, err := p.Verify(context.Background(), tt.token(t, idp.Issuer(), c.Now()))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify: %v, want %v", err, tt.want)
			}
			if !cmp.Equal(got, tokens.Principal{}) {
				t.Errorf("principal %+v returned with an error", got)
			}
		})
	}
}

// TestProviderUserIsNotLocal: a provider's user named admin, even with the
// admin role, gets a subject of its own, never the local admin's.
func TestProviderUserIsNotLocal(t *testing.T) {
	rs := newSigner(t, tokens.RS256, 0)
	tests := []struct {
		name   string
		prefix string
		want   string
	}{
		{"default prefix", "", "oidc:admin"},
		{"prefix of the host's choice", "keycloak:", "keycloak:admin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idp := newFakeIdP(t, rs)
			c := newClock()
			p := newProvider(t, idp, c, func(cfg *tokens.ProviderConfig) { cfg.Claims.SubjectPrefix = tt.prefix })
			claims := keycloakClaims(idp.Issuer(), c.Now())
			claims["preferred_username"] = "admin"
			got, err := p.Verify(context.Background(), rs.sign(t, claims, nil))
			if err != nil {
				t.Fatal(err)
			}
			if got.Subject != tt.want || !got.Admin {
				t.Errorf("principal %+v, want the admin role as subject %q", got, tt.want)
			}
		})
	}
	idp := newFakeIdP(t, rs)
	for _, prefix := range []string{"kc", "oidc-", "adm"} {
		cfg := tokens.ProviderConfig{Issuer: idp.Issuer(), Audience: []string{"scorehub"}, Claims: tokens.ClaimMapping{SubjectPrefix: prefix}}
		if _, err := tokens.NewProvider(cfg); err == nil {
			t.Errorf("NewProvider accepted the subject prefix %q, which does not end in a colon", prefix)
		}
	}
}

// TestProviderTokenTypes: the type is the "typ" claim or, lacking one, the
// JOSE header's, compared without regard to case or "application/".
func TestProviderTokenTypes(t *testing.T) {
	rs := newSigner(t, tokens.RS256, 0)
	tests := []struct {
		name   string
		types  []string
		claim  string
		header string
		ok     bool
	}{
		{"Keycloak access token", []string{"Bearer"}, "Bearer", "JWT", true},
		{"case does not matter", []string{"bearer"}, "Bearer", "", true},
		{"RFC 9068 header", []string{"at+jwt"}, "", "at+jwt", true},
		{"RFC 9068 media type", []string{"at+jwt"}, "", "application/at+JWT", true},
		{"the claim decides over the header", []string{"at+jwt"}, "ID", "at+jwt", false},
		{"ID token", []string{"Bearer", "at+jwt"}, "ID", "JWT", false},
		{"no type at all", []string{"Bearer"}, "", "", false},
		{"no check configured", nil, "ID", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idp := newFakeIdP(t, rs)
			c := newClock()
			p := newProvider(t, idp, c, func(cfg *tokens.ProviderConfig) { cfg.TokenTypes = tt.types })
			claims := keycloakClaims(idp.Issuer(), c.Now())
			delete(claims, "typ")
			if tt.claim != "" {
				claims["typ"] = tt.claim
			}
			header := map[string]any{}
			if tt.header != "" {
				header["typ"] = tt.header
			}
			_, err := p.Verify(context.Background(), rs.sign(t, claims, header))
			if tt.ok && err != nil {
				t.Errorf("Verify: %v, want the token accepted", err)
			}
			if !tt.ok && !errors.Is(err, tokens.ErrAudience) {
				t.Errorf("Verify: %v, want ErrAudience", err)
			}
		})
	}
}

// TestProviderUnknownKidSingleFlight: many requests meeting the provider's
// new key at once cause one fetch, and all of them succeed.
func TestProviderUnknownKidSingleFlight(t *testing.T) {
	oldKey, newKey := newSigner(t, tokens.ES256, 1), newSigner(t, tokens.ES256, 2)
	idp := newFakeIdP(t, oldKey)
	c := newClock()
	p := newProvider(t, idp, c, func(cfg *tokens.ProviderConfig) { cfg.Algorithms = []tokens.Algorithm{tokens.ES256} })
	if _, err := p.Verify(context.Background(), oldKey.sign(t, keycloakClaims(idp.Issuer(), c.Now()), nil)); err != nil {
		t.Fatal(err)
	}
	if n := idp.jwks.Load(); n != 1 {
		t.Fatalf("%d JWKS fetches for the first token, want 1", n)
	}

	// The provider rotates; its JWKS answers only once released.
	idp.setKeys(t, oldKey, newKey)
	gate, fetching := make(chan struct{}), make(chan struct{}, 16)
	idp.mu.Lock()
	idp.gate, idp.fetching = gate, fetching
	idp.mu.Unlock()

	const n = 16
	raw := newKey.sign(t, keycloakClaims(idp.Issuer(), c.Now()), nil)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := p.Verify(context.Background(), raw)
			errs <- err
		}()
	}
	<-fetching
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Verify with the new key: %v", err)
		}
	}
	if got := idp.jwks.Load(); got != 2 {
		t.Errorf("%d JWKS fetches in all, want 2: one at start, one for the new key", got)
	}
	if got := idp.discovery.Load(); got != 1 {
		t.Errorf("%d discovery fetches, want 1", got)
	}
}

// TestProviderRefreshRateLimited: tokens naming random kids make at most
// one fetch per RefreshInterval.
func TestProviderRefreshRateLimited(t *testing.T) {
	rs := newSigner(t, tokens.ES256, 4)
	idp := newFakeIdP(t, rs)
	c := newClock()
	p := newProvider(t, idp, c, func(cfg *tokens.ProviderConfig) {
		cfg.RefreshInterval = 30 * time.Second
		cfg.Algorithms = []tokens.Algorithm{tokens.ES256}
	})
	if _, err := p.Verify(context.Background(), rs.sign(t, keycloakClaims(idp.Issuer(), c.Now()), nil)); err != nil {
		t.Fatal(err)
	}
	spray := func(count int) {
		for i := range count {
			raw := rs.sign(t, keycloakClaims(idp.Issuer(), c.Now()), map[string]any{"kid": fmt.Sprint("random-", i)})
			if _, err := p.Verify(context.Background(), raw); !errors.Is(err, tokens.ErrUnknownKey) {
				t.Fatalf("random kid: %v, want ErrUnknownKey", err)
			}
		}
	}
	spray(50)
	if got := idp.jwks.Load(); got != 2 {
		t.Errorf("after 50 random kids: %d JWKS fetches, want 2 (start + one refresh)", got)
	}
	c.Advance(30 * time.Second)
	spray(50)
	if got := idp.jwks.Load(); got != 3 {
		t.Errorf("after another 50, 30 s later: %d JWKS fetches, want 3", got)
	}
	if _, err := p.Verify(context.Background(), rs.sign(t, keycloakClaims(idp.Issuer(), c.Now()), nil)); err != nil {
		t.Errorf("a good token after the spray: %v", err)
	}
}

// TestProviderFetchTimeout: a provider that never answers costs one
// FetchTimeout, then ErrProviderUnavailable, and no new fetch until the
// RefreshInterval has passed.
func TestProviderFetchTimeout(t *testing.T) {
	rs := newSigner(t, tokens.RS256, 0)
	idp := newFakeIdP(t, rs)
	idp.gate = make(chan struct{}) // never closed: the JWKS hangs
	c := newClock()
	p := newProvider(t, idp, c, func(cfg *tokens.ProviderConfig) { cfg.FetchTimeout = 50 * time.Millisecond })
	raw := rs.sign(t, keycloakClaims(idp.Issuer(), c.Now()), nil)
	for i := range 3 {
		if _, err := p.Verify(context.Background(), raw); !errors.Is(err, tokens.ErrProviderUnavailable) {
			t.Fatalf("attempt %d: %v, want ErrProviderUnavailable", i+1, err)
		}
	}
	if got := idp.jwks.Load(); got != 1 {
		t.Errorf("%d JWKS fetches, want 1: failures back off", got)
	}
	idp.mu.Lock()
	idp.gate = nil
	idp.mu.Unlock()
	c.Advance(30 * time.Second)
	if _, err := p.Verify(context.Background(), raw); err != nil {
		t.Errorf("after the back-off, with the provider back: %v", err)
	}
}

// TestProviderKeepsKeysWhenDown: keys older than MaxAge are used while the
// provider cannot be reached.
func TestProviderKeepsKeysWhenDown(t *testing.T) {
	rs := newSigner(t, tokens.RS256, 0)
	idp := newFakeIdP(t, rs)
	c := newClock()
	p := newProvider(t, idp, c, func(cfg *tokens.ProviderConfig) { cfg.MaxAge = time.Hour })
	if _, err := p.Verify(context.Background(), rs.sign(t, keycloakClaims(idp.Issuer(), c.Now()), nil)); err != nil {
		t.Fatal(err)
	}
	idp.mu.Lock()
	idp.failJWKS = true
	idp.mu.Unlock()
	c.Advance(2 * time.Hour)
	if _, err := p.Verify(context.Background(), rs.sign(t, keycloakClaims(idp.Issuer(), c.Now()), nil)); err != nil {
		t.Errorf("with old keys and the provider down: %v", err)
	}
	if got := idp.jwks.Load(); got != 2 {
		t.Errorf("%d JWKS fetches, want 2: old keys are refreshed", got)
	}
}

// TestProviderWaitRespectsContext: a caller whose context ends stops
// waiting for the fetch; the fetch goes on for the others.
func TestProviderWaitRespectsContext(t *testing.T) {
	rs := newSigner(t, tokens.RS256, 0)
	idp := newFakeIdP(t, rs)
	gate, fetching := make(chan struct{}), make(chan struct{}, 4)
	idp.gate, idp.fetching = gate, fetching
	c := newClock()
	p := newProvider(t, idp, c, nil)
	raw := rs.sign(t, keycloakClaims(idp.Issuer(), c.Now()), nil)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Verify(ctx, raw)
		done <- err
	}()
	<-fetching
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Verify after cancel: %v, want context.Canceled", err)
	}
	close(gate)
	if _, err := p.Verify(context.Background(), raw); err != nil {
		t.Errorf("the next caller: %v", err)
	}
	if got := idp.jwks.Load(); got != 1 {
		t.Errorf("%d JWKS fetches, want 1: the cancelled caller's fetch served the next", got)
	}
}

func TestProviderDiscoveryIssuerMismatch(t *testing.T) {
	rs := newSigner(t, tokens.RS256, 0)
	idp := newFakeIdP(t, rs)
	idp.issuer = "https://evil.example/realms/scorehub"
	c := newClock()
	p := newProvider(t, idp, c, nil)
	_, err := p.Verify(context.Background(), rs.sign(t, keycloakClaims(idp.Issuer(), c.Now()), nil))
	if !errors.Is(err, tokens.ErrProviderUnavailable) {
		t.Fatalf("Verify: %v, want ErrProviderUnavailable", err)
	}
	if got := idp.jwks.Load(); got != 0 {
		t.Errorf("keys were fetched from a discovery document for another issuer")
	}
}

func TestNewProviderRefuses(t *testing.T) {
	ok := tokens.ProviderConfig{Issuer: "https://id.example/realms/ai-hub", Audience: []string{"scorehub"}}
	tests := []struct {
		name string
		edit func(*tokens.ProviderConfig)
	}{
		{"no issuer", func(c *tokens.ProviderConfig) { c.Issuer = "" }},
		{"relative issuer", func(c *tokens.ProviderConfig) { c.Issuer = "/realms/x" }},
		{"http issuer on the network", func(c *tokens.ProviderConfig) { c.Issuer = "http://id.example/realms/x" }},
		{"http JWKS on the network", func(c *tokens.ProviderConfig) { c.JWKSURL = "http://id.example/certs" }},
		{"no audience", func(c *tokens.ProviderConfig) { c.Audience = nil }},
		{"HS256", func(c *tokens.ProviderConfig) { c.Algorithms = []tokens.Algorithm{tokens.HS256} }},
		{"leeway over a minute", func(c *tokens.ProviderConfig) { c.Leeway = 2 * time.Minute }},
		{"negative timeout", func(c *tokens.ProviderConfig) { c.FetchTimeout = -1 }},
		{"subject claim is the groups claim", func(c *tokens.ProviderConfig) { c.Claims.Subject = "groups" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			if _, err := tokens.NewProvider(cfg); err == nil {
				t.Errorf("NewProvider accepted %+v", cfg)
			}
		})
	}
	for _, edit := range []func(*tokens.ProviderConfig){
		func(c *tokens.ProviderConfig) {},
		func(c *tokens.ProviderConfig) { c.Issuer = "http://127.0.0.1:8080/realms/x" },
		func(c *tokens.ProviderConfig) { c.Issuer = "http://keycloak:8080/realms/x"; c.InsecureAllowHTTP = true },
	} {
		cfg := ok
		edit(&cfg)
		if _, err := tokens.NewProvider(cfg); err != nil {
			t.Errorf("NewProvider refused %+v: %v", cfg, err)
		}
	}
}
