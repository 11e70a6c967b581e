package accounts_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

var apiTokenPattern = regexp.MustCompile(`^scorehub_[0-9A-Za-z]{49}$`)

func TestCreateAPIToken(t *testing.T) {
	f := newAccountsFixture(t, nil)
	ctx := context.Background()
	f.createUser(t, "alice")
	expires := t0.Add(24 * time.Hour)
	tok, secret, err := f.a.CreateAPIToken(ctx, accounts.NewAPIToken{Name: "nightly batch", Owner: "alice", ExpiresAt: expires,
		WebAPIGroups: []string{"risk"}})
	if err != nil {
		t.Fatal(err)
	}
	if !apiTokenPattern.MatchString(secret) {
		t.Errorf("secret %q is not the prefix and 49 base62 characters", secret)
	}
	if !regexp.MustCompile(`^[a-z2-7]{16}$`).MatchString(tok.ID) {
		t.Errorf("ID %q is not 16 characters of lower-case base32", tok.ID)
	}
	want := accounts.APIToken{ID: tok.ID, Name: "nightly batch", Owner: "alice", WebAPIGroups: []string{"risk"}, CreatedAt: t0, ExpiresAt: expires}
	if diff := cmp.Diff(want, tok); diff != "" {
		t.Errorf("CreateAPIToken returned (-want +got):\n%s", diff)
	}
	if got, ok := f.a.APIToken(tok.ID); !ok || !cmp.Equal(got, want) {
		t.Errorf("APIToken(%q) = %+v, %v; want %+v", tok.ID, got, ok, want)
	}
	if _, ok := f.a.APIToken("aaaaaaaaaaaaaaaa"); ok {
		t.Error("APIToken of an unknown ID reports one")
	}
	// A token of a user of the users file works too.
	rootTok, rootSecret := f.createToken(t, "root")
	p, groups, err := f.a.VerifyAPIToken(ctx, rootSecret)
	if err != nil || p.Subject != "root" || !p.Admin || groups != nil {
		t.Errorf("root's token %s verifies as %+v, %v, %v", rootTok.ID, p, groups, err)
	}
	if secret == rootSecret || tok.ID == rootTok.ID {
		t.Error("two tokens share a secret or an ID")
	}
}

func TestCreateAPITokenRefuses(t *testing.T) {
	f := newAccountsFixture(t, func(c *accounts.Config) { c.MaxAPITokensPerUser = 2 })
	ctx := context.Background()
	f.createUser(t, "alice")
	f.createUser(t, "full")
	f.createToken(t, "full")
	f.createToken(t, "full")
	for _, tc := range []struct {
		name    string
		token   accounts.NewAPIToken
		err     error
		status  int
		typ     string
		pointer string
		phrase  string
	}{
		{"no name", accounts.NewAPIToken{Owner: "alice"}, accounts.ErrInvalid, 400, "validation_failed", "/name", "needs a name"},
		{"name too long", accounts.NewAPIToken{Name: strings.Repeat("é", 129), Owner: "alice"}, accounts.ErrInvalid, 400, "validation_failed", "/name", "128 characters"},
		{"name with a control character", accounts.NewAPIToken{Name: "a\tb", Owner: "alice"}, accounts.ErrInvalid, 400, "validation_failed", "/name", "control character"},
		{"expiry now", accounts.NewAPIToken{Name: "ci", Owner: "alice", ExpiresAt: t0}, accounts.ErrInvalid, 400, "validation_failed", "/expiresAt", "not in the future"},
		{"expiry past", accounts.NewAPIToken{Name: "ci", Owner: "alice", ExpiresAt: t0.Add(-time.Hour)}, accounts.ErrInvalid, 400, "validation_failed", "/expiresAt", "not in the future"},
		{"bad web API group", accounts.NewAPIToken{Name: "ci", Owner: "alice", WebAPIGroups: []string{"risk", ""}}, accounts.ErrInvalid, 400, "validation_failed", "/webApiGroups/1", "empty group"},
		{"unknown owner", accounts.NewAPIToken{Name: "ci", Owner: "bob"}, accounts.ErrNotFound, 422, "invalid_reference", "/owner", `user "bob" does not exist`},
		{"owner at the limit", accounts.NewAPIToken{Name: "ci", Owner: "full"}, accounts.ErrTooManyAPITokens, 409, "conflict", "", `user "full" has 2 API tokens`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := f.a.CreateAPIToken(ctx, tc.token)
			wantRefusal(t, err, tc.err, tc.status, tc.typ, tc.pointer, tc.phrase, "")
		})
	}
	if n := len(f.a.APITokens()); n != 2 {
		t.Errorf("after refused creates there are %d tokens, want 2", n)
	}
}

