package scorehub

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/tokens/accounts"
)

// TestSharedAdminBesideALookalike: a shared store that lost its admin but
// holds a user Admin, stored before names were compared, cannot be given
// the admin; the error says which user is in the way rather than that
// the store kept changing.
func TestSharedAdminBesideALookalike(t *testing.T) {
	ctx := context.Background()
	book, err := accounts.Open(ctx, accounts.Config{Store: accounts.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	defer book.Close()
	if _, err := book.CreateUser(ctx, accounts.NewUser{Name: "Admin", Password: "correct horse battery"}); err != nil {
		t.Fatal(err)
	}
	err = ensureSharedAdmin(ctx, book, "correct horse battery staple", nil)
	if !errors.Is(err, accounts.ErrExists) || !strings.Contains(err.Error(), `the existing user "Admin"`) {
		t.Errorf("ensureSharedAdmin: %v, want ErrExists naming Admin", err)
	}
	if _, ok := book.User(adminName); ok {
		t.Error("admin was stored beside Admin")
	}
}

// TestSharedStoreTellsWhereTheAdminIs: over a shared accounts store, the
// first start shows the admin's random password once; a later one shows
// no password, but how to replace it.
func TestSharedStoreTellsWhereTheAdminIs(t *testing.T) {
	ctx := context.Background()
	book, err := accounts.Open(ctx, accounts.Config{Store: accounts.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	defer book.Close()
	var console bytes.Buffer
	if err := ensureSharedAdmin(ctx, book, "", &console); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`admin password \(shown once[^)]*\): (\S+)\n`).FindStringSubmatch(console.String())
	if m == nil {
		t.Fatalf("the first start showed %q, want the admin password", console.String())
	}
	console.Reset()
	if err := ensureSharedAdmin(ctx, book, "", &console); err != nil {
		t.Fatal(err)
	}
	if shown := console.String(); strings.Contains(shown, m[1]) || !strings.Contains(shown, "to replace it") {
		t.Errorf("a later start showed %q, want how to replace the admin password, and no password", shown)
	}
}
