package tokens_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/tokens"
)

// TestIssueWire checks the token as other implementations see it: header
// and payload members, and nothing else.
func TestIssueWire(t *testing.T) {
	f := newFixture(t, tokens.EdDSA, 0)
	raw, c, err := f.issuer.Issue(alice)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d parts", raw, len(parts))
	}
	decode := func(s string) map[string]any {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	wantHeader := map[string]any{"alg": "EdDSA", "typ": "JWT", "kid": f.keys.Signing().ID()}
	if diff := cmp.Diff(wantHeader, decode(parts[0])); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	wantPayload := map[string]any{
		"sub": "alice", "admin": true, "grp": []any{"analysts", "scoring"},
		"iss": testIssuer, "aud": []any{testAudience}, "jti": c.ID,
		"iat": float64(t0.Unix()), "exp": float64(t0.Add(5 * time.Minute).Unix()),
	}
	if diff := cmp.Diff(wantPayload, decode(parts[1])); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
	if len(c.ID) < 22 {
		t.Errorf("jti %q is too short to be unique", c.ID)
	}
	_, again, _ := f.issuer.Issue(alice)
	if again.ID == c.ID {
		t.Errorf("two tokens share jti %q", c.ID)
	}
}

func TestIssueValidity(t *testing.T) {
	f := newFixture(t, tokens.EdDSA, 0)
	keys, err := tokens.NewKeySet(tokens.KeySetConfig{Retention: time.Hour, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	iss, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: testIssuer, Audience: []string{testAudience},
		Validity: 30 * time.Minute, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	_, c, err := iss.Issue(alice)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ExpiresAt.Sub(c.IssuedAt); got != 30*time.Minute {
		t.Errorf("validity %v, want 30m", got)
	}
	if got := f.issuer.Validity(); got != tokens.DefaultValidity {
		t.Errorf("default validity %v, want %v", got, tokens.DefaultValidity)
	}
}

func TestIssueRefuses(t *testing.T) {
	f := newFixture(t, tokens.EdDSA, 0)
	many := make([]string, 700)
	for i := range many {
		many[i] = fmt.Sprintf("group-%03d", i)
	}
	tests := []struct {
		name string
		p    tokens.Principal
	}{
		{"empty subject", tokens.Principal{}},
		{"control character in subject", tokens.Principal{Subject: "alice\r\nX-Admin: yes"}},
		{"subject too long", tokens.Principal{Subject: strings.Repeat("a", 257)}},
		{"empty group", tokens.Principal{Subject: "alice", Groups: []string{""}}},
		{"token over 8 KiB", tokens.Principal{Subject: "alice", Groups: many}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, c, err := f.issuer.Issue(tt.p)
			if err == nil || raw != "" || c != nil {
				t.Errorf("Issue gave a %d-byte token, claims %t, error %v; want only an error", len(raw), c != nil, err)
			}
		})
	}
}

func TestNewIssuerRefuses(t *testing.T) {
	keys, err := tokens.NewKeySet(tokens.KeySetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ok := tokens.IssuerConfig{Keys: keys, Issuer: testIssuer, Audience: []string{testAudience}}
	tests := []struct {
		name string
		edit func(*tokens.IssuerConfig)
	}{
		{"no keys", func(c *tokens.IssuerConfig) { c.Keys = nil }},
		{"no issuer", func(c *tokens.IssuerConfig) { c.Issuer = "" }},
		{"no audience", func(c *tokens.IssuerConfig) { c.Audience = nil }},
		{"empty audience", func(c *tokens.IssuerConfig) { c.Audience = []string{""} }},
		{"negative validity", func(c *tokens.IssuerConfig) { c.Validity = -time.Minute }},
		{"validity under a second", func(c *tokens.IssuerConfig) { c.Validity = time.Millisecond }},
		{"validity beyond the key retention", func(c *tokens.IssuerConfig) { c.Validity = 10 * time.Minute }},
		{"validity beyond a day", func(c *tokens.IssuerConfig) { c.Validity = 25 * time.Hour }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			if _, err := tokens.NewIssuer(cfg); err == nil {
				t.Errorf("NewIssuer accepted %+v", cfg)
			}
		})
	}
	if _, err := tokens.NewIssuer(ok); err != nil {
		t.Errorf("NewIssuer refused a good config: %v", err)
	}
}
