package scorehub

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens"
)

// TestConfigRefusesWhatIsUnsafe: a Config that would weaken the service or
// says two things at once fails at New, with a message naming the field.
func TestConfigRefusesWhatIsUnsafe(t *testing.T) {
	const pw = "correct horse battery"
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no users in memory", Config{}, "no users"},
		{"no users in host stores", Config{Stores: &Stores{}}, "Stores needs"},
		{"two places for the state", Config{DataDir: "d", StoreURL: "postgres://h/db", AdminPassword: pw}, "set one place"},
		{"a store that is not postgres", Config{StoreURL: "mysql://h/db", AdminPassword: pw}, "postgres://"},
		{"a replica of a store of one process", Config{DataDir: "d", Replica: "east", AdminPassword: pw}, "Replica"},
		{"a replica name unfit for a record", Config{StoreURL: "postgres://h/db", Replica: "east 1"}, "Replica"},
		{"a short job lease", Config{AdminPassword: pw, JobLease: time.Second}, "JobLease"},
		{"scoring at the root", Config{AdminPassword: pw, Prefix: "/"}, "root"},
		{"scoring over the API", Config{AdminPassword: pw, Prefix: "/api/scoring"}, "/api"},
		{"a prefix with a dot segment", Config{AdminPassword: pw, Prefix: "/a/../b"}, "Prefix"},
		{"users and a password", Config{AdminPassword: pw, Users: noUsers{}}, "Users replaces"},
		{"a provider without an audience", Config{AdminPassword: pw, OIDC: OIDCConfig{Issuer: "http://127.0.0.1:1", ClientIDs: []string{"c"}}}, "Audience"},
		{"a provider without clients", Config{AdminPassword: pw, OIDC: OIDCConfig{Issuer: "http://127.0.0.1:1", Audience: []string{"a"}}}, "ClientIDs"},
		{"keys rotated faster than tokens live", Config{AdminPassword: pw, TokenValidity: time.Hour, KeyRotation: time.Minute}, "KeyRotation"},
		{"a negative body limit", Config{AdminPassword: pw, MaxBodyBytes: -1}, "MaxBodyBytes"},
		{"a negative result cell limit", Config{AdminPassword: pw, MaxResultCells: -1}, "MaxResultCells"},
		{"a negative answer byte limit", Config{AdminPassword: pw, MaxResponseBytes: -1}, "MaxResponseBytes"},
		{"metrics apart but off", Config{AdminPassword: pw, MetricsOff: true, MetricsApart: true}, "MetricsApart"},
		{"a short admin password", Config{AdminPassword: "pw"}, "Config.AdminPassword: the password has 2 characters; at least 12"},
		{"a common admin password", Config{AdminPassword: "Password1234"}, "Config.AdminPassword: the password is one of the most common"},
		{"a repetitive admin password", Config{DataDir: "d", AdminPassword: "adminadminadmin"}, "Config.AdminPassword: the password is repetitive"},
		{"a sequential admin password", Config{StoreURL: "postgres://h/db", AdminPassword: "123456789012345"}, "Config.AdminPassword: the password is a run of consecutive"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := tt.cfg.withDefaults()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("withDefaults: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestConfigDefaults: the zero values mean the documented defaults, and a
// shared store names its replica, anew at every start.
func TestConfigDefaults(t *testing.T) {
	c, kind, err := Config{AdminPassword: "correct horse battery"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if kind != inMemory || c.Prefix != DefaultPrefix || c.MaxBodyBytes != DefaultMaxBodyBytes || c.TokenValidity != DefaultTokenValidity ||
		c.KeyRotation != DefaultKeyRotation || c.Timeout != DefaultTimeout || len(c.Formats) != 4 || c.Logger == nil ||
		c.MaxResultCells != DefaultMaxResultCells || c.MaxResponseBytes != DefaultMaxResponseBytes {
		t.Errorf("defaults: %+v", c)
	}
	if c, _, err := (Config{AdminPassword: "correct horse battery", Prefix: "ml/v1/"}).withDefaults(); err != nil || c.Prefix != "/ml/v1" {
		t.Errorf("prefix ml/v1/: %q, %v; want /ml/v1", c.Prefix, err)
	}
	a, _, err := Config{StoreURL: "postgres://h/db"}.withDefaults()
	if err != nil || !registry.ValidName(a.Replica) {
		t.Fatalf("replica %q, %v", a.Replica, err)
	}
	b, _, _ := Config{StoreURL: "postgres://h/db"}.withDefaults()
	if a.Replica == b.Replica {
		t.Errorf("two starts are both replica %q: a restarted process must be a new replica", a.Replica)
	}
}

// noUsers is a host's users source that knows nobody.
type noUsers struct{}

func (noUsers) Authenticate(context.Context, string, string) (tokens.Principal, error) {
	return tokens.Principal{}, tokens.ErrBadCredentials
}
func (noUsers) CredentialVersion(context.Context, string) (string, bool, error) {
	return "", false, nil
}
func (noUsers) Principals() []tokens.Principal { return nil }
