package tokens_test

import (
	"context"
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
