package oidctest

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testenv"
	"github.com/scorehub/scorehub/internal/testutil"
)

// Provider is a running provider, as its server.mjs announced it. Its
// fields are read-only and its methods safe for concurrent use.
type Provider struct {
	// Issuer is the provider's issuer URL, http://127.0.0.1:PORT.
	Issuer string `json:"issuer"`
	// ClientID is the public client the users log in to.
	ClientID string `json:"clientId"`
	// RedirectURI is where the login sends the browser back with the code.
	RedirectURI string `json:"redirectUri"`
	// Audience is the audience of the access tokens it issues.
	Audience string `json:"audience"`
}

// timeout bounds every request to the provider.
const timeout = 30 * time.Second

// Start runs `node server.mjs` in dir (the tokens/testdata/oidc directory)
// and returns the provider once it serves. The provider stops when the test
// ends. Start skips or fails the test through testenv.SkipOrFail when
// Node.js or the provider's packages are missing, and fails it when the
// provider does not start within a minute.
func Start(t testing.TB, dir string) *Provider {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.SkipOrFail(t, "node not found in PATH: install Node.js 20.19 or later to run the OpenID Connect interop tests")
	}
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

	ready := make(chan *Provider, 1)
	failed := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadBytes('\n')
		if err != nil {
			failed <- err
			return
		}
		p := &Provider{}
		if err := json.Unmarshal(line, p); err != nil {
			failed <- err
			return
		}
		ready <- p
		io.Copy(io.Discard, stdout)
	}()
	select {
	case p := <-ready:
		return p
	case err := <-failed:
		t.Fatalf("the provider did not start: %v\n%s", err, stderr)
	case <-time.After(time.Minute):
		t.Fatalf("the provider did not start within a minute\n%s", stderr)
	}
	return nil
}

// OfflineToken logs user in with password as a browser would, through the
// authorization-code flow with PKCE, consents to offline_access, redeems the
// code as the client, and returns the offline (refresh) token. It fails the
// test at any step that does not go as the protocol says: a wrong prompt, a
// redirect elsewhere than RedirectURI, an authorization response without
// code, state or iss, or no offline token.
func (p *Provider) OfflineToken(t testing.TB, user, password string) string {
	t.Helper()
	verifier := rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	issuerURL, err := url.Parse(p.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, Timeout: timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host != issuerURL.Host {
				return http.ErrUseLastResponse // the redirect to the client
			}
			return nil
		}}
	state := "s-" + rand.Text()
	auth := p.Issuer + "/auth?" + url.Values{
		"client_id":             {p.ClientID},
		"response_type":         {"code"},
		"scope":                 {"openid offline_access scorehub"},
		"redirect_uri":          {p.RedirectURI},
		"code_challenge":        {challenge},
		"code_challenge_method": {"S256"},
		"prompt":                {"consent"},
		"state":                 {state},
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
	resp, err = browser.PostForm(login+"/login", url.Values{"login": {user}, "password": {password}})
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
	if err != nil || !strings.HasPrefix(back.String(), p.RedirectURI) {
		t.Fatalf("after consent: status %d, Location %q; want a redirect to %s", resp.StatusCode, resp.Header.Get("Location"), p.RedirectURI)
	}
	if q := back.Query(); q.Get("state") != state || q.Get("iss") != p.Issuer || q.Get("code") == "" {
		t.Fatalf("authorization response %s lacks code, state or iss", back)
	}

	first := p.token(t, url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")},
		"redirect_uri": {p.RedirectURI}, "code_verifier": {verifier}})
	offline, _ := first["refresh_token"].(string)
	if offline == "" {
		t.Fatalf("no offline token in %v: offline_access was not granted", first)
	}
	return offline
}

// AccessToken trades an offline token for a JWT access token through the
// refresh_token grant, as the AI Hub Python client does before each call,
// and returns it. It fails the test when the provider refuses or the token
// is not a JWT.
func (p *Provider) AccessToken(t testing.TB, offline string) string {
	t.Helper()
	refreshed := p.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {offline}})
	access, _ := refreshed["access_token"].(string)
	if strings.Count(access, ".") != 2 {
		t.Fatalf("access token %q is not a JWT", access)
	}
	return access
}

// token posts form, as the client, to the token endpoint and returns the
// answer, failing the test on anything but 200 and a JSON object.
func (p *Provider) token(t testing.TB, form url.Values) map[string]any {
	t.Helper()
	form.Set("client_id", p.ClientID)
	client := &http.Client{Timeout: timeout}
	resp, err := client.PostForm(p.Issuer+"/token", form)
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
