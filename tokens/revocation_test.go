package tokens_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// fakeCredentials is a CredentialSource whose users a test changes.
type fakeCredentials struct {
	mu       sync.Mutex
	versions map[string]string
	err      error
}

func (f *fakeCredentials) CredentialVersion(_ context.Context, subject string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return "", false, f.err
	}
	v, ok := f.versions[subject]
	return v, ok, nil
}

func (f *fakeCredentials) set(subject, version string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if version == "" {
		delete(f.versions, subject)
		return
	}
	f.versions[subject] = version
}

// revocationFixture is a fixture whose verifier asks creds.
func revocationFixture(t *testing.T) (*fixture, *fakeCredentials) {
	t.Helper()
	f := newFixture(t, tokens.EdDSA, 0)
	creds := &fakeCredentials{versions: map[string]string{}}
	v, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: f.keys, Issuer: testIssuer, Audience: testAudience,
		Now: f.clock.Now, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	f.verifier = v
	return f, creds
}

// TestVerifyRevoked replays the attacks a credential source stops: a token
// of a removed user, and one issued before the password changed.
func TestVerifyRevoked(t *testing.T) {
	oldVersion := tokens.CredentialVersion(hash(t, "old"))
	newVersion := tokens.CredentialVersion(hash(t, "new"))
	withVersion := func(p tokens.Principal, v string) tokens.Principal {
		p.CredentialVersion = v
		return p
	}
	tests := []struct {
		name    string
		token   tokens.Principal
		current string // "" means the user is gone
		wantErr error
	}{
		{"unchanged user", withVersion(alice, oldVersion), oldVersion, nil},
		{"user removed", withVersion(alice, oldVersion), "", tokens.ErrRevoked},
		{"password changed", withVersion(alice, oldVersion), newVersion, tokens.ErrRevoked},
		{"token for the new password", withVersion(alice, newVersion), newVersion, nil},
		{"no credential version, a provider's subject", tokens.Principal{Subject: "oidc:alice"}, "", nil},
		// A user's token without "cv" would escape revocation: refused,
		// whether the user exists or never did.
		{"no credential version, user known", alice, oldVersion, tokens.ErrRevoked},
		{"no credential version, user never known", tokens.Principal{Subject: "mallory"}, "", tokens.ErrRevoked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, creds := revocationFixture(t)
			creds.set(tt.token.Subject, oldVersion)
			raw := f.issue(t, tt.token)
			creds.set(tt.token.Subject, tt.current)
			c, err := f.verifier.Verify(context.Background(), raw)
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("Verify: %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if c != nil {
					t.Errorf("claims %+v returned with an error", c)
				}
				return
			}
			if c.CredentialVersion != tt.token.CredentialVersion {
				t.Errorf("CredentialVersion %q, want %q", c.CredentialVersion, tt.token.CredentialVersion)
			}
		})
	}
}

// TestVerifyCredentialSourceFails checks that a source that cannot answer
// refuses the token without calling it revoked.
func TestVerifyCredentialSourceFails(t *testing.T) {
	f, creds := revocationFixture(t)
	boom := errors.New("store unreachable")
	creds.err = boom
	raw := f.issue(t, tokens.Principal{Subject: "alice", CredentialVersion: "v1"})
	c, err := f.verifier.Verify(context.Background(), raw)
	if !errors.Is(err, boom) || errors.Is(err, tokens.ErrRevoked) || c != nil {
		t.Fatalf("Verify: %+v, %v; want no claims and the source's error, not ErrRevoked", c, err)
	}
}

// TestStaticUsersCredentialSource replays the attacks against StaticUsers:
// a token verifies while its user is unchanged, and not once the users are
// replaced by a set without the user or with another password.
func TestStaticUsersCredentialSource(t *testing.T) {
	ctx := context.Background()
	before, err := accounts.NewStaticUsers(
		accounts.User{Name: "alice", PasswordHash: hash(t, "old")},
		accounts.User{Name: "bob", PasswordHash: hash(t, "bob")},
	)
	if err != nil {
		t.Fatal(err)
	}
	p, err := before.Authenticate(ctx, "alice", "old")
	if err != nil {
		t.Fatal(err)
	}
	if p.CredentialVersion == "" {
		t.Fatal("StaticUsers gives no credential version")
	}
	if v, ok, err := before.CredentialVersion(ctx, "alice"); v != p.CredentialVersion || !ok || err != nil {
		t.Errorf("CredentialVersion(alice) = %q, %v, %v; want %q, true, nil", v, ok, err, p.CredentialVersion)
	}
	if _, ok, err := before.CredentialVersion(ctx, "mallory"); ok || err != nil {
		t.Errorf("CredentialVersion(mallory) = %v, %v; want false, nil", ok, err)
	}
	bob := accounts.User{Name: "bob", PasswordHash: hash(t, "bob")}
	changed, err := accounts.NewStaticUsers(accounts.User{Name: "alice", PasswordHash: hash(t, "new")}, bob)
	if err != nil {
		t.Fatal(err)
	}
	removed, err := accounts.NewStaticUsers(bob)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		users   *accounts.StaticUsers
		wantErr error
	}{
		{"unchanged", before, nil},
		{"password changed", changed, tokens.ErrRevoked},
		{"user removed", removed, tokens.ErrRevoked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tokens.EdDSA, 0)
			v, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: f.keys, Issuer: testIssuer, Audience: testAudience,
				Now: f.clock.Now, Credentials: tt.users})
			if err != nil {
				t.Fatal(err)
			}
			_, err = v.Verify(ctx, f.issue(t, p))
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("Verify: %v, want %v", err, tt.wantErr)
			}
		})
	}
}
