package tokens_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/tokens"
	"golang.org/x/crypto/bcrypt"
)

const (
	testIssuer   = "https://scorehub.example"
	testAudience = "scorehub"
)

// t0 is the tests' starting instant, a whole second as token times are.
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func newClock() *testutil.Clock { return testutil.NewClock(t0) }

// seeded is a deterministic randomness source.
func seeded(seed byte) io.Reader {
	var s [32]byte
	s[0] = seed
	return rand.NewChaCha8(s)
}

// signer is a key the test holds the private half of, so it can sign
// tokens the issuer never would.
type signer struct {
	key    *tokens.Key
	priv   any
	method jwt.SigningMethod
}

// sign signs claims with the key, naming its kid, plus extra header fields.
func (s signer) sign(t testing.TB, claims jwt.MapClaims, header map[string]any) string {
	t.Helper()
	h := map[string]any{"kid": s.key.ID()}
	for k, v := range header {
		h[k] = v
	}
	return mint(t, s.method, s.priv, h, claims)
}

// signRaw signs a header and claims given as JSON text, byte for byte, so
// a test can send JSON no encoder would write.
func (s signer) signRaw(t testing.TB, header, claims string) string {
	t.Helper()
	input := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString([]byte(claims))
	sig, err := s.method.Sign(input, s.priv)
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// rsaPrivate caches one RSA key per test binary: generating one costs more
// than most tests.
var rsaPrivate = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(crand.Reader, 2048) })

// newSigner makes a key of alg; seed picks it for the algorithms that can
// be made deterministic (all but RS256, which is shared).
func newSigner(t testing.TB, alg tokens.Algorithm, seed byte) signer {
	t.Helper()
	var (
		s   = signer{}
		err error
	)
	switch alg {
	case tokens.EdDSA:
		seedBytes := make([]byte, ed25519.SeedSize)
		io.ReadFull(seeded(seed), seedBytes)
		priv := ed25519.NewKeyFromSeed(seedBytes)
		s.priv, s.method = priv, jwt.SigningMethodEdDSA
		s.key, err = tokens.NewKey(priv)
	case tokens.ES256:
		priv, gerr := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
		if gerr != nil {
			t.Fatal(gerr)
		}
		s.priv, s.method = priv, jwt.SigningMethodES256
		s.key, err = tokens.NewKey(priv)
	case tokens.RS256:
		priv, gerr := rsaPrivate()
		if gerr != nil {
			t.Fatal(gerr)
		}
		s.priv, s.method = priv, jwt.SigningMethodRS256
		s.key, err = tokens.NewKey(priv)
	case tokens.HS256:
		secret := make([]byte, 32)
		io.ReadFull(seeded(seed), secret)
		s.priv, s.method = secret, jwt.SigningMethodHS256
		s.key, err = tokens.NewHMACKey(secret)
	default:
		t.Fatalf("newSigner: %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fixture is a key set with an issuer and a verifier on one clock.
type fixture struct {
	signer   signer
	clock    *testutil.Clock
	keys     *tokens.KeySet
	issuer   *tokens.Issuer
	verifier *tokens.Verifier
}

func newFixture(t testing.TB, alg tokens.Algorithm, leeway time.Duration) *fixture {
	t.Helper()
	c := newClock()
	sg := newSigner(t, alg, 1)
	keys, err := tokens.NewKeySet(tokens.KeySetConfig{Signing: sg.key, Algorithm: alg, Now: c.Now, Rand: seeded(100)})
	if err != nil {
		t.Fatal(err)
	}
	iss, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: testIssuer, Audience: []string{testAudience},
		Now: c.Now, Rand: seeded(2)})
	if err != nil {
		t.Fatal(err)
	}
	v, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: testIssuer, Audience: testAudience,
		Leeway: leeway, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{signer: sg, clock: c, keys: keys, issuer: iss, verifier: v}
}

func (f *fixture) issue(t testing.TB, p tokens.Principal) string {
	t.Helper()
	raw, _, err := f.issuer.Issue(p)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

var alice = tokens.Principal{Subject: "alice", Admin: true, Groups: []string{"analysts", "scoring"}}

// validClaims are claims a verifier of the fixture accepts at now.
func validClaims(now time.Time) jwt.MapClaims {
	return jwt.MapClaims{
		"sub": "alice", "admin": true, "grp": []string{"analysts"},
		"iss": testIssuer, "aud": []string{testAudience}, "jti": "id-1",
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
	}
}

// mint signs claims with method and key, with the given header fields on
// top of alg and typ.
func mint(t testing.TB, method jwt.SigningMethod, key any, header map[string]any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	for k, v := range header {
		tok.Header[k] = v
	}
	raw, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// bearerOnly is the smallest Bearer-protected route: 200 with the subject
// for a token v accepts, 401 otherwise.
func bearerOnly(v *tokens.Verifier) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			raw = ""
		}
		c, err := v.Verify(r.Context(), raw)
		if err != nil {
			httperr.Write(w, r, nil, httperr.New(problem.InvalidToken, err.Error()).WithChallenge(`Bearer realm="scorehub", error="invalid_token"`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"sub": c.Subject, "admin": c.Admin, "groups": c.Groups})
	})
}

// errorBody decodes the JSON error shape.
func errorBody(t testing.TB, body io.Reader) (typ, message string) {
	t.Helper()
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(body).Decode(&e); err != nil {
		t.Fatalf("error body is not the JSON error shape: %v", err)
	}
	return e.Error.Type, e.Error.Message
}

// hash is a cheap bcrypt hash for tests.
func hash(t testing.TB, password string) []byte {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
