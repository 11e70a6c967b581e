package accounts_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/internal/image/imagetest"
	"github.com/scorehub/scorehub/tokens/accounts"
	"github.com/scorehub/scorehub/tokens/accounts/accountstest"
)

// TestNotifierConformance runs the suite of a shared store on one
// state in memory that two handles share, each telling its subscribers
// what any handle commits, as a database store does for the replicas on
// it.
func TestNotifierConformance(t *testing.T) {
	accountstest.RunNotifier(t, func(t *testing.T) (a, b accounts.Notifier) {
		s := imagetest.NewShared(&accounts.State{}, image.MemConfig[accounts.State]{
			Seq: func(st *accounts.State) uint64 { return st.Seq }, Closed: accounts.ErrClosed})
		return s.Handle(), s.Handle()
	})
}

// TestUpdateUserIf: a condition of the caller's is checked on the user as
// the write finds it, before every rule of the write, and again on the
// stored state when this replica had not been told of the user yet.
func TestUpdateUserIf(t *testing.T) {
	ctx := context.Background()
	s := imagetest.NewShared(&accounts.State{}, image.MemConfig[accounts.State]{
		Seq: func(st *accounts.State) uint64 { return st.Seq }, Closed: accounts.ErrClosed})
	hereStore, thereStore := s.Handle(), s.Handle()
	hereStore.Quiet(true) // there is told nothing of here's writes
	files := newReadOnlyUsers(t, accounts.User{Name: "root", PasswordHash: hash(t, "root password!"), Admin: true})
	open := func(st accounts.Store) *accounts.Book {
		a, err := accounts.OpenCheap(ctx, accounts.Config{Store: st, ReadOnly: files, BcryptCost: bcrypt.MinCost})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a
	}
	here, there := open(hereStore), open(thereStore)
	if _, err := here.CreateUser(ctx, accounts.NewUser{Name: "alice", Password: goodPassword}); err != nil {
		t.Fatal(err)
	}
	if _, err := here.UpdateUser(ctx, "alice", 1, accounts.UserUpdate{Groups: &[]string{"analysts"}}); err != nil {
		t.Fatal(err)
	}
	errNotTwo := errors.New("not at revision 2")
	atTwo := func(seen *[]uint64) func(accounts.Account) error {
		return func(cur accounts.Account) error {
			*seen = append(*seen, cur.Revision)
			if cur.Revision != 2 {
				return errNotTwo
			}
			return nil
		}
	}

	var seen []uint64
	groups := []string{"auditors"}
	got, err := there.UpdateUserIf(ctx, "alice", atTwo(&seen), accounts.UserUpdate{Groups: &groups})
	if err != nil || got.Revision != 3 || !slices.Equal(got.Groups, groups) {
		t.Fatalf("an update under a condition the stored user meets: %+v, %v; want revision 3 in %v", got, err, groups)
	}
	if !slices.Contains(seen, 2) {
		t.Errorf("the condition saw revisions %v, never the stored 2", seen)
	}

	seen = nil
	if _, err := there.UpdateUserIf(ctx, "alice", atTwo(&seen), accounts.UserUpdate{Groups: &groups}); !errors.Is(err, errNotTwo) {
		t.Errorf("an update under a condition the user no longer meets: %v, want the condition's error", err)
	}
	if err := there.DeleteUserIf(ctx, "alice", atTwo(&seen)); !errors.Is(err, errNotTwo) {
		t.Errorf("a removal under a condition the user no longer meets: %v, want the condition's error", err)
	}
	// The condition comes before the other rules: it sees a user of the
	// users file too, which no write may change.
	seen = nil
	if err := there.DeleteUserIf(ctx, "root", atTwo(&seen)); !errors.Is(err, errNotTwo) || !slices.Equal(seen, []uint64{0}) {
		t.Errorf("a removal of a user of the file under a condition: %v after seeing %v, want the condition's error after 0", err, seen)
	}
	if err := there.DeleteUserIf(ctx, "root", func(accounts.Account) error { return nil }); !errors.Is(err, accounts.ErrReadOnly) {
		t.Errorf("a removal of a user of the file: %v, want ErrReadOnly", err)
	}
	if err := there.DeleteUserIf(ctx, "nobody", func(accounts.Account) error { return nil }); !errors.Is(err, accounts.ErrNotFound) {
		t.Errorf("a removal of nobody: %v, want ErrNotFound", err)
	}
	if err := there.DeleteUserIf(ctx, "alice", func(cur accounts.Account) error { return nil }); err != nil {
		t.Errorf("a removal under a condition met: %v", err)
	}
}
