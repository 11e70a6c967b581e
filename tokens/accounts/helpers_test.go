package accounts_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/rsa"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/scorehub/scorehub/internal/testutil"
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

// fileHash is a bcrypt hash of password at the least cost an htpasswd file
// may have. Each costs tens of milliseconds, so tests make few.
func fileHash(t testing.TB, password string) []byte {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		t.Fatal(err)
	}
	return h
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
