package scorehub

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/scorehub/scorehub/tokens"
)

// TestAuthRotatesAnAgedKey: a service starting on a key file whose signing
// key is older than Config.KeyRotation replaces it at once, and the tokens
// the old key signed keep verifying and its public key stays in the JWKS.
func TestAuthRotatesAnAgedKey(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().Add(-31 * 24 * time.Hour)
	old, err := tokens.LoadOrCreateKeySet(filepath.Join(dir, keyFile), tokens.KeySetConfig{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	iss, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: old, Issuer: tokenIssuer, Audience: []string{tokenAudience}})
	if err != nil {
		t.Fatal(err)
	}
	// A provider's subject: its tokens carry no credential version, so
	// the token needs no user behind it to verify.
	raw, _, err := iss.Issue(tokens.Principal{Subject: "oidc:alice"})
	if err != nil {
		t.Fatal(err)
	}

	cfg, kind, err := Config{DataDir: dir, AdminPassword: "correct horse", Logger: slog.New(slog.DiscardHandler)}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	open := func() (*auth, *stores) {
		t.Helper()
		st, err := openStores(context.Background(), cfg, kind)
		if err != nil {
			t.Fatal(err)
		}
		a, err := newAuth(context.Background(), cfg, kind, st, authObservers{})
		if err != nil {
			st.Close()
			t.Fatal(err)
		}
		return a, st
	}
	a, st := open()
	oldKID := old.Signing().ID()
	if a.keys.Signing().ID() == oldKID {
		t.Fatalf("a key %v old still signs with KeyRotation %v", 31*24*time.Hour, cfg.KeyRotation)
	}
	if _, err := a.verifier.Verify(context.Background(), raw); err != nil {
		t.Errorf("a token of the replaced key: %v", err)
	}
	var kids []string
	for _, k := range a.keys.JWKS().Keys {
		kids = append(kids, k.KeyID)
	}
	if len(kids) != 2 || kids[1] != oldKID {
		t.Errorf("JWKS has %v, want the new key and %s", kids, oldKID)
	}
	newKID := a.keys.Signing().ID()

	// A restart right after does not rotate again: the new key's age is
	// in the key file.
	a.Close()
	st.Close()
	b, st := open()
	defer st.Close()
	defer b.Close()
	if b.keys.Signing().ID() != newKID {
		t.Errorf("a restart replaced the key %s made a moment ago", newKID)
	}
}

// TestRotateKeysOnSchedule: while the service runs, the signing key is
// replaced once it reaches the rotation age, without a restart.
func TestRotateKeysOnSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keys, err := tokens.NewKeySet(tokens.KeySetConfig{})
		if err != nil {
			t.Fatal(err)
		}
		first := keys.Signing().ID()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go rotateKeys(ctx, keys, time.Hour, slog.New(slog.DiscardHandler))
		time.Sleep(59 * time.Minute)
		synctest.Wait()
		if keys.Signing().ID() != first {
			t.Fatal("the signing key was replaced before reaching the rotation age")
		}
		// Checked every tenth of the period: replaced within one check.
		time.Sleep(7 * time.Minute)
		synctest.Wait()
		if keys.Signing().ID() == first {
			t.Error("the signing key was not replaced after reaching the rotation age")
		}
	})
}