func TestAPITokensAreSorted(t *testing.T) {
	f := newAccountsFixture(t, nil)
	f.createUser(t, "bob")
	f.createUser(t, "alice")
	for _, owner := range []string{"bob", "alice", "bob", "alice"} {
		f.createToken(t, owner)
		f.clock.Advance(time.Second)
	}
	all := f.a.APITokens()
	var got []string
	for _, tok := range all {
		got = append(got, tok.Owner+"@"+tok.CreatedAt.Format("05"))
	}
	want := []string{"alice@27", "alice@29", "bob@26", "bob@28"}
	if !cmp.Equal(got, want) {
		t.Errorf("APITokens in order %v, want %v", got, want)
	}
}

func TestVerifyAPIToken(t *testing.T) {
	f := newAccountsFixture(t, nil)
	ctx := context.Background()
	if _, err := f.a.CreateUser(ctx, accounts.NewUser{Name: "alice", Password: goodPassword, Admin: true, Groups: []string{"analysts"}}); err != nil {
		t.Fatal(err)
	}
	tok, secret, err := f.a.CreateAPIToken(ctx, accounts.NewAPIToken{Name: "ci", Owner: "alice", WebAPIGroups: []string{"risk", "fraud"},
		ExpiresAt: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	cv, _, _ := f.a.CredentialVersion(ctx, "alice")
	p, groups, err := f.a.VerifyAPIToken(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tokens.Principal{Subject: "alice", Admin: true, Groups: []string{"analysts"}, CredentialVersion: cv}, p); diff != "" {
		t.Errorf("principal (-want +got):\n%s", diff)
	}
	if !cmp.Equal(groups, []string{"risk", "fraud"}) {
		t.Errorf("web API groups %v, want [risk fraud]", groups)
	}

	body := secret[len(accounts.APITokenPrefix):]
	typo := []byte(secret)
	typo[20] ^= 'a' ^ 'b' // any change of a character breaks the check
	if typo[20] == secret[20] {
		typo[20] = 'c'
	}
	for name, bad := range map[string]string{
		"empty":                      "",
		"other prefix":               "ghp_" + body,
		"no prefix":                  body,
		"typo":                       string(typo),
		"truncated":                  secret[:len(secret)-1],
		"longer":                     secret + "0",
		"upper-case":                 strings.ToUpper(secret),
		"well formed but not issued": wellFormedToken(t, f),
		"with white space":           " " + secret,
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := f.a.VerifyAPIToken(ctx, bad)
			if !errors.Is(err, tokens.ErrBadCredentials) {
				t.Errorf("VerifyAPIToken: %v, want ErrBadCredentials", err)
			}
			if bad != "" && strings.Contains(err.Error(), bad) {
				t.Errorf("error %q repeats the token", err)
			}
		})
	}

	f.clock.Advance(time.Hour)
	if _, _, err := f.a.VerifyAPIToken(ctx, secret); !errors.Is(err, tokens.ErrExpired) || strings.Contains(err.Error(), secret) {
		t.Errorf("token %s at its expiry: %v, want ErrExpired without the secret", tok.ID, err)
	}
}

// wellFormedToken returns a token with a right check that f never issued:
// one issued by another Book.
func wellFormedToken(t *testing.T, f *accountsFixture) string {
	t.Helper()
	other := newAccountsFixture(t, nil)
	_, secret := other.createToken(t, "root")
	return secret
}

