package tokens_test

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/tokens"
)

// TestVerifyAttacks runs the tokens an attacker would try against a
// verifier with 60 s of leeway, each against the sentinel it must produce.
func TestVerifyAttacks(t *testing.T) {
	const leeway = 60 * time.Second
	tests := []struct {
		name string
		alg  tokens.Algorithm // of the verifier's key set; zero means EdDSA
		// token builds the token to verify at the fixture's clock, which
		// the test may move.
		token func(t *testing.T, f *fixture) string
		want  error
	}{
		{
			name: "alg none",
			token: func(t *testing.T, f *fixture) string {
				return mint(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType,
					map[string]any{"kid": f.signer.key.ID()}, validClaims(f.clock.Now()))
			},
			want: tokens.ErrAlgorithm,
		},
		{
			name: "HS256 signed with the Ed25519 public key",
			token: func(t *testing.T, f *fixture) string {
				pub := f.signer.key.Public().(ed25519.PublicKey)
				return mint(t, jwt.SigningMethodHS256, []byte(pub),
					map[string]any{"kid": f.signer.key.ID()}, validClaims(f.clock.Now()))
			},
			want: tokens.ErrAlgorithm,
		},
		{
			name: "HS256 signed with the RSA public key PEM",
			alg:  tokens.RS256,
			token: func(t *testing.T, f *fixture) string {
				der, err := x509.MarshalPKIXPublicKey(f.signer.key.Public())
				if err != nil {
					t.Fatal(err)
				}
				pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
				return mint(t, jwt.SigningMethodHS256, pemKey,
					map[string]any{"kid": f.signer.key.ID()}, validClaims(f.clock.Now()))
			},
			want: tokens.ErrAlgorithm,
		},
		{
			name: "algorithm the verifier does not know",
			token: func(t *testing.T, f *fixture) string {
				return mint(t, jwt.SigningMethodHS512, []byte(strings.Repeat("k", 64)),
					map[string]any{"kid": f.signer.key.ID()}, validClaims(f.clock.Now()))
			},
			want: tokens.ErrAlgorithm,
		},
		{
			name: "unknown kid",
			token: func(t *testing.T, f *fixture) string {
				return newSigner(t, tokens.EdDSA, 99).sign(t, validClaims(f.clock.Now()), nil)
			},
			want: tokens.ErrUnknownKey,
		},
		{
			name: "known kid, signed by another key",
			token: func(t *testing.T, f *fixture) string {
				return newSigner(t, tokens.EdDSA, 99).sign(t, validClaims(f.clock.Now()), map[string]any{"kid": f.signer.key.ID()})
			},
			want: tokens.ErrSignature,
		},
		{
			name: "no kid",
			token: func(t *testing.T, f *fixture) string {
				return mint(t, f.signer.method, f.signer.priv, nil, validClaims(f.clock.Now()))
			},
			want: tokens.ErrUnknownKey,
		},
		{
			name: "tampered payload",
			token: func(t *testing.T, f *fixture) string {
				c := validClaims(f.clock.Now())
				c["admin"] = false
				parts := strings.Split(f.signer.sign(t, c, nil), ".")
				c["admin"] = true
				forged := strings.Split(mint(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, nil, c), ".")
				return parts[0] + "." + forged[1] + "." + parts[2]
			},
			want: tokens.ErrSignature,
		},
		{
			name: "expired beyond leeway",
			token: func(t *testing.T, f *fixture) string {
				c := validClaims(f.clock.Now().Add(-10 * time.Minute))
				c["exp"] = f.clock.Now().Add(-leeway - time.Second).Unix()
				return f.signer.sign(t, c, nil)
			},
			want: tokens.ErrExpired,
		},
		{
			name: "not yet valid (nbf)",
			token: func(t *testing.T, f *fixture) string {
				c := validClaims(f.clock.Now())
				c["nbf"] = f.clock.Now().Add(leeway + time.Second).Unix()
				return f.signer.sign(t, c, nil)
			},
			want: tokens.ErrNotYetValid,
		},
		{
			name: "issued in the future",
			token: func(t *testing.T, f *fixture) string {
				return f.signer.sign(t, validClaims(f.clock.Now().Add(leeway+time.Second)), nil)
			},
			want: tokens.ErrNotYetValid,
		},
		{
			name: "wrong iss",
			token: func(t *testing.T, f *fixture) string {
				c := validClaims(f.clock.Now())
				c["iss"] = "https://evil.example"
				return f.signer.sign(t, c, nil)
			},
			want: tokens.ErrIssuer,
		},
		{
			name: "wrong aud",
			token: func(t *testing.T, f *fixture) string {
				c := validClaims(f.clock.Now())
				c["aud"] = []string{"another-service"}
				return f.signer.sign(t, c, nil)
			},
			want: tokens.ErrAudience,
		},
		{
			name: "missing exp",
			token: func(t *testing.T, f *fixture) string {
				c := validClaims(f.clock.Now())
				delete(c, "exp")
				return f.signer.sign(t, c, nil)
			},
			want: tokens.ErrClaims,
		},
		{
			name: "missing sub",
			token: func(t *testing.T, f *fixture) string {
				c := validClaims(f.clock.Now())
				delete(c, "sub")
				return f.signer.sign(t, c, nil)
			},
			want: tokens.ErrClaims,
		},
		{
			name: "valid for longer than any issuer issues",
			token: func(t *testing.T, f *fixture) string {
				c := validClaims(f.clock.Now())
				c["exp"] = f.clock.Now().Add(tokens.MaxValidity + time.Second).Unix()
				return f.signer.sign(t, c, nil)
			},
			want: tokens.ErrClaims,
		},
		{
			name: "admin of the wrong type",
			token: func(t *testing.T, f *fixture) string {
				c := validClaims(f.clock.Now())
				c["admin"] = "true"
				return f.signer.sign(t, c, nil)
			},
			want: tokens.ErrMalformed,
		},
		{
			name: "9 KiB token",
			token: func(t *testing.T, f *fixture) string {
				c := validClaims(f.clock.Now())
				c["pad"] = strings.Repeat("x", 9<<10)
				return f.signer.sign(t, c, nil)
			},
			want: tokens.ErrTooLarge,
		},
		{
			name: "bad base64",
			token: func(t *testing.T, f *fixture) string {
				parts := strings.Split(f.signer.sign(t, validClaims(f.clock.Now()), nil), ".")
				return parts[0] + ".*" + parts[1][1:] + "." + parts[2]
			},
			want: tokens.ErrMalformed,
		},
		{
			// Base64 decoding skips line breaks: without a check of its own
			// the verifier would take this for the valid token.
			name: "line breaks in the signature of a valid token",
			alg:  tokens.RS256,
			token: func(t *testing.T, f *fixture) string {
				raw := f.signer.sign(t, validClaims(f.clock.Now()), nil)
				return raw[:len(raw)-20] + "\r\n" + raw[len(raw)-20:]
			},
			want: tokens.ErrMalformed,
		},
		{
			name: "padded base64",
			token: func(t *testing.T, f *fixture) string {
				parts := strings.Split(f.signer.sign(t, validClaims(f.clock.Now()), nil), ".")
				return parts[0] + "." + base64.URLEncoding.EncodeToString(mustDecode(t, parts[1])) + "." + parts[2]
			},
			want: tokens.ErrMalformed,
		},
		{
			name:  "two segments",
			token: func(t *testing.T, f *fixture) string { return "eyJhbGciOiJFZERTQSJ9.e30" },
			want:  tokens.ErrMalformed,
		},
		{
			name:  "empty",
			token: func(t *testing.T, f *fixture) string { return "" },
			want:  tokens.ErrMissing,
		},
		{
			name: "signed by a rotated-out key after its expiry",
			token: func(t *testing.T, f *fixture) string {
				raw := f.issue(t, alice)
				f.clock.Advance(time.Minute)
				if _, err := f.keys.Rotate(); err != nil {
					t.Fatal(err)
				}
				f.clock.Advance(f.keys.Retention() + leeway + time.Second)
				return raw
			},
			want: tokens.ErrUnknownKey,
		},
		{
			name: "signed by a rotated-out key after its rotation",
			token: func(t *testing.T, f *fixture) string {
				if _, err := f.keys.Rotate(); err != nil {
					t.Fatal(err)
				}
				f.clock.Advance(leeway + time.Second)
				return f.signer.sign(t, validClaims(f.clock.Now()), nil)
			},
			want: tokens.ErrUnknownKey,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alg := tt.alg
			if alg == "" {
				alg = tokens.EdDSA
			}
			f := newFixture(t, alg, leeway)
			raw := tt.token(t, f)
			c, err := f.verifier.Verify(context.Background(), raw)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify: %v, want %v", err, tt.want)
			}
			if c != nil {
				t.Errorf("Verify returned claims %+v with an error", c)
			}
			for _, other := range sentinels {
				if other != tt.want && errors.Is(err, other) {
					t.Errorf("error %v also matches %v", err, other)
				}
			}
		})
	}
}

