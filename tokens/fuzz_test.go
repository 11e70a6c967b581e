package tokens_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/tokens"
)

// verifySentinels are the errors a Verifier's refusals match, one each.
var verifySentinels = []error{
	tokens.ErrMissing, tokens.ErrTooLarge, tokens.ErrMalformed, tokens.ErrAlgorithm,
	tokens.ErrUnknownKey, tokens.ErrSignature, tokens.ErrExpired, tokens.ErrNotYetValid,
	tokens.ErrIssuer, tokens.ErrAudience, tokens.ErrClaims, tokens.ErrProviderUnavailable,
}

// FuzzVerify hands a Verifier whose key set holds a key of every algorithm
// arbitrary text, and single-byte edits (replace, delete, insert) of a
// valid token of each algorithm. It checks that Verify never panics, never
// returns claims together with an error, accepts the valid tokens untouched
// and nothing else, and that every refusal matches exactly one sentinel,
// never ErrProviderUnavailable. The valid tokens are added as seeds at run
// time, since the ES256 and RS256 keys are new on every run; crafted
// attacks and past findings are in testdata/fuzz/FuzzVerify.
func FuzzVerify(f *testing.F) {
	c := newClock()
	var signers []signer
	for i, alg := range []tokens.Algorithm{tokens.EdDSA, tokens.ES256, tokens.RS256, tokens.HS256} {
		signers = append(signers, newSigner(f, alg, byte(i+1)))
	}
	keys, err := tokens.NewKeySet(tokens.KeySetConfig{Signing: signers[0].key, Now: c.Now, Rand: seeded(100)})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range signers[1:] {
		if err := keys.RotateTo(s.key); err != nil {
			f.Fatal(err)
		}
	}
	v, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: testIssuer, Audience: testAudience, Now: c.Now})
	if err != nil {
		f.Fatal(err)
	}
	valid := make([]string, len(signers))
	for i, s := range signers {
		valid[i] = s.sign(f, validClaims(c.Now()), nil)
		if _, err := v.Verify(context.Background(), valid[i]); err != nil {
			f.Fatalf("the %s token does not verify: %v", s.key.Algorithm(), err)
		}
		f.Add(valid[i], uint8(i), uint16(0), byte(0))
		f.Add("", uint8(i), uint16(len(valid[i])-1), byte('A'))
	}

	check := func(t *testing.T, raw string) {
		t.Helper()
		claims, err := v.Verify(context.Background(), raw)
		isValid := slices.Contains(valid, raw)
		switch {
		case claims != nil && err != nil:
			t.Fatalf("claims together with the error %v", err)
		case claims == nil && err == nil:
			t.Fatalf("neither claims nor an error for %q", raw)
		case err == nil && !isValid:
			t.Fatalf("accepted %q, which is not one of the valid tokens", raw)
		case err != nil && isValid:
			t.Fatalf("refused a valid token: %v", err)
		case err == nil:
			if claims.Subject != "alice" || !claims.Admin || !slices.Equal(claims.Groups, []string{"analysts"}) {
				t.Fatalf("claims %+v", claims)
			}
			return
		}
		var matched []error
		for _, s := range verifySentinels {
			if errors.Is(err, s) {
				matched = append(matched, s)
			}
		}
		if len(matched) != 1 || matched[0] == tokens.ErrProviderUnavailable {
			t.Fatalf("refusal %q matches the sentinels %v, want exactly one verification sentinel", err, matched)
		}
		if !strings.HasPrefix(err.Error(), "tokens: ") {
			t.Fatalf("refusal %q lacks the package prefix", err)
		}
	}

	f.Fuzz(func(t *testing.T, raw string, which uint8, pos uint16, c byte) {
		check(t, raw)

		// A one-byte edit of a valid token: it verifies only if it changed
		// nothing.
		tok := valid[int(which)%len(valid)]
		p := int(pos) % len(tok)
		var edited string
		switch which / uint8(len(valid)) % 3 {
		case 0:
			edited = tok[:p] + string([]byte{c}) + tok[p+1:]
		case 1:
			edited = tok[:p] + tok[p+1:]
		default:
			edited = tok[:p] + string([]byte{c}) + tok[p:]
		}
		check(t, edited)
	})
}
