package tokens_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// counting wraps an Authenticator and counts the checks that reach it.
type counting struct {
	tokens.Authenticator
	n atomic.Int64
}

func (c *counting) Authenticate(ctx context.Context, name, password string) (tokens.Principal, error) {
	c.n.Add(1)
	return c.Authenticator.Authenticate(ctx, name, password)
}

type serviceFixture struct {
	*fixture
	users   *counting
	handler *tokens.Service
}

func newService(t *testing.T, edit func(*tokens.ServiceConfig)) *serviceFixture {
	t.Helper()
	f := newFixture(t, tokens.EdDSA, 0)
	users, err := accounts.NewStaticUsers(
		accounts.User{Name: "alice", PasswordHash: hash(t, "wonderland"), Admin: true, Groups: []string{"analysts", "scoring"}},
		accounts.User{Name: "bob", PasswordHash: hash(t, "builder")},
	)
	if err != nil {
		t.Fatal(err)
	}
	c := &counting{Authenticator: users}
	cfg := tokens.ServiceConfig{Issuer: f.issuer, Users: c, Now: f.clock.Now}
	if edit != nil {
		edit(&cfg)
	}
	h, err := tokens.NewService(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &serviceFixture{fixture: f, users: c, handler: h}
}

func basicRequest(user, password string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, tokens.PathTokenService, nil)
	r.SetBasicAuth(user, password)
	return r
}

func (s *serviceFixture) do(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, r)
	return rec
}

