package tokens_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/tokens"
)

// TestKeyIDIsRFC7638Thumbprint checks the kid against the Ed25519 example of
// RFC 8037, appendix A.3.
func TestKeyIDIsRFC7638Thumbprint(t *testing.T) {
	d, err := base64.RawURLEncoding.DecodeString("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A")
	if err != nil {
		t.Fatal(err)
	}
	k, err := tokens.NewKey(ed25519.NewKeyFromSeed(d))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := k.ID(), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"; got != want {
		t.Errorf("kid %s, want the RFC 8037 thumbprint %s", got, want)
	}
	if k.Algorithm() != tokens.EdDSA {
		t.Errorf("algorithm %s, want EdDSA", k.Algorithm())
	}
}

func TestGenerateKey(t *testing.T) {
	for _, alg := range []tokens.Algorithm{tokens.EdDSA, tokens.ES256, tokens.RS256, tokens.HS256} {
		t.Run(string(alg), func(t *testing.T) {
			k, err := tokens.GenerateKey(alg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if k.Algorithm() != alg {
				t.Errorf("algorithm %s", k.Algorithm())
			}
			if len(k.ID()) != 43 {
				t.Errorf("kid %q is not a base64url SHA-256", k.ID())
			}
			if (k.Public() == nil) != (alg == tokens.HS256) {
				t.Errorf("Public() = %T; only HS256 keys have none", k.Public())
			}
			if alg == tokens.RS256 {
				return // a second RSA key costs seconds under the race detector
			}
			again, err := tokens.GenerateKey(alg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if again.ID() == k.ID() {
				t.Error("two generated keys have the same kid")
			}
		})
	}
	if _, err := tokens.GenerateKey("HS512", nil); err == nil {
		t.Error("GenerateKey accepted HS512")
	}
}

func TestGenerateKeyDeterministic(t *testing.T) {
	for _, alg := range []tokens.Algorithm{tokens.EdDSA, tokens.HS256} {
		a, err := tokens.GenerateKey(alg, seeded(7))
		if err != nil {
			t.Fatal(err)
		}
		b, err := tokens.GenerateKey(alg, seeded(7))
		if err != nil {
			t.Fatal(err)
		}
		if a.ID() != b.ID() {
			t.Errorf("%s: same randomness gave kids %s and %s", alg, a.ID(), b.ID())
		}
	}
}

func TestNewKeyRefuses(t *testing.T) {
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsa1024, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.NewKey(p384); err == nil {
		t.Error("NewKey accepted a P-384 key for ES256")
	}
	if _, err := tokens.NewKey(rsa1024); err == nil {
		t.Error("NewKey accepted a 1024-bit RSA key")
	}
	if _, err := tokens.NewHMACKey(make([]byte, 31)); err == nil {
		t.Error("NewHMACKey accepted a 31-byte secret")
	}
}

// TestRotation follows a key through a rotation: it keeps verifying and
// stays published for the retention, then is gone.
func TestRotation(t *testing.T) {
	f := newFixture(t, tokens.EdDSA, 0)
	oldKID := f.keys.Signing().ID()
	before := f.issue(t, alice)

	f.clock.Advance(time.Minute)
	k, err := f.keys.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if k.ID() == oldKID || f.keys.Signing().ID() != k.ID() {
		t.Fatalf("after Rotate the signing key is %s (was %s, new %s)", f.keys.Signing().ID(), oldKID, k.ID())
	}
	after := f.issue(t, alice)
	if kids := jwksKIDs(f.keys); !cmp.Equal(kids, []string{k.ID(), oldKID}) {
		t.Errorf("JWKS after rotation has %v, want new then old", kids)
	}
	want := []tokens.KeyInfo{
		{ID: k.ID(), Algorithm: tokens.EdDSA, Created: t0.Add(time.Minute)},
		{ID: oldKID, Algorithm: tokens.EdDSA, Created: t0, Retired: t0.Add(time.Minute),
			NotAfter: t0.Add(time.Minute + f.keys.Retention())},
	}
	if diff := cmp.Diff(want, f.keys.Keys()); diff != "" {
		t.Errorf("Keys() (-want +got):\n%s", diff)
	}
	for _, raw := range []string{before, after} {
		if _, err := f.verifier.Verify(context.Background(), raw); err != nil {
			t.Errorf("right after rotation: %v", err)
		}
	}

	f.clock.Advance(f.keys.Retention() + time.Second)
	if kids := jwksKIDs(f.keys); !cmp.Equal(kids, []string{k.ID()}) {
		t.Errorf("JWKS after retention has %v, want only the new key", kids)
	}
	if _, err := f.verifier.Verify(context.Background(), before); !errors.Is(err, tokens.ErrUnknownKey) {
		t.Errorf("old key's token after retention: %v, want ErrUnknownKey", err)
	}
	if n, err := f.keys.Prune(); err != nil || n != 1 {
		t.Errorf("Prune = %d, %v; want 1 key dropped", n, err)
	}
	if n, err := f.keys.Prune(); err != nil || n != 0 {
		t.Errorf("second Prune = %d, %v; want nothing to drop", n, err)
	}
	if err := f.keys.RotateTo(k); err == nil {
		t.Error("RotateTo accepted the key that is already signing")
	}
}

func jwksKIDs(s *tokens.KeySet) []string {
	var kids []string
	for _, j := range s.JWKS().Keys {
		kids = append(kids, j.KeyID)
	}
	return kids
}

func TestNewKeySetRefuses(t *testing.T) {
	if _, err := tokens.NewKeySet(tokens.KeySetConfig{Algorithm: "RS512"}); err == nil {
		t.Error("NewKeySet accepted RS512")
	}
	if _, err := tokens.NewKeySet(tokens.KeySetConfig{Retention: -time.Second}); err == nil {
		t.Error("NewKeySet accepted a negative retention")
	}
}

// TestRotateKeepsAlgorithm: without an explicit Algorithm, rotation makes
// keys of the signing key's algorithm, also for a set loaded from a file.
func TestRotateKeepsAlgorithm(t *testing.T) {
	hs, err := tokens.NewKeySet(tokens.KeySetConfig{Signing: newSigner(t, tokens.HS256, 5).key})
	if err != nil {
		t.Fatal(err)
	}
	if k, err := hs.Rotate(); err != nil || k.Algorithm() != tokens.HS256 {
		t.Errorf("HS256 set rotated to %v (%v)", k.Algorithm(), err)
	}

	path := filepath.Join(t.TempDir(), "keys.json")
	if _, err := tokens.LoadOrCreateKeySet(path, tokens.KeySetConfig{Algorithm: tokens.ES256}); err != nil {
		t.Fatal(err)
	}
	loaded, err := tokens.LoadOrCreateKeySet(path, tokens.KeySetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if k, err := loaded.Rotate(); err != nil || k.Algorithm() != tokens.ES256 {
		t.Errorf("loaded ES256 set rotated to %v (%v)", k.Algorithm(), err)
	}
}