var sentinels = []error{tokens.ErrMissing, tokens.ErrTooLarge, tokens.ErrMalformed, tokens.ErrAlgorithm,
	tokens.ErrUnknownKey, tokens.ErrSignature, tokens.ErrExpired, tokens.ErrNotYetValid, tokens.ErrIssuer,
	tokens.ErrAudience, tokens.ErrClaims, tokens.ErrProviderUnavailable}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVerifyAccepts covers the tokens a verifier must take, including the
// edges of leeway and a key that a rotation retired.
func TestVerifyAccepts(t *testing.T) {
	const leeway = 30 * time.Second
	tests := []struct {
		name  string
		token func(t *testing.T, f *fixture) string
	}{
		{"fresh token", func(t *testing.T, f *fixture) string { return f.issue(t, alice) }},
		{"expired within leeway", func(t *testing.T, f *fixture) string {
			raw := f.issue(t, alice)
			f.clock.Advance(f.issuer.Validity() + leeway - time.Second)
			return raw
		}},
		{"from a clock ahead within leeway", func(t *testing.T, f *fixture) string {
			return f.signer.sign(t, validClaims(f.clock.Now().Add(leeway)), nil)
		}},
		{"signed by a rotated-out key before its expiry", func(t *testing.T, f *fixture) string {
			raw := f.issue(t, alice)
			f.clock.Advance(time.Minute)
			if _, err := f.keys.Rotate(); err != nil {
				t.Fatal(err)
			}
			f.clock.Advance(3 * time.Minute)
			return raw
		}},
	}
	for _, alg := range []tokens.Algorithm{tokens.EdDSA, tokens.ES256, tokens.RS256, tokens.HS256} {
		for _, tt := range tests {
			t.Run(string(alg)+"/"+tt.name, func(t *testing.T) {
				f := newFixture(t, alg, leeway)
				raw := tt.token(t, f)
				c, err := f.verifier.Verify(context.Background(), raw)
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if c.Subject != "alice" || !c.Admin || !c.InGroup("analysts") {
					t.Errorf("claims %+v lost the principal", c)
				}
			})
		}
	}
}

