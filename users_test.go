package scorehub

import (
	"context"
	"errors"
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
