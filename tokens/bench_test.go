package tokens_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/scorehub/scorehub/tokens"
)

var benchAlgorithms = []tokens.Algorithm{tokens.EdDSA, tokens.ES256, tokens.RS256, tokens.HS256}

func BenchmarkIssue(b *testing.B) {
	for _, alg := range benchAlgorithms {
		b.Run(string(alg), func(b *testing.B) {
			f := newFixture(b, alg, 0)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := f.issuer.Issue(alice); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerify is one token verified again and again: with every
// signature checked (cold), and as a client sending the same token on every
// request has it, remembered (the default).
func BenchmarkVerify(b *testing.B) {
	for _, alg := range benchAlgorithms {
		for _, mode := range []struct {
			name string
			size int
		}{{"cold", -1}, {"remembered", 0}} {
			b.Run(string(alg)+"/"+mode.name, func(b *testing.B) {
				f := newFixture(b, alg, 0)
				v, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: f.keys, Issuer: testIssuer, Audience: testAudience,
					Now: f.clock.Now, CacheSize: mode.size})
				if err != nil {
					b.Fatal(err)
				}
				raw := f.issue(b, alice)
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := v.Verify(ctx, raw); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkVerifyParallel is Verify under concurrent load, as the
// management API sees it.
func BenchmarkVerifyParallel(b *testing.B) {
	f := newFixture(b, tokens.EdDSA, 0)
	raw := f.issue(b, alice)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := f.verifier.Verify(ctx, raw); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAuthenticate compares a wrong password with an unknown user at
// bcrypt's default cost: the two should take the same time.
func BenchmarkAuthenticate(b *testing.B) {
	h, err := tokens.HashPassword("wonderland", 0)
	if err != nil {
		b.Fatal(err)
	}
	users, err := tokens.NewStaticUsers(tokens.User{Name: "alice", PasswordHash: h})
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