// TestVerifyRoundTrip checks that Verify returns exactly the claims Issue
// says it signed.
func TestVerifyRoundTrip(t *testing.T) {
	for _, alg := range []tokens.Algorithm{tokens.EdDSA, tokens.ES256, tokens.RS256, tokens.HS256} {
		t.Run(string(alg), func(t *testing.T) {
			f := newFixture(t, alg, 0)
			for _, p := range []tokens.Principal{alice, {Subject: "bob"}} {
				raw, issued, err := f.issuer.Issue(p)
				if err != nil {
					t.Fatal(err)
				}
				got, err := f.verifier.Verify(context.Background(), raw)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(issued, got); diff != "" {
					t.Errorf("verified claims differ from issued (-issued +verified):\n%s", diff)
				}
			}
		})
	}
}

// TestExpiryOverHTTP: a token accepted at 4:59 is refused with 401 at 5:01.
func TestExpiryOverHTTP(t *testing.T) {
	f := newFixture(t, tokens.EdDSA, 0)
	srv := httptest.NewServer(bearerOnly(f.verifier))
	defer srv.Close()
	raw := f.issue(t, alice)
	for _, tt := range []struct {
		at   time.Duration
		want int
	}{
		{4*time.Minute + 59*time.Second, http.StatusOK},
		{5*time.Minute + 1*time.Second, http.StatusUnauthorized},
	} {
		f.clock.Advance(tt.at - f.clock.Now().Sub(t0))
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Authorization", "Bearer "+raw)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("at %v after issue: status %d, want %d", tt.at, resp.StatusCode, tt.want)
		}
	}
}

