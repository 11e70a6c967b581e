package accounts_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/scorehub/scorehub/tokens/accounts"
)

// BenchmarkAuthenticate compares a wrong password with an unknown user at
// bcrypt's default cost: the two should take the same time.
func BenchmarkAuthenticate(b *testing.B) {
	h, err := accounts.HashPassword("wonderland", 0)
	if err != nil {
		b.Fatal(err)
	}
	users, err := accounts.NewStaticUsers(accounts.User{Name: "alice", PasswordHash: h})
	if err != nil {
		b.Fatal(err)
	}
	for _, tt := range []struct{ name, user string }{{"wrong-password", "alice"}, {"unknown-user", "mallory"}} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				users.Authenticate(context.Background(), tt.user, "guess")
			}
		})
	}
}

// BenchmarkVerifyAPIToken measures what an "apitoken" credential costs each
// scoring request.
func BenchmarkVerifyAPIToken(b *testing.B) {
	f := newAccountsFixture(b, nil)
	for i := range 1000 {
		f.createUser(b, fmt.Sprintf("user%04d", i), "analysts")
	}
	_, secret := f.createToken(b, "user0500")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := f.a.VerifyAPIToken(ctx, secret); err != nil {
			b.Fatal(err)
		}
	}
}
