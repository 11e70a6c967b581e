package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/scorehub/scorehub/tokens"
)

// TestKeyRotationFlag: the signing key is replaced every 30 days unless
// -key-rotation or SCOREHUB_KEY_ROTATION says otherwise, and never more
// often than tokens live.
func TestKeyRotationFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want time.Duration
		bad  bool
	}{
		{name: "default", want: 30 * 24 * time.Hour},
		{name: "environment", env: map[string]string{"SCOREHUB_KEY_ROTATION": "168h"}, want: 7 * 24 * time.Hour},
		{name: "flag wins", args: []string{"-key-rotation", "24h"}, env: map[string]string{"SCOREHUB_KEY_ROTATION": "168h"}, want: 24 * time.Hour},
		{name: "shorter than the token validity", args: []string{"-key-rotation", "1m"}, bad: true},
		{name: "zero", args: []string{"-key-rotation", "0"}, bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if tt.bad {
				if err == nil {
					t.Errorf("parseConfig(%q) = %v, want an error", tt.args, c.KeyRotation)
				}
				return
			}
			if err != nil || c.KeyRotation != tt.want {
				t.Errorf("parseConfig(%q) = %v, %v; want %v", tt.args, c.KeyRotation, err, tt.want)
			}
		})
	}
}

// TestAuthRotatesAnAgedKey: a server starting on a key file whose signing
// key is older than -key-rotation replaces it at once, and the tokens the
// old key signed keep verifying and its public key stays in the JWKS.
func TestAuthRotatesAnAgedKey(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().Add(-31 * 24 * time.Hour)
	old, err := tokens.LoadOrCreateKeySet(filepath.Join(dir, keyFile), tokens.KeySetConfig{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	now = time.Now()
	iss, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: old, Issuer: tokenIssuer, Audience: []string{tokenAudience}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err := iss.Issue(tokens.Principal{Subject: "alice"})
	if err != nil {
		t.Fatal(err)
	}

	cfg, err := parseConfig([]string{"-data", dir}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SCOREHUB_ADMIN_PASSWORD": "correct horse"}
	a, err := newAuth(cfg, nil, func(k string) string { return env[k] }, io.Discard, slog.New(slog.DiscardHandler), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	oldKID := old.Signing().ID()
	if a.keys.Signing().ID() == oldKID {
		t.Fatalf("a key %v old still signs with -key-rotation %v", 31*24*time.Hour, cfg.KeyRotation)
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

	// A restart right after does not rotate again: the new key's age is
	// in the key file.
	a.Close()
	b, err := newAuth(cfg, nil, func(k string) string { return env[k] }, io.Discard, slog.New(slog.DiscardHandler), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.keys.Signing().ID() != a.keys.Signing().ID() {
		t.Errorf("a restart replaced the key %s made a moment ago", a.keys.Signing().ID())
	}
}

// TestRotateKeysOnSchedule: while the server runs, the signing key is
// replaced once it reaches the rotation age, without a restart.
func TestRotateKeysOnSchedule(t *testing.T) {
	keys, err := tokens.NewKeySet(tokens.KeySetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	first := keys.Signing().ID()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rotateKeys(ctx, keys, 20*time.Millisecond, slog.New(slog.DiscardHandler))
	}()
	deadline := time.Now().Add(10 * time.Second)
	for keys.Signing().ID() == first && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if keys.Signing().ID() == first {
		t.Error("the signing key was not replaced after reaching the rotation age")
	}
}

// TestOIDCFlags: an OpenID Connect issuer needs the clients its access
// tokens may be issued to; the token type defaults to Keycloak's Bearer.
func TestOIDCFlags(t *testing.T) {
	base := []string{"-oidc-issuer", "https://idp.example.com/realms/hub", "-oidc-audience", "scorehub"}
	tests := []struct {
		name        string
		args        []string
		env         map[string]string
		wantClients []string
		wantTypes   []string
		bad         bool
	}{
		{name: "no clients", args: base, bad: true},
		{name: "clients by flag", args: append(base[:len(base):len(base)], "-oidc-clients", "scorehub-cli, hub-ui"),
			wantClients: []string{"scorehub-cli", "hub-ui"}, wantTypes: []string{"Bearer"}},
		{name: "clients and type by environment", args: base,
			env:         map[string]string{"SCOREHUB_OIDC_CLIENTS": "scorehub-cli", "SCOREHUB_OIDC_TOKEN_TYPE": "at+jwt"},
			wantClients: []string{"scorehub-cli"}, wantTypes: []string{"at+jwt"}},
		{name: "empty type", args: append(base[:len(base):len(base)], "-oidc-clients", "scorehub-cli", "-oidc-token-type", " "), bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if tt.bad {
				if err == nil {
					t.Errorf("parseConfig(%q) succeeded, want an error", tt.args)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.OIDCClients, tt.wantClients) || !slices.Equal(c.OIDCTokenTypes, tt.wantTypes) {
				t.Errorf("clients %q, types %q; want %q, %q", c.OIDCClients, c.OIDCTokenTypes, tt.wantClients, tt.wantTypes)
			}
		})
	}
}