func TestNewVerifierRefuses(t *testing.T) {
	keys, err := tokens.NewKeySet(tokens.KeySetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ok := tokens.VerifierConfig{Keys: keys, Issuer: testIssuer, Audience: testAudience}
	tests := []struct {
		name string
		edit func(*tokens.VerifierConfig)
	}{
		{"no keys", func(c *tokens.VerifierConfig) { c.Keys = nil }},
		{"no issuer", func(c *tokens.VerifierConfig) { c.Issuer = "" }},
		{"no audience", func(c *tokens.VerifierConfig) { c.Audience = "" }},
		{"leeway over a minute", func(c *tokens.VerifierConfig) { c.Leeway = 61 * time.Second }},
		{"negative leeway", func(c *tokens.VerifierConfig) { c.Leeway = -time.Second }},
		{"empty algorithm list", func(c *tokens.VerifierConfig) { c.Algorithms = []tokens.Algorithm{} }},
		{"unknown algorithm", func(c *tokens.VerifierConfig) { c.Algorithms = []tokens.Algorithm{"none"} }},
		{"negative max validity", func(c *tokens.VerifierConfig) { c.MaxValidity = -time.Second }},
		{"max validity over a day", func(c *tokens.VerifierConfig) { c.MaxValidity = tokens.MaxValidity + time.Second }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			if v, err := tokens.NewVerifier(cfg); err == nil {
				t.Fatalf("NewVerifier accepted %+v: %v", cfg, v)
			}
		})
	}
	if _, err := tokens.NewVerifier(ok); err != nil {
		t.Fatalf("NewVerifier refused a good config: %v", err)
	}
}