func TestAPITokensRevokedWithTheirOwner(t *testing.T) {
	ctx := context.Background()
	password, admin, groups := "another long password", true, []string{"others"}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, f *accountsFixture)
		want   error
	}{
		{"password changed", func(t *testing.T, f *accountsFixture) {
			f.a.UpdateUser(ctx, "alice", 0, accounts.UserUpdate{Password: &password})
		}, tokens.ErrRevoked},
		{"admin flag changed", func(t *testing.T, f *accountsFixture) {
			f.a.UpdateUser(ctx, "alice", 0, accounts.UserUpdate{Admin: &admin})
		}, tokens.ErrRevoked},
		{"groups changed", func(t *testing.T, f *accountsFixture) {
			f.a.UpdateUser(ctx, "alice", 0, accounts.UserUpdate{Groups: &groups})
		}, tokens.ErrRevoked},
		{"owner deleted with the token", func(t *testing.T, f *accountsFixture) {
			if err := f.a.DeleteUser(ctx, "alice", 0); err != nil {
				t.Fatal(err)
			}
			if n := len(f.a.APITokens()); n != 1 {
				t.Errorf("after the owner's delete %d tokens are left, want root's 1", n)
			}
		}, tokens.ErrBadCredentials},
		{"token deleted", func(t *testing.T, f *accountsFixture) {
			for _, tok := range f.a.APITokens() {
				if tok.Owner == "alice" {
					if err := f.a.DeleteAPIToken(ctx, tok.ID); err != nil {
						t.Fatal(err)
					}
				}
			}
		}, tokens.ErrBadCredentials},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newAccountsFixture(t, nil)
			f.createUser(t, "alice")
			_, secret := f.createToken(t, "alice")
			_, rootSecret := f.createToken(t, "root")
			if _, _, err := f.a.VerifyAPIToken(ctx, secret); err != nil {
				t.Fatal(err)
			}
			tc.change(t, f)
			if _, _, err := f.a.VerifyAPIToken(ctx, secret); !errors.Is(err, tc.want) {
				t.Errorf("VerifyAPIToken after the change: %v, want %v", err, tc.want)
			}
			if _, _, err := f.a.VerifyAPIToken(ctx, rootSecret); err != nil {
				t.Errorf("another user's token stopped working: %v", err)
			}
		})
	}

	t.Run("user of the users file removed or changed", func(t *testing.T) {
		f := newAccountsFixture(t, nil)
		_, secret := f.createToken(t, "root")
		f.files.set(t, accounts.User{Name: "root", PasswordHash: hash(t, "new root password"), Admin: true})
		if _, _, err := f.a.VerifyAPIToken(ctx, secret); !errors.Is(err, tokens.ErrRevoked) {
			t.Errorf("token of a file user whose password changed: %v, want ErrRevoked", err)
		}
		_, secret = f.createToken(t, "root")
		f.files.set(t, accounts.User{Name: "other", PasswordHash: hash(t, "other password")})
		if _, _, err := f.a.VerifyAPIToken(ctx, secret); !errors.Is(err, tokens.ErrRevoked) {
			t.Errorf("token of a file user removed from the file: %v, want ErrRevoked", err)
		}
	})
}

func TestDeleteAPITokenUnknown(t *testing.T) {
	f := newAccountsFixture(t, nil)
	err := f.a.DeleteAPIToken(context.Background(), "aaaaaaaaaaaaaaaa")
	wantRefusal(t, err, accounts.ErrNotFound, 404, "not_found", "", `API token "aaaaaaaaaaaaaaaa" does not exist`, "")
}

func TestAPITokenLastUsed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 10 * time.Millisecond
		f := newAccountsFixture(t, func(c *accounts.Config) { c.LastUsedInterval = interval })
		ctx := context.Background()
		f.createUser(t, "alice")
		tok, secret := f.createToken(t, "alice")
		f.clock.Advance(time.Minute)
		if _, _, err := f.a.VerifyAPIToken(ctx, secret); err != nil {
			t.Fatal(err)
		}
		used := t0.Add(time.Minute)
		if got, _ := f.a.APIToken(tok.ID); !got.LastUsedAt.Equal(used) {
			t.Errorf("LastUsedAt %v right after a use, want %v", got.LastUsedAt, used)
		}
		// The background writer makes it durable within an interval,
		// without any other write.
		time.Sleep(interval)
		synctest.Wait()
		if got := storedLastUsed(t, f.store, tok.ID); got != used {
			t.Fatalf("the last use was not committed within %v; the store holds %v", interval, got)
		}

		// A failing write is logged and never fails verification; Close
		// writes what is pending.
		f.store.fail.Store(true)
		f.clock.Advance(time.Minute)
		if _, _, err := f.a.VerifyAPIToken(ctx, secret); err != nil {
			t.Errorf("verification failed while the store does: %v", err)
		}
		time.Sleep(interval)
		synctest.Wait()
		if !strings.Contains(f.log.String(), errDiskFull.Error()) {
			t.Fatalf("the failing last-use write was not logged within %v; log:\n%s", interval, f.log.String())
		}
		if strings.Contains(f.log.String(), secret) {
			t.Error("the log holds a token secret")
		}
		f.store.fail.Store(false)
		if err := f.a.Close(); err != nil {
			t.Fatal(err)
		}
		if got, want := storedLastUsed(t, f.store, tok.ID), t0.Add(2*time.Minute); got != want {
			t.Errorf("after Close the store holds last use %v, want %v", got, want)
		}
	})
}

