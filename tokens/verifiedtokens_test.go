package tokens_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scorehub/scorehub/tokens"
)

// TestRememberedTokensAreCheckedAgain: a token the Verifier remembers is
// still refused once it expires, once its holder's credentials change, and
// once its key stops verifying; a copy with another signature is not taken
// for it; and what a caller does to the claims it got does not reach the
// next caller.
func TestRememberedTokensAreCheckedAgain(t *testing.T) {
	ctx := context.Background()
	f, creds := revocationFixture(t)
	p := alice
	p.CredentialVersion = "v1"
	creds.set(p.Subject, "v1")
	raw := f.issue(t, p)

	first, err := f.verifier.Verify(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	first.Groups[0] = "tampered"
	first.Subject = "mallory"
	second, err := f.verifier.Verify(ctx, raw)
	if err != nil || second.Subject != alice.Subject || second.Groups[0] != alice.Groups[0] {
		t.Fatalf("second Verify = %+v, %v; want alice's claims as issued", second, err)
	}

	forged := raw[:len(raw)-2] + "AA"
	if forged == raw {
		forged = raw[:len(raw)-2] + "BB"
	}
	if _, err := f.verifier.Verify(ctx, forged); !errors.Is(err, tokens.ErrSignature) && !errors.Is(err, tokens.ErrMalformed) {
		t.Errorf("the remembered token with another signature: %v, want a signature error", err)
	}

	creds.set(p.Subject, "v2")
	if _, err := f.verifier.Verify(ctx, raw); !errors.Is(err, tokens.ErrRevoked) {
		t.Errorf("after the password changed: %v, want ErrRevoked", err)
	}
	creds.set(p.Subject, "v1")
	if _, err := f.verifier.Verify(ctx, raw); err != nil {
		t.Errorf("with the version back: %v", err)
	}

	f.clock.Advance(tokens.DefaultValidity)
	if _, err := f.verifier.Verify(ctx, raw); !errors.Is(err, tokens.ErrExpired) {
		t.Errorf("at its expiry: %v, want ErrExpired", err)
	}
}

// TestRememberedTokenOfARetiredKey: once its key stops verifying, a
// remembered token is refused as a fresh one would be.
func TestRememberedTokenOfARetiredKey(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, tokens.EdDSA, 0)
	raw := f.issue(t, alice)
	if _, err := f.verifier.Verify(ctx, raw); err != nil {
		t.Fatal(err)
	}
	if _, err := f.keys.Rotate(); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(f.keys.Retention() + time.Second)
	if _, err := f.verifier.Verify(ctx, raw); !errors.Is(err, tokens.ErrUnknownKey) {
		t.Errorf("after its key's retention: %v, want ErrUnknownKey", err)
	}
}

func TestVerifierCacheSize(t *testing.T) {
	f := newFixture(t, tokens.EdDSA, 0)
	for _, size := range []int{-1, 1} {
		v, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: f.keys, Issuer: testIssuer, Audience: testAudience,
			Now: f.clock.Now, CacheSize: size})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			for _, p := range []tokens.Principal{alice, {Subject: "bob"}} {
				if c, err := v.Verify(context.Background(), f.issue(t, p)); err != nil || c.Subject != p.Subject {
					t.Errorf("CacheSize %d: Verify = %+v, %v", size, c, err)
				}
			}
		}
	}
}
