package accountstest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/internal/image/imagetest"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// Propagation is how soon a change committed through one handle of a
// shared store must be seen through another: the promise a store of
// several replicas makes.
const Propagation = imagetest.Propagation

// RunNotifier runs the suite of an [accounts.Notifier] that
// several writers share, such as one database under several replicas.
// open returns two handles on one new, empty store (two connection pools,
// as two replicas have) and arranges their closing at the end of the test.
// Besides what the store commits, it proves what a user sees: a user
// removed, a password or groups changed, or an API token deleted through
// one handle revokes, within [Propagation], what an [accounts.Book] over
// the other handle issued, whatever the [tokens.Verifier] and
// [accounts.PasswordCache] over it remember. It logs the delays it measured.
func RunNotifier(t *testing.T, open func(t *testing.T) (a, b accounts.Notifier)) {
	ctx := context.Background()

	imagetest.RunShared(t, accountKit(func(t *testing.T) accounts.Store { a, _ := open(t); return a }),
		func(t *testing.T) (a, b image.Notifier[accounts.State]) { return open(t) })

	t.Run("a replica not told of a commit yet does not refuse a write for it", func(t *testing.T) {
		sa, sb := open(t)
		here, there := newAccounts(t, sa), newAccounts(t, deaf{sb})
		if _, err := here.CreateUser(ctx, accounts.NewUser{Name: "alice", Password: password}); err != nil {
			t.Fatal(err)
		}
		// The client read alice at revision 1 through here; there has
		// heard nothing of her.
		groups := []string{"auditors"}
		u, err := there.UpdateUser(ctx, "alice", 1, accounts.UserUpdate{Groups: &groups})
		if err != nil {
			t.Fatalf("an update at the revision another replica showed: %v", err)
		}
		if u.Revision != 2 || !slices.Equal(u.Groups, groups) {
			t.Errorf("updated alice is %+v, want revision 2 in %v", u, groups)
		}
		if _, _, err := there.CreateAPIToken(ctx, accounts.NewAPIToken{Name: "ci", Owner: "alice"}); err != nil {
			t.Errorf("an API token for the user another replica made: %v", err)
		}
		// What is refused stays refused: a revision the store moved on
		// from.
		if _, err := there.UpdateUser(ctx, "alice", 1, accounts.UserUpdate{Groups: &groups}); !errors.Is(err, accounts.ErrRevision) {
			t.Errorf("an update at a past revision: %v, want ErrRevision", err)
		}
		if err := there.DeleteUser(ctx, "nobody", 0); !errors.Is(err, accounts.ErrNotFound) {
			t.Errorf("deleting a user nobody made: %v, want ErrNotFound", err)
		}
	})

	t.Run("a change through one replica revokes on the other", func(t *testing.T) {
		sa, sb := open(t)
		here, there := newAccounts(t, sa), newAccounts(t, sb)
		keys, err := tokens.NewKeySet(tokens.KeySetConfig{Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		issuer, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: "https://scorehub.test", Audience: []string{"scorehub"}, Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		verifier, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: "https://scorehub.test", Audience: "scorehub",
			Credentials: there, Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		passwords, err := accounts.NewPasswordCache(accounts.PasswordCacheConfig{Users: there, Credentials: there, Now: clock})
		if err != nil {
			t.Fatal(err)
		}

		// signIn creates name through here and, once there sees the user,
		// signs in there with a password, an idToken and an API token, so
		// that the password cache and the verifier remember them.
		type session struct{ name, idToken, apiToken string }
		signIn := func(t *testing.T, name string) session {
			t.Helper()
			if _, err := here.CreateUser(ctx, accounts.NewUser{Name: name, Password: password, Groups: []string{"analysts"}}); err != nil {
				t.Fatal(err)
			}
			_, secret, err := here.CreateAPIToken(ctx, accounts.NewAPIToken{Name: "ci", Owner: name})
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the other replica to see "+name+"'s API token", func() bool {
				_, _, err := there.VerifyAPIToken(ctx, secret)
				return err == nil
			})
			p, err := passwords.Authenticate(ctx, name, password)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok, err := passwords.Remembered(ctx, name, password); !ok || err != nil {
				t.Fatalf("the password cache does not remember %s: %v", name, err)
			}
			raw, _, err := issuer.Issue(p)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second answer comes from the verifier's memory
				if _, err := verifier.Verify(ctx, raw); err != nil {
					t.Fatalf("%s's idToken: %v", name, err)
				}
			}
			return session{name: name, idToken: raw, apiToken: secret}
		}
		// revoked reports whether everything s signed in with is refused
		// there.
		revoked := func(s session) bool {
			_, verr := verifier.Verify(ctx, s.idToken)
			_, remembered, _ := passwords.Remembered(ctx, s.name, password)
			_, _, aerr := there.VerifyAPIToken(ctx, s.apiToken)
			return errors.Is(verr, tokens.ErrRevoked) && !remembered && aerr != nil
		}

		newPassword, groups := "a new password of length", []string{"auditors"}
		changes := []struct {
			name, user string
			change     func(t *testing.T, s session)
		}{
			{"password changed", "alice", func(t *testing.T, s session) {
				if _, err := here.UpdateUser(ctx, s.name, 0, accounts.UserUpdate{Password: &newPassword}); err != nil {
					t.Fatal(err)
				}
			}},
			{"groups changed", "bob", func(t *testing.T, s session) {
				if _, err := here.UpdateUser(ctx, s.name, 0, accounts.UserUpdate{Groups: &groups}); err != nil {
					t.Fatal(err)
				}
			}},
			{"user deleted", "carol", func(t *testing.T, s session) {
				if err := here.DeleteUser(ctx, s.name, 0); err != nil {
					t.Fatal(err)
				}
			}},
		}
		var delays []time.Duration
		for _, c := range changes {
			t.Run(c.name, func(t *testing.T) {
				s := signIn(t, c.user)
				c.change(t, s)
				start := time.Now() // the write is acknowledged
				waitFor(t, "the other replica to revoke what it issued", func() bool { return revoked(s) })
				delays = append(delays, time.Since(start))
			})
		}
		t.Run("API token deleted", func(t *testing.T) {
			s := signIn(t, "dave")
			tok := here.APITokens()
			i := slices.IndexFunc(tok, func(x accounts.APIToken) bool { return x.Owner == s.name })
			if err := here.DeleteAPIToken(ctx, tok[i].ID); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			waitFor(t, "the other replica to refuse the deleted API token", func() bool {
				_, _, err := there.VerifyAPIToken(ctx, s.apiToken)
				return errors.Is(err, tokens.ErrBadCredentials)
			})
			delays = append(delays, time.Since(start))
			if _, err := verifier.Verify(ctx, s.idToken); err != nil {
				t.Errorf("deleting an API token revoked its owner's idToken: %v", err)
			}
		})
		if len(delays) > 0 {
			t.Logf("revocation through one replica took effect on the other after %v (max %v)", delays, slices.Max(delays))
		}
	})
}

// deaf is a handle whose subscribers are never told anything: a replica
// whose notifications have not arrived yet.
type deaf struct{ accounts.Notifier }

func (deaf) Subscribe(func(*accounts.State)) (cancel func()) { return func() {} }

// password is the password of every user the suite signs in.
const password = "correct horse battery"

// clock is the time of the suite's Book, issuer and verifier.
func clock() time.Time { return epoch }

// waitFor polls cond until it holds, failing after Propagation.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Propagation)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", Propagation, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