func TestTokenServiceIssues(t *testing.T) {
	s := newService(t, nil)
	rec := s.do(basicRequest("alice", "wonderland"))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	for k, want := range map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store"} {
		if got := rec.Header().Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	var body map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if got, want := body["expirationDate"], "2026-03-14T15:14:26Z"; got != want {
		t.Errorf("expirationDate %q, want %q (issue time + 5 minutes, RFC 3339 UTC)", got, want)
	}
	if len(body) != 2 {
		t.Errorf("body has keys %v, want exactly idToken and expirationDate", body)
	}
	c, err := s.verifier.Verify(context.Background(), body["idToken"])
	if err != nil {
		t.Fatalf("idToken does not verify: %v", err)
	}
	want := &tokens.Claims{Subject: "alice", Admin: true, Groups: []string{"analysts", "scoring"}, Issuer: testIssuer,
		Audience: []string{testAudience}, ID: c.ID, IssuedAt: t0, ExpiresAt: t0.Add(5 * time.Minute),
		CredentialVersion: c.CredentialVersion}
	if c.CredentialVersion == "" {
		t.Error("a token issued for a password carries no credential version")
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
}

func TestTokenServiceRefuses(t *testing.T) {
	type want struct {
		Status    int
		Challenge string
		Type      string
		Message   string
	}
	const basic = `Basic realm="scorehub", charset="UTF-8"`
	badCredentials := want{http.StatusUnauthorized, basic, "unauthorized", "the user name or password is not correct"}
	tests := []struct {
		name string
		req  func() *http.Request
		want want
	}{
		{"wrong password", func() *http.Request { return basicRequest("alice", "looking-glass") }, badCredentials},
		{"unknown user", func() *http.Request { return basicRequest("mallory", "wonderland") }, badCredentials},
		{"no credentials", func() *http.Request { return httptest.NewRequest(http.MethodGet, tokens.PathTokenService, nil) },
			want{http.StatusUnauthorized, basic, "unauthorized", "HTTP Basic credentials are required"}},
		{"Bearer instead of Basic", func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, tokens.PathTokenService, nil)
			r.Header.Set("Authorization", "Bearer abc")
			return r
		}, want{http.StatusUnauthorized, basic, "unauthorized", "HTTP Basic credentials are required"}},
		{"two Authorization headers", func() *http.Request {
			r := basicRequest("alice", "wonderland")
			r.Header.Add("Authorization", "Basic Ym9iOmJ1aWxkZXI=")
			return r
		}, want{http.StatusBadRequest, "", "invalid_request", "the request has more than one Authorization header"}},
		{"POST", func() *http.Request {
			r := basicRequest("alice", "wonderland")
			r.Method = http.MethodPost
			return r
		}, want{http.StatusMethodNotAllowed, "", "method_not_allowed", "POST is not allowed here; use GET"}},
		{"unknown path", func() *http.Request { return httptest.NewRequest(http.MethodGet, "/api/rest/nothing", nil) },
			want{http.StatusNotFound, "", "not_found", "no such route"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newService(t, nil)
			rec := s.do(tt.req())
			typ, msg := errorBody(t, rec.Body)
			got := want{rec.Code, rec.Header().Get("WWW-Authenticate"), typ, msg}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

// TestTokenServiceRateLimits: attempts past a limit get 429 with
// Retry-After and never reach the password check.
func TestTokenServiceRateLimits(t *testing.T) {
	t.Run("per user name and address", func(t *testing.T) {
		s := newService(t, func(c *tokens.ServiceConfig) {
			c.UserAddressLimit = tokens.RateLimit{Every: 10 * time.Second, Burst: 2}
		})
		for range 2 {
			if rec := s.do(basicRequest("alice", "guess")); rec.Code != http.StatusUnauthorized {
				t.Fatalf("attempt within the burst: status %d", rec.Code)
			}
		}
		rec := s.do(basicRequest("ALICE", "wonderland"))
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "10" {
			t.Fatalf("third attempt: status %d, Retry-After %q; want 429 and 10", rec.Code, rec.Header().Get("Retry-After"))
		}
		if typ, _ := errorBody(t, rec.Body); typ != "rate_limited" {
			t.Errorf("error type %q", typ)
		}
		if n := s.users.n.Load(); n != 2 {
			t.Errorf("%d password checks, want 2: a limited attempt must not be checked", n)
		}
		if rec := s.do(basicRequest("bob", "builder")); rec.Code != http.StatusOK {
			t.Errorf("another user from the same address: status %d", rec.Code)
		}
		s.clock.Advance(10 * time.Second)
		if rec := s.do(basicRequest("alice", "wonderland")); rec.Code != http.StatusOK {
			t.Errorf("after Retry-After: status %d", rec.Code)
		}
	})
	t.Run("per address", func(t *testing.T) {
		s := newService(t, func(c *tokens.ServiceConfig) { c.AddressLimit = tokens.RateLimit{Every: time.Minute, Burst: 3} })
		for i, user := range []string{"u1", "u2", "u3"} {
			if rec := s.do(basicRequest(user, "pw")); rec.Code != http.StatusUnauthorized {
				t.Fatalf("attempt %d: status %d", i+1, rec.Code)
			}
		}
		rec := s.do(basicRequest("alice", "wonderland"))
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "60" {
			t.Fatalf("fourth name from one address: status %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
		}
		other := basicRequest("alice", "wonderland")
		other.RemoteAddr = "198.51.100.7:4242"
		if rec := s.do(other); rec.Code != http.StatusOK {
			t.Errorf("another address: status %d", rec.Code)
		}
		if n := s.users.n.Load(); n != 4 {
			t.Errorf("%d password checks, want 4", n)
		}
	})
	t.Run("per address behind trusted proxies", func(t *testing.T) {
		s := newService(t, func(c *tokens.ServiceConfig) {
			c.AddressLimit = tokens.RateLimit{Every: time.Minute, Burst: 1}
			c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
		})
		viaProxy := func(remote, xff string) *http.Request {
			r := basicRequest("bob", "wrong")
			r.RemoteAddr = remote
			r.Header.Set("X-Forwarded-For", xff)
			return r
		}
		steps := []struct {
			name string
			req  *http.Request
			want int
		}{
			{"first client through the proxy", viaProxy("10.0.0.2:1", "203.0.113.1"), http.StatusUnauthorized},
			{"second client through the proxy", viaProxy("10.0.0.3:1", "203.0.113.2"), http.StatusUnauthorized},
			{"first client again", viaProxy("10.0.0.3:1", "203.0.113.1"), http.StatusTooManyRequests},
			{"a spoofed entry does not help", viaProxy("10.0.0.3:1", "198.51.100.1, 203.0.113.1"), http.StatusTooManyRequests},
			{"X-Forwarded-For from an untrusted peer is ignored", viaProxy("192.0.2.9:1", "203.0.113.3"), http.StatusUnauthorized},
			{"that peer is one client", viaProxy("192.0.2.9:1", "203.0.113.4"), http.StatusTooManyRequests},
		}
		for _, st := range steps {
			if rec := s.do(st.req); rec.Code != st.want {
				t.Errorf("%s: status %d, want %d", st.name, rec.Code, st.want)
			}
		}
	})
}

// TestTokenServiceLockout replays the lockout attack: ten wrong passwords
// for a user from one address, then one more every 6 s, must not keep the
// user out from another address, while the attacking address stays
// limited. Guessing many names from one address is limited too, and right
// passwords never count against a limit of failures.
func TestTokenServiceLockout(t *testing.T) {
	from := func(addr, user, password string) *http.Request {
		r := basicRequest(user, password)
		r.RemoteAddr = addr + ":4242"
		return r
	}
	const attacker, user = "203.0.113.66", "198.51.100.7"

	t.Run("guessing one user's password", func(t *testing.T) {
		// The limit per user across addresses refilled as fast as the
		// one per user and address, which this test is about; the other
		// is TestTokenServiceSlowsGuessingFromManyAddresses's.
		s := newService(t, func(c *tokens.ServiceConfig) {
			c.UserFailureLimit = tokens.RateLimit{Every: tokens.DefaultFailureEvery}
		})
		for i := range 10 {
			if rec := s.do(from(attacker, "alice", "guess")); rec.Code != http.StatusUnauthorized {
				t.Fatalf("guess %d: status %d, want 401", i+1, rec.Code)
			}
		}
		for minute := range 3 {
			if rec := s.do(from(attacker, "ALICE", "guess")); rec.Code != http.StatusTooManyRequests {
				t.Fatalf("minute %d: the attacker's next guess: status %d, want 429", minute, rec.Code)
			}
			if rec := s.do(from(user, "alice", "wonderland")); rec.Code != http.StatusOK {
				t.Fatalf("minute %d: the user from another address: status %d, want 200", minute, rec.Code)
			}
			// One guess every 6 s, each let through as the bucket refills.
			for range 10 {
				s.clock.Advance(6 * time.Second)
				if rec := s.do(from(attacker, "alice", "guess")); rec.Code != http.StatusUnauthorized {
					t.Fatalf("minute %d: a guess after 6 s: status %d, want 401", minute, rec.Code)
				}
			}
		}
		if rec := s.do(from(attacker, "alice", "wonderland")); rec.Code != http.StatusTooManyRequests {
			t.Errorf("the right password from the attacking address: status %d, want 429", rec.Code)
		}
		if rec := s.do(from(attacker, "bob", "builder")); rec.Code != http.StatusOK {
			t.Errorf("another user from the attacking address: status %d, want 200", rec.Code)
		}
	})
	t.Run("guessing many names from one address", func(t *testing.T) {
		s := newService(t, func(c *tokens.ServiceConfig) {
			c.AddressFailureLimit = tokens.RateLimit{Every: time.Minute, Burst: 5}
		})
		for i := range 5 {
			if rec := s.do(from(attacker, "user"+strconv.Itoa(i), "guess")); rec.Code != http.StatusUnauthorized {
				t.Fatalf("name %d: status %d, want 401", i, rec.Code)
			}
		}
		rec := s.do(from(attacker, "bob", "guess"))
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "60" {
			t.Fatalf("sixth name: status %d, Retry-After %q; want 429 and 60", rec.Code, rec.Header().Get("Retry-After"))
		}
		if rec := s.do(from(user, "bob", "builder")); rec.Code != http.StatusOK {
			t.Errorf("another address: status %d, want 200", rec.Code)
		}
		if n := s.users.n.Load(); n != 6 {
			t.Errorf("%d password checks, want 6: a limited attempt must not be checked", n)
		}
	})
	t.Run("right passwords do not count", func(t *testing.T) {
		s := newService(t, nil)
		for i := range 25 {
			if rec := s.do(from(user, "alice", "wonderland")); rec.Code != http.StatusOK {
				t.Fatalf("login %d: status %d, want 200", i+1, rec.Code)
			}
		}
	})
}

// TestTokenServiceSlowsGuessingFromManyAddresses: 40 wrong passwords for
// one user, each from another address, as a botnet sends them. Past the
// limit per user the guesses are answered 429 with Retry-After, unchecked;
// the user still gets in from an address that logged in before, while a
// login from an address new to the user waits too (the price of slowing a
// botnet without locking the user out where they are known).
func TestTokenServiceSlowsGuessingFromManyAddresses(t *testing.T) {
	from := func(addr, user, password string) *http.Request {
		r := basicRequest(user, password)
		r.RemoteAddr = addr + ":4242"
		return r
	}
	const home, travel = "198.51.100.7", "192.0.2.200"
	s := newService(t, nil)
	if rec := s.do(from(home, "alice", "wonderland")); rec.Code != http.StatusOK {
		t.Fatalf("the user from home: status %d, want 200", rec.Code)
	}
	checks := s.users.n.Load()
	limited := 0
	for i := range 40 {
		rec := s.do(from("203.0.113."+strconv.Itoa(i+1), "alice", "guess"+strconv.Itoa(i)))
		switch rec.Code {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			limited++
			if ra := rec.Header().Get("Retry-After"); ra == "" || ra == "0" {
				t.Errorf("guess %d: 429 with Retry-After %q, want a wait", i+1, ra)
			}
		default:
			t.Fatalf("guess %d: status %d, want 401 or 429", i+1, rec.Code)
		}
	}
	if want := 40 - tokens.DefaultUserFailureBurst; limited != want {
		t.Errorf("%d of 40 guesses from 40 addresses answered 429, want %d", limited, want)
	}
	if n := s.users.n.Load() - checks; n != tokens.DefaultUserFailureBurst {
		t.Errorf("%d guesses checked, want %d: a limited guess must not be checked", n, tokens.DefaultUserFailureBurst)
	}
	if rec := s.do(from(home, "alice", "wonderland")); rec.Code != http.StatusOK {
		t.Errorf("the user from home during the guessing: status %d, want 200", rec.Code)
	}
	rec := s.do(from(travel, "alice", "wonderland"))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "60" {
		t.Errorf("the user from a new address during the guessing: status %d, Retry-After %q; want 429 and 60",
			rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := s.do(from(travel, "bob", "builder")); rec.Code != http.StatusOK {
		t.Errorf("another user from that address: status %d, want 200", rec.Code)
	}
	s.clock.Advance(tokens.DefaultUserFailureEvery)
	if rec := s.do(from(travel, "alice", "wonderland")); rec.Code != http.StatusOK {
		t.Errorf("the user from the new address a minute later: status %d, want 200", rec.Code)
	}
}

// gate is an Authenticator that holds every check until released, and
// records how many ran at once.
type gate struct {
	entered chan struct{}
	release chan struct{}
	mu      sync.Mutex
	now     int
	peak    int
}

func (g *gate) Authenticate(ctx context.Context, name, password string) (tokens.Principal, error) {
	g.mu.Lock()
	g.now++
	g.peak = max(g.peak, g.now)
	g.mu.Unlock()
	g.entered <- struct{}{}
	<-g.release
	g.mu.Lock()
	g.now--
	g.mu.Unlock()
	return tokens.Principal{Subject: name}, nil
}

// TestTokenServiceCapsConcurrentChecks: with MaxConcurrentChecks 2, six
// simultaneous logins are checked at most two at a time, and all succeed.
func TestTokenServiceCapsConcurrentChecks(t *testing.T) {
	const n, limit = 6, 2
	g := &gate{entered: make(chan struct{}, n), release: make(chan struct{})}
	f := newFixture(t, tokens.EdDSA, 0)
	h, err := tokens.NewService(tokens.ServiceConfig{Issuer: f.issuer, Users: g, MaxConcurrentChecks: limit, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	var arrived atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	var wg sync.WaitGroup
	codes := make(chan int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, srv.URL+tokens.PathTokenService, nil)
			req.SetBasicAuth("user"+string(rune('a'+i)), "pw")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	// Let the first checks in and every request arrive, so that the rest
	// are queued behind the cap, then release them.
	for range limit {
		<-g.entered
	}
	testutil.Eventually(t, 30*time.Second, "every request arrived", func() bool { return arrived.Load() >= n })
	time.Sleep(20 * time.Millisecond)
	close(g.release)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusOK {
			t.Errorf("status %d", c)
		}
	}
	if g.peak > limit {
		t.Errorf("%d password checks ran at once, the cap is %d", g.peak, limit)
	}
	if g.peak < limit {
		t.Errorf("only %d checks ran at once; the test did not exercise the cap", g.peak)
	}
}

func TestNewRefuses(t *testing.T) {
	f := newFixture(t, tokens.EdDSA, 0)
	users, err := accounts.NewStaticUsers(accounts.User{Name: "a", PasswordHash: hash(t, "x")})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  tokens.ServiceConfig
	}{
		{"no issuer", tokens.ServiceConfig{Users: users}},
		{"neither users nor provider", tokens.ServiceConfig{Issuer: f.issuer}},
		{"quote in realm", tokens.ServiceConfig{Issuer: f.issuer, Users: users, Realm: `a"b`}},
		{"negative rate", tokens.ServiceConfig{Issuer: f.issuer, Users: users, UserAddressLimit: tokens.RateLimit{Burst: -1}}},
		{"negative check cap", tokens.ServiceConfig{Issuer: f.issuer, Users: users, MaxConcurrentChecks: -1}},
		{"invalid trusted proxy", tokens.ServiceConfig{Issuer: f.issuer, Users: users, TrustedProxies: []netip.Prefix{{}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tokens.NewService(tt.cfg); err == nil {
				t.Error("New accepted the config")
			}
		})
	}
}

func TestHandlerRoutes(t *testing.T) {
	s := newService(t, nil)
	want := []string{"GET " + tokens.PathTokenService, "GET " + tokens.PathJWKS}
	if diff := cmp.Diff(want, s.handler.Routes()); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
	// Mounted under a prefix, as a host would.
	mux := http.NewServeMux()
	mux.Handle("/auth/", http.StripPrefix("/auth", s.handler))
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/auth"+tokens.PathJWKS, nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), s.keys.Signing().ID()) {
		t.Errorf("JWKS under a prefix: status %d, body %s", rec.Code, rec.Body)
	}
}

// hexRef is the form of a logged user_ref.
var hexRef = regexp.MustCompile(`^[0-9a-f]{16}$`)

// TestFailedLoginLog: a failed login logs a bounded line that holds neither
// the name tried nor more than its first two characters, whatever its
// size or content (a 100 KB name, a password typed as the name, a name
// that would forge a log line), and the failures of one name can still be
// followed by their user_ref.
func TestFailedLoginLog(t *testing.T) {
	tests := []struct {
		name, user string
		prefix     string // the user_prefix logged
	}{
		{"100 KB name", strings.Repeat("a", 100<<10), "aa…"},
		{"password typed as the name", "Tr0ub4dor&3", "Tr…"},
		{"unknown short name", "z", "z"},
		{"known name, wrong password", "alice", "al…"},
		{"name forging a log line", "\n{\"level\":\"ERROR\",\"msg\":\"forged\"}", "?{…"},
		{"terminal escape", "\x1b]0;owned\x07", "?]…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf strings.Builder
			s := newService(t, func(c *tokens.ServiceConfig) {
				c.Logger = slog.New(slog.NewJSONHandler(&buf, nil))
			})
			refs := map[string]bool{}
			for range 2 {
				if rec := s.do(basicRequest(tt.user, "not the password")); rec.Code != http.StatusUnauthorized {
					t.Fatalf("status %d, want 401", rec.Code)
				}
			}
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if len(lines) != 2 {
				t.Fatalf("%d log lines for 2 failures, want 2:\n%.2000s", len(lines), buf.String())
			}
			for _, line := range lines {
				if len(line) > 512 {
					t.Errorf("log line of %d bytes: %.300s…", len(line), line)
				}
				var rec struct {
					Time   string `json:"time"`
					Prefix string `json:"user_prefix"`
					Ref    string `json:"user_ref"`
				}
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("log line %q: %v", line, err)
				}
				if rec.Prefix != tt.prefix {
					t.Errorf("user_prefix %q, want %q", rec.Prefix, tt.prefix)
				}
				if !hexRef.MatchString(rec.Ref) {
					t.Errorf("user_ref %q, want 16 hex digits of a hash", rec.Ref)
				}
				refs[rec.Ref] = true
				// The ref is a hash under a random key and the time is
				// the clock's: either may hold "aaa" by chance, so they
				// are taken out before looking for the name.
				rest := strings.Replace(line, `"user_ref":"`+rec.Ref+`"`, "", 1)
				rest = strings.Replace(rest, `"time":"`+rec.Time+`"`, "", 1)
				if len(tt.user) > 2 && strings.Contains(rest, tt.user[:3]) {
					t.Errorf("log line %q holds the start of the name beyond two characters", line)
				}
			}
			if len(refs) != 1 {
				t.Errorf("two failures of one name logged refs %v, want one", refs)
			}
		})
	}
}

// TestFailedLoginRefsDiffer: different names get different user_refs.
func TestFailedLoginRefsDiffer(t *testing.T) {
	var buf strings.Builder
	s := newService(t, func(c *tokens.ServiceConfig) { c.Logger = slog.New(slog.NewJSONHandler(&buf, nil)) })
	for _, name := range []string{"alice", "alicf", "Alice"} {
		s.do(basicRequest(name, "not the password"))
	}
	refs := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		var rec struct {
			Ref string `json:"user_ref"`
		}
		json.Unmarshal([]byte(line), &rec)
		refs[rec.Ref] = true
	}
	if len(refs) != 3 {
		t.Errorf("3 names logged %d distinct refs", len(refs))
	}
}