func storedLastUsed(t *testing.T, s accounts.Store, id string) time.Time {
	t.Helper()
	st, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range st.APITokens {
		if tok.ID == id {
			return tok.LastUsedAt
		}
	}
	t.Fatalf("token %s is not stored", id)
	return time.Time{}
}

func TestFailedCommitChangesNothing(t *testing.T) {
	f := newAccountsFixture(t, nil)
	ctx := context.Background()
	f.createUser(t, "alice")
	tok, secret := f.createToken(t, "alice")
	f.store.fail.Store(true)
	password := "another long password"
	for name, write := range map[string]func() error{
		"create user": func() error {
			_, err := f.a.CreateUser(ctx, accounts.NewUser{Name: "bob", Password: goodPassword})
			return err
		},
		"update user": func() error {
			_, err := f.a.UpdateUser(ctx, "alice", 0, accounts.UserUpdate{Password: &password})
			return err
		},
		"delete user": func() error { return f.a.DeleteUser(ctx, "alice", 0) },
		"create token": func() error {
			_, _, err := f.a.CreateAPIToken(ctx, accounts.NewAPIToken{Name: "x", Owner: "alice"})
			return err
		},
		"delete token": func() error { return f.a.DeleteAPIToken(ctx, tok.ID) },
	} {
		if err := write(); !errors.Is(err, errDiskFull) {
			t.Errorf("%s while the store fails: %v, want its error", name, err)
		}
	}
	if names := accountNames(f.a.Users()); !cmp.Equal(names, []string{"alice", "root"}) {
		t.Errorf("users %v, want [alice root]", names)
	}
	if _, err := f.a.Authenticate(ctx, "alice", goodPassword); err != nil {
		t.Errorf("alice's password stopped working: %v", err)
	}
	if _, _, err := f.a.VerifyAPIToken(ctx, secret); err != nil {
		t.Errorf("alice's token stopped working: %v", err)
	}
	if n := len(f.a.APITokens()); n != 1 {
		t.Errorf("%d tokens, want 1", n)
	}
}

func TestClosedAccountsRefuseWrites(t *testing.T) {
	f := newAccountsFixture(t, nil)
	f.createUser(t, "alice")
	f.a.Close()
	_, err := f.a.CreateUser(context.Background(), accounts.NewUser{Name: "bob", Password: goodPassword})
	wantRefusal(t, err, accounts.ErrClosed, 503, "unavailable", "", "shutting down", "")
	if _, err := f.a.Authenticate(context.Background(), "alice", goodPassword); err != nil {
		t.Errorf("reads stopped after Close: %v", err)
	}
}

func TestAccountsConcurrentUse(t *testing.T) {
	f := newAccountsFixture(t, nil)
	ctx := context.Background()
	f.createUser(t, "alice")
	_, secret := f.createToken(t, "alice")
	const writers = 16
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := f.a.VerifyAPIToken(ctx, secret); err != nil {
					t.Errorf("VerifyAPIToken during writes: %v", err)
					return
				}
				f.a.Users()
				f.a.APITokens()
			}
		}()
	}
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("user%02d", i)
			if _, err := f.a.CreateUser(ctx, accounts.NewUser{Name: name, Password: goodPassword}); err != nil {
				t.Error(err)
				return
			}
			if _, _, err := f.a.CreateAPIToken(ctx, accounts.NewAPIToken{Name: "t", Owner: name}); err != nil {
				t.Error(err)
			}
			// Everyone creates the same name; exactly one wins.
			_, err := f.a.CreateUser(ctx, accounts.NewUser{Name: "shared", Password: goodPassword})
			if err != nil && !errors.Is(err, accounts.ErrExists) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	if n := len(f.a.Users()); n != writers+3 {
		t.Errorf("%d users, want %d", n, writers+3)
	}
	if n := len(f.a.APITokens()); n != writers+1 {
		t.Errorf("%d API tokens, want %d", n, writers+1)
	}
	st, err := f.store.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(2 + 2*writers + 1); st.Seq != want {
		t.Errorf("store at seq %d, want %d: one commit per write", st.Seq, want)
	}
}
