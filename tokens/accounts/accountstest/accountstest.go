// Package accountstest holds the conformance suites of [accounts.Store]
// and [accounts.Notifier]: the contract [accounts.Book] relies on, which
// every account store, the ones of package accounts and any other (a
// database store in a package of its own), must keep. Each is the suite
// every store of a state image passes (package internal/image/imagetest),
// given the accounts, and what a Book makes of a store besides. A store's
// test calls [RunStore]:
//
//	func TestAccountStoreConformance(t *testing.T) {
//		accountstest.RunStore(t, open)
//	}
//
// The rules of a write are not the store's and are not checked here; the
// tests of package accounts check them over every store it has. The
// suites of the signing keys' stores are in package tokens/tokenstest.
package accountstest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/internal/image/imagetest"
	"github.com/scorehub/scorehub/tokens/accounts"
)

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)

// RunStore runs the suite on stores open makes. open returns a new,
// empty store and arranges its closing at the end of the test (t.Cleanup).
func RunStore(t *testing.T, open func(t *testing.T) accounts.Store) {
	ctx := context.Background()
	imagetest.Run(t, accountKit(open))

	t.Run("a change of every kind loads back", func(t *testing.T) {
		// One change a commit, as the Book makes them, so that a store
		// that keeps rows and writes only the change holds the same.
		s := open(t)
		alice, bob := user(t, "alice", "analysts"), user(t, "bob")
		aliceToken, bobToken := apiToken("alice", 1), apiToken("bob", 2)
		aliceToken.ExpiresAt = epoch.Add(time.Hour)
		bobToken.WebAPIGroups = []string{"risk", "fraud"}
		steps := []struct {
			change accounts.Change
			state  *accounts.State
		}{
			{accounts.Change{User: &alice}, state(1, alice)},
			{accounts.Change{User: &bob}, state(2, alice, bob)},
			{accounts.Change{APIToken: &aliceToken}, withTokens(state(3, alice, bob), aliceToken)},
			{accounts.Change{APIToken: &bobToken}, withTokens(state(4, alice, bob), aliceToken, bobToken)},
			// Removing a user removes the user's API tokens.
			{accounts.Change{User: &alice, Delete: true, Revision: 1}, withTokens(state(5, bob), bobToken)},
			{accounts.Change{APIToken: &bobToken, Delete: true}, state(6, bob)},
		}
		for _, step := range steps {
			step.state.Change = &step.change
			commit(t, s, step.state)
			if got := load(t, s); dump(got) != dump(step.state) {
				t.Fatalf("after commit %d the store holds\n%s\nwant\n%s", step.state.Seq, dump(got), dump(step.state))
			}
		}
	})

	t.Run("last-used times commit", func(t *testing.T) {
		s := open(t)
		st := state(1, user(t, "alice"))
		st.APITokens = []accounts.StoredAPIToken{apiToken("alice", 1)}
		st.Change = &accounts.Change{APIToken: &st.APITokens[0]}
		commit(t, s, st)
		used := epoch.Add(90 * time.Second)
		next := state(2, st.Users...)
		next.APITokens = []accounts.StoredAPIToken{st.APITokens[0]}
		next.APITokens[0].LastUsedAt = used
		next.Change = &accounts.Change{LastUsed: map[string]time.Time{next.APITokens[0].ID: used}}
		commit(t, s, next)
		if got := load(t, s).APITokens[0].LastUsedAt; !got.Equal(used) {
			t.Errorf("last used at %v, want %v", got, used)
		}
	})

	t.Run("accounts sharing a store lose no write", func(t *testing.T) {
		s := open(t)
		a1, a2 := newAccounts(t, s), newAccounts(t, s)
		if _, err := a1.CreateUser(ctx, accounts.NewUser{Name: "alice", Password: "correct horse battery"}); err != nil {
			t.Fatal(err)
		}
		// a2 decided on seq 0; its commit is refused, it reloads and
		// decides again.
		if _, err := a2.CreateUser(ctx, accounts.NewUser{Name: "bob", Password: "correct horse battery"}); err != nil {
			t.Fatal(err)
		}
		st := load(t, s)
		if st.Seq != 2 || len(st.Users) != 2 || st.Users[0].Name != "alice" || st.Users[1].Name != "bob" {
			t.Fatalf("store holds %s, want alice and bob at seq 2", dump(st))
		}
		if _, ok := a2.User("alice"); !ok {
			t.Error("the second writer does not show the first writer's user after its own write")
		}
	})

	t.Run("what Accounts commits works after a new start", func(t *testing.T) {
		s := open(t)
		a := newAccounts(t, s)
		if _, err := a.CreateUser(ctx, accounts.NewUser{Name: "alice", Password: "correct horse battery", Groups: []string{"analysts"}}); err != nil {
			t.Fatal(err)
		}
		tok, secret, err := a.CreateAPIToken(ctx, accounts.NewAPIToken{Name: "ci", Owner: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		st := load(t, s)
		if len(st.Users) != 1 || len(st.APITokens) != 1 {
			t.Fatalf("store holds %s, want one user and one token", dump(st))
		}
		if string(st.Users[0].PasswordHash) == "correct horse battery" || st.APITokens[0].Hash == secret {
			t.Error("the store holds a password or a token secret in the clear")
		}
		a.Close()
		b := newAccounts(t, s)
		if _, err := b.Authenticate(ctx, "alice", "correct horse battery"); err != nil {
			t.Errorf("the stored user's password no longer works: %v", err)
		}
		p, _, err := b.VerifyAPIToken(ctx, secret)
		if err != nil || p.Subject != "alice" {
			t.Errorf("the stored API token %s verifies as %q, %v; want alice", tok.ID, p.Subject, err)
		}
	})
}

// newAccounts returns a Book over s at the lowest bcrypt cost allowed,
// closed at the end of the test.
func newAccounts(t *testing.T, s accounts.Store) *accounts.Book {
	t.Helper()
	a, err := accounts.Open(context.Background(), accounts.Config{Store: s, BcryptCost: bcrypt.DefaultCost,
		Now: func() time.Time { return epoch }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func load(t *testing.T, s accounts.Store) *accounts.State {
	t.Helper()
	st, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// commit commits next on the state before it.
func commit(t *testing.T, s accounts.Store, next *accounts.State) {
	t.Helper()
	if err := s.Commit(context.Background(), next.Seq-1, next); err != nil {
		t.Fatal(err)
	}
}

// accountKit is the accounts' part of the suite of every state image, on
// the stores open returns.
func accountKit(open func(t *testing.T) accounts.Store) imagetest.Kit[accounts.State] {
	return imagetest.Kit[accounts.State]{
		Open: func(t *testing.T) image.Store[accounts.State] { return open(t) },
		New:  func() *accounts.State { return &accounts.State{} },
		Seq:  func(st *accounts.State) uint64 { return st.Seq },
		Next: func(t *testing.T, base *accounts.State, i int) *accounts.State {
			u := user(t, fmt.Sprintf("user%02d", i))
			next := &accounts.State{Seq: base.Seq + 1, Users: append(slices.Clone(base.Users), u), APITokens: base.APITokens,
				Change: &accounts.Change{User: &u}}
			slices.SortFunc(next.Users, func(x, y accounts.StoredUser) int { return strings.Compare(x.Name, y.Name) })
			return next
		},
		Dump: func(st *accounts.State) string {
			c := *st
			c.Seq = 0
			return dump(&c)
		},
		Closed: accounts.ErrClosed,
	}
}

// withTokens returns st holding the API tokens toks, sorted by ID.
func withTokens(st *accounts.State, toks ...accounts.StoredAPIToken) *accounts.State {
	st.APITokens = toks
	return st
}

func state(seq uint64, users ...accounts.StoredUser) *accounts.State {
	return &accounts.State{Seq: seq, Users: users}
}

// hash is one bcrypt hash for every user of the suite, made once: the
// store keeps it as it is and never checks a password.
var hash = sync.OnceValue(func() []byte {
	h, err := bcrypt.GenerateFromPassword([]byte("correct horse battery"), bcrypt.MinCost)
	if err != nil {
		panic(err)
	}
	return h
})

func user(t *testing.T, name string, groups ...string) accounts.StoredUser {
	t.Helper()
	return accounts.StoredUser{Name: name, PasswordHash: hash(), Groups: groups, CredentialVersion: "cv-" + name,
		Revision: 1, CreatedAt: epoch, UpdatedAt: epoch}
}

// apiToken returns a token of owner with ID and hash made from n.
func apiToken(owner string, n int) accounts.StoredAPIToken {
	return accounts.StoredAPIToken{
		APIToken:          accounts.APIToken{ID: fmt.Sprintf("tok%013d", n), Name: "token " + owner, Owner: owner, CreatedAt: epoch},
		Hash:              fmt.Sprintf("%064x", n),
		CredentialVersion: "cv-" + owner,
	}
}

// dump is the state as JSON, an empty list and none alike, for comparing
// and showing; the change that made it is not what it holds.
func dump(st *accounts.State) string {
	c := *st
	c.Change = nil
	c.Users = append([]accounts.StoredUser(nil), st.Users...)
	for i := range c.Users {
		if len(c.Users[i].Groups) == 0 {
			c.Users[i].Groups = nil
		}
	}
	c.APITokens = append([]accounts.StoredAPIToken(nil), st.APITokens...)
	for i := range c.APITokens {
		if len(c.APITokens[i].WebAPIGroups) == 0 {
			c.APITokens[i].WebAPIGroups = nil
		}
	}
	if len(c.Users) == 0 {
		c.Users = nil
	}
	if len(c.APITokens) == 0 {
		c.APITokens = nil
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}
