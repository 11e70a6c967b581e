package accounts_test

import (
	"crypto/ed25519"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/tokens"
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

// fixture is an Ed25519 key set and an issuer of its tokens on one clock,
// for the tests of what a Verifier over the accounts refuses.
type fixture struct {
	clock  *testutil.Clock
	keys   *tokens.KeySet
	issuer *tokens.Issuer
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	c := newClock()
	seed := make([]byte, ed25519.SeedSize)
	io.ReadFull(seeded(1), seed)
	key, err := tokens.NewKey(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := tokens.NewKeySet(tokens.KeySetConfig{Signing: key, Algorithm: tokens.EdDSA, Now: c.Now, Rand: seeded(100)})
	if err != nil {
		t.Fatal(err)
	}
	iss, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: testIssuer, Audience: []string{testAudience},
		Now: c.Now, Rand: seeded(2)})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{clock: c, keys: keys, issuer: iss}
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
