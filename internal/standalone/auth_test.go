package standalone

import (
	"io"
	"slices"
	"testing"
	"time"
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
