package tokens_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/testenv"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/tokens"
)

// oidcServer is the oidc-provider started by testdata/oidc/server.mjs.
type oidcServer struct {
	Issuer      string `json:"issuer"`
	ClientID    string `json:"clientId"`
	RedirectURI string `json:"redirectUri"`
	Audience    string `json:"audience"`
}

// startOIDCProvider runs the real OpenID Connect provider on 127.0.0.1 for
// the length of the test. It skips (or, where every test must run, fails)
// when Node.js or the provider's packages are missing.
func startOIDCProvider(t *testing.T) oidcServer {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.SkipOrFail(t, "node not found in PATH: install Node.js 20.19 or later to run the OpenID Connect interop test")
	}
	dir := filepath.Join("testdata", "oidc")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "oidc-provider", "package.json")); err != nil {
		testenv.SkipOrFail(t, "oidc-provider is not installed in %s: run npm ci --prefix tokens/testdata/oidc", dir)
	}

	cmd := exec.CommandContext(t.Context(), node, "server.mjs")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe() // the provider exits when this closes
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testutil.LockedBuffer{} // the provider's stderr, for the test log
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the provider: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("provider stderr:\n%s", stderr)
		}
	})

	ready := make(chan oidcServer, 1)
	failed := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadBytes('\n')
		if err != nil {
			failed <- err
			return
		}
		var s oidcServer
		if err := json.Unmarshal(line, &s); err != nil {
			failed <- err
			return
		}
		ready <- s
		io.Copy(io.Discard, stdout)
	}()
	select {
	case s := <-ready:
		return s
	case err := <-failed:
		t.Fatalf("the provider did not start: %v\n%s", err, stderr)
	case <-time.After(time.Minute):
		t.Fatalf("the provider did not start within a minute\n%s", stderr)
	}
	return oidcServer{}
}

// TestInteropOIDCProvider runs the whole offline-token story against a real,
// certified OpenID Connect provider: a user logs in through the
// authorization-code flow with PKCE and grants offline_access, the client
// keeps the offline (refresh) token, later trades it for a JWT access token,
// exchanges that at /api/rest/saml/tokenservice, and uses the scorehub token
// it gets on a Bearer-protected route.
func TestInteropOIDCProvider(t *testing.T) {
	op := startOIDCProvider(t)

	// 1. Log in as a browser would, with a cookie jar, stopping at the
	// redirect back to the client.
	verifier := rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	issuerURL, err := url.Parse(op.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host != issuerURL.Host {
				return http.ErrUseLastResponse // the redirect to the client
			}
			return nil
		}}
	auth := op.Issuer + "/auth?" + url.Values{
		"client_id":             {op.ClientID},
		"response_type":         {"code"},
		"scope":                 {"openid offline_access scorehub"},
		"redirect_uri":          {op.RedirectURI},
		"code_challenge":        {challenge},
		"code_challenge_method": {"S256"},
		"prompt":                {"consent"},
		"state":                 {"s-1"},
	}.Encode()
	interaction := func(resp *http.Response, wantPrompt string) string {
		t.Helper()
		defer resp.Body.Close()
		var got struct {
			Prompt string `json:"prompt"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || got.Prompt != wantPrompt {
			t.Fatalf("at %s: prompt %q (%v), want %q", resp.Request.URL, got.Prompt, err, wantPrompt)
		}
		return resp.Request.URL.String()
	}
	resp, err := browser.Get(auth)
	if err != nil {
		t.Fatal(err)
	}
	login := interaction(resp, "login")
	resp, err = browser.PostForm(login+"/login", url.Values{"login": {"alice"}, "password": {"alice-password"}})
	if err != nil {
		t.Fatal(err)
	}
	consent := interaction(resp, "consent")
	resp, err = browser.Post(consent+"/consent", "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(back.String(), op.RedirectURI) {
		t.Fatalf("after consent: status %d, Location %q; want a redirect to %s", resp.StatusCode, resp.Header.Get("Location"), op.RedirectURI)
	}
	if q := back.Query(); q.Get("state") != "s-1" || q.Get("iss") != op.Issuer || q.Get("code") == "" {
		t.Fatalf("authorization response %s lacks code, state or iss", back)
	}

	// 2. The client redeems the code and keeps the offline token.
	tokenRequest := func(form url.Values) map[string]any {
		t.Helper()
		form.Set("client_id", op.ClientID)
		resp, err := http.PostForm(op.Issuer+"/token", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("token endpoint: status %d, %v, %v", resp.StatusCode, body, err)
		}
		return body
	}
	first := tokenRequest(url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")},
		"redirect_uri": {op.RedirectURI}, "code_verifier": {verifier}})
	offline, _ := first["refresh_token"].(string)
	if offline == "" {
		t.Fatalf("no offline token in %v: offline_access was not granted", first)
	}

	// 3. Later: the offline token buys a JWT access token for scorehub.
	refreshed := tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {offline}})
	access, _ := refreshed["access_token"].(string)
	if strings.Count(access, ".") != 2 {
		t.Fatalf("access token %q is not a JWT", access)
	}

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