// TestVerifyStrictJSON: tokens validly signed by the verifier's own key
// whose header or claims a lenient JSON reader takes one way and a strict
// one another (a member twice, once in other case), or that name an
// extension in crit, are refused as malformed. The first case proves that
// the same construction makes a token the verifier accepts.
func TestVerifyStrictJSON(t *testing.T) {
	const (
		header = `{"alg":"EdDSA","typ":"JWT","kid":"KID"}`
		rest   = `"iss":"https://scorehub.example","aud":["scorehub"],"jti":"id-1","iat":IAT,"exp":EXP}`
		claims = `{"sub":"alice",` + rest
	)
	tests := []struct {
		name, header, claims string
		want                 error
	}{
		{"well formed", header, claims, nil},
		{"sub twice", header, `{"sub":"alice","sub":"admin",` + rest, tokens.ErrMalformed},
		{"sub and SUB", header, `{"sub":"alice","SUB":"admin",` + rest, tokens.ErrMalformed},
		{"sub twice, once escaped", header, `{"sub":"alice","s\u0075b":"admin",` + rest, tokens.ErrMalformed},
		{"admin twice", header, `{"admin":false,"admin":true,"sub":"alice",` + rest, tokens.ErrMalformed},
		{"a member twice in a nested object", header, `{"x":{"a":1,"a":2},"sub":"alice",` + rest, tokens.ErrMalformed},
		{"kid twice", `{"alg":"EdDSA","kid":"other","kid":"KID"}`, claims, tokens.ErrMalformed},
		{"alg twice", `{"alg":"none","alg":"EdDSA","kid":"KID"}`, claims, tokens.ErrMalformed},
		{"crit naming a claim", `{"alg":"EdDSA","kid":"KID","crit":["exp"],"exp":1}`, claims, tokens.ErrMalformed},
		{"crit naming an unknown extension", `{"alg":"EdDSA","kid":"KID","crit":["x-scope"],"x-scope":"all"}`, claims, tokens.ErrMalformed},
		{"crit empty", `{"alg":"EdDSA","kid":"KID","crit":[]}`, claims, tokens.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tokens.EdDSA, 0)
			now := f.clock.Now()
			r := strings.NewReplacer("KID", f.signer.key.ID(), "IAT", strconv.FormatInt(now.Unix(), 10),
				"EXP", strconv.FormatInt(now.Add(5*time.Minute).Unix(), 10))
			raw := f.signer.signRaw(t, r.Replace(tt.header), r.Replace(tt.claims))
			c, err := f.verifier.Verify(context.Background(), raw)
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Fatalf("Verify: %v, want %v", err, tt.want)
			}
			if err == nil && c.Subject != "alice" {
				t.Errorf("subject %q, want alice", c.Subject)
			}
		})
	}
}

// TestVerifyBoundsValidity: a validly signed token whose exp - iat exceeds
// the verifier's MaxValidity is refused however little of it is left, and
// one within it is accepted.
func TestVerifyBoundsValidity(t *testing.T) {
	tests := []struct {
		name     string
		bound    time.Duration // VerifierConfig.MaxValidity
		lifetime time.Duration // exp - iat of the token
		want     error
	}{
		{"default bound, a day", 0, tokens.MaxValidity, nil},
		{"default bound, a day and a second", 0, tokens.MaxValidity + time.Second, tokens.ErrClaims},
		{"a year", 0, 365 * 24 * time.Hour, tokens.ErrClaims},
		{"bound of 5 minutes, 5 minutes", 5 * time.Minute, 5 * time.Minute, nil},
		{"bound of 5 minutes, 5 minutes and a second", 5 * time.Minute, 5*time.Minute + time.Second, tokens.ErrClaims},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tokens.EdDSA, 0)
			v, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: f.keys, Issuer: testIssuer, Audience: testAudience,
				MaxValidity: tt.bound, Now: f.clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			c := validClaims(f.clock.Now())
			c["exp"] = f.clock.Now().Add(tt.lifetime).Unix()
			raw := f.signer.sign(t, c, nil)
			// Near the end of its life the token is still refused: the
			// bound is on what it claims, not on what is left.
			f.clock.Advance(tt.lifetime - time.Minute)
			if _, err := v.Verify(context.Background(), raw); !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Fatalf("Verify: %v, want %v", err, tt.want)
			}
		})
	}
}

// TestVerifierAlgorithmsPinned: a verifier limited to EdDSA refuses an
// RS256 key set's tokens even though the key is known.
func TestVerifierAlgorithmsPinned(t *testing.T) {
	f := newFixture(t, tokens.RS256, 0)
	v, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: f.keys, Issuer: testIssuer, Audience: testAudience,
		Algorithms: []tokens.Algorithm{tokens.EdDSA}, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), f.issue(t, alice)); !errors.Is(err, tokens.ErrAlgorithm) {
		t.Fatalf("Verify: %v, want ErrAlgorithm", err)
	}
}

// TestVerifyConcurrent verifies while keys rotate, for the race detector.
func TestVerifyConcurrent(t *testing.T) {
	f := newFixture(t, tokens.EdDSA, 0)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				raw, _, err := f.issuer.Issue(alice)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := f.verifier.Verify(context.Background(), raw); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 5 {
		if _, err := f.keys.Rotate(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}
