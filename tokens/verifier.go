package tokens

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MaxTokenSize is the largest token accepted, in bytes. Larger ones are
// refused before any parsing.
const MaxTokenSize = 8 << 10

// MaxLeeway is the largest clock skew a verifier may allow for.
const MaxLeeway = 60 * time.Second

// VerifierConfig configures a [Verifier].
type VerifierConfig struct {
	// Keys holds the keys tokens may be signed with. Required.
	Keys *KeySet

	// Issuer is the "iss" a token must have. Required.
	Issuer string

	// Audience is who this verifier is; a token's "aud" must name it.
	// Required.
	Audience string

	// Leeway is the clock skew allowed when checking "exp", "nbf" and "iat",
	// at most [MaxLeeway]. Zero means none.
	Leeway time.Duration

	// Algorithms are the algorithms accepted. Nil means all that scorehub
	// knows. Either way a token must use the one algorithm of the key its
	// "kid" names.
	Algorithms []Algorithm

	// MaxValidity bounds a token's lifetime, its "exp" minus its "iat": a
	// token that claims to live longer is refused with [ErrClaims], even
	// though it is signed by a known key. Zero means [MaxValidity], the
	// longest validity any [Issuer] issues; a host whose issuer issues
	// shorter tokens should set its IssuerConfig.Validity here, so that a
	// token minted with a stolen or misused key cannot outlive what the
	// issuer would ever have granted. It may not be negative nor exceed
	// [MaxValidity].
	MaxValidity time.Duration

	// Credentials, when not nil, is asked about every token of a user:
	// its credential version ("cv", set by the issuer from
	// Principal.CredentialVersion) must be the subject's current one, or
	// the token is refused with [ErrRevoked], as is a user's token without
	// one. Tokens of a provider's subjects (a subject with a colon, such as
	// "oidc:alice", which no user name has), exchanged for an OpenID
	// Connect provider's token, carry none and are not asked about.
	Credentials CredentialSource

	// CacheSize is how many verified tokens the Verifier remembers, so
	// that a client sending the same token on every request pays for its
	// signature check once: a remembered token is checked again for expiry,
	// for its key (still known, not retired before it was issued) and for
	// its credential version, but not for its signature. Remembered tokens
	// are kept as their SHA-256, never as themselves. Zero means
	// [DefaultVerifierCacheSize]; a negative value turns the memory off.
	CacheSize int

	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// DefaultVerifierCacheSize is how many verified tokens a [Verifier]
// remembers when VerifierConfig.CacheSize is zero.
const DefaultVerifierCacheSize = 10_000

// Verifier checks scorehub tokens: size, signature with a pinned algorithm,
// issuer, audience, expiry, lifetime and required claims. A Verifier is safe for
// concurrent use.
type Verifier struct {
	keys        *KeySet
	leeway      time.Duration
	maxValidity time.Duration
	algorithms  []string
	now         func() time.Time
	parser      *jwt.Parser
	credentials CredentialSource
	cache       *verifiedTokens // nil when off
}

// NewVerifier checks cfg and returns a Verifier.
func NewVerifier(cfg VerifierConfig) (*Verifier, error) {
	switch {
	case cfg.Keys == nil:
		return nil, errors.New("tokens: VerifierConfig.Keys is required")
	case cfg.Issuer == "":
		return nil, errors.New("tokens: VerifierConfig.Issuer is required")
	case cfg.Audience == "":
		return nil, errors.New("tokens: VerifierConfig.Audience is required")
	}
	leeway, err := checkLeeway(cfg.Leeway)
	if err != nil {
		return nil, err
	}
	algs, err := algorithmNames(cfg.Algorithms, allAlgorithms())
	if err != nil {
		return nil, err
	}
	maxValidity := cfg.MaxValidity
	switch {
	case maxValidity < 0 || maxValidity > MaxValidity:
		return nil, fmt.Errorf("tokens: VerifierConfig.MaxValidity %v is outside 0 to %v", maxValidity, MaxValidity)
	case maxValidity == 0:
		maxValidity = MaxValidity
	}
	v := &Verifier{keys: cfg.Keys, leeway: leeway, maxValidity: maxValidity, algorithms: algs, now: cfg.Now,
		credentials: cfg.Credentials}
	if v.now == nil {
		v.now = time.Now
	}
	switch {
	case cfg.CacheSize == 0:
		v.cache = newVerifiedTokens(DefaultVerifierCacheSize)
	case cfg.CacheSize > 0:
		v.cache = newVerifiedTokens(cfg.CacheSize)
	}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(algs),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience),
		jwt.WithLeeway(leeway),
		jwt.WithTimeFunc(v.now),
		jwt.WithStrictDecoding(),
	)
	return v, nil
}

func checkLeeway(l time.Duration) (time.Duration, error) {
	if l < 0 || l > MaxLeeway {
		return 0, fmt.Errorf("tokens: leeway %v is outside 0 to %v", l, MaxLeeway)
	}
	return l, nil
}

// algorithmNames checks algs against those allowed and returns their names;
// nil algs means every allowed one.
func algorithmNames(algs, allowed []Algorithm) ([]string, error) {
	if algs == nil {
		algs = allowed
	}
	if len(algs) == 0 {
		return nil, errors.New("tokens: no algorithm allowed")
	}
	names := make([]string, 0, len(algs))
	for _, a := range algs {
		if !slices.Contains(allowed, a) {
			return nil, fmt.Errorf("tokens: algorithm %q not supported here", string(a))
		}
		names = append(names, string(a))
	}
	return names, nil
}

// Verify checks raw and returns its claims, or an error matching one of
// [ErrMissing], [ErrTooLarge], [ErrMalformed], [ErrAlgorithm],
// [ErrUnknownKey], [ErrSignature], [ErrExpired], [ErrNotYetValid],
// [ErrIssuer], [ErrAudience], [ErrClaims] or [ErrRevoked] with
// [errors.Is], and no claims; an error of VerifierConfig.Credentials is
// returned wrapped as it is. Signature and key checks come first: a forged
// token is never told apart by its claims, and the credential source is
// asked only about tokens that passed every other check.
//
// A token verified before (VerifierConfig.CacheSize) is not checked for
// its signature again, only for its key, its expiry and its credential
// version; the claims returned are a copy of their own either way.
func (v *Verifier) Verify(ctx context.Context, raw string) (*Claims, error) {
	if v.parser == nil {
		return nil, errors.New("tokens: Verifier not made by NewVerifier")
	}
	// A remembered token passed every check of its bytes, checkRaw's
	// included, when it was first seen.
	var sum [sha256.Size]byte
	if v.cache != nil && raw != "" && len(raw) <= MaxTokenSize {
		sum = sha256.Sum256([]byte(raw))
		if e, ok := v.cache.get(sum); ok {
			if c, ok, err := v.recheck(ctx, e); ok {
				return c, err
			}
			v.cache.forget(sum)
		}
	}
	if err := checkRaw(raw); err != nil {
		return nil, err
	}
	c, kid, alg, err := v.verify(ctx, raw)
	if err != nil {
		return nil, err
	}
	if v.cache != nil {
		v.cache.put(sum, verifiedToken{claims: c, kid: kid, alg: alg})
	}
	return c.clone(), nil
}

// recheck decides on a remembered token what its signature no longer
// needs to: expiry, key and credential version. ok false means the token
// must be verified afresh (its key is no longer good for it), which then
// says why it is refused.
func (v *Verifier) recheck(ctx context.Context, e verifiedToken) (c *Claims, ok bool, err error) {
	// The key first, as in a full check.
	now := v.now()
	if _, err := v.keys.verifyingKey(e.kid, e.alg, e.claims.IssuedAt, now, v.leeway); err != nil {
		return nil, false, nil
	}
	if !now.Before(e.claims.ExpiresAt.Add(v.leeway)) {
		return nil, true, fmt.Errorf("%w: at %s", ErrExpired, e.claims.ExpiresAt.Format(time.RFC3339))
	}
	if err := v.checkCredentials(ctx, e.claims.Subject, e.claims.CredentialVersion); err != nil {
		return nil, true, err
	}
	return e.claims.clone(), true, nil
}

// checkCredentials refuses a token whose credential version is no longer
// its subject's. A token without one passes only for a provider's subject
// (which holds a colon, as no user name does): the Issuer stamps every
// user's token with the user's version, so a user's token without it was
// not issued by this service's rules, and would escape revocation.
func (v *Verifier) checkCredentials(ctx context.Context, subject, version string) error {
	if v.credentials == nil {
		return nil
	}
	if version == "" {
		if strings.Contains(subject, ":") {
			return nil
		}
		return fmt.Errorf("%w: the token of %q carries no credential version", ErrRevoked, subject)
	}
	current, known, err := v.credentials.CredentialVersion(ctx, subject)
	switch {
	case err != nil:
		return fmt.Errorf("tokens: credential version of %q: %w", subject, err)
	case !known:
		return fmt.Errorf("%w: user %q no longer exists", ErrRevoked, subject)
	case current != version:
		return fmt.Errorf("%w: the password of %q changed", ErrRevoked, subject)
	}
	return nil
}

// verify checks raw in full and returns its claims and the key ID and
// algorithm it was signed with.
func (v *Verifier) verify(ctx context.Context, raw string) (_ *Claims, kid, alg string, _ error) {
	var wc wireClaims
	tok, err := v.parser.ParseWithClaims(raw, &wc, func(t *jwt.Token) (any, error) {
		var err error
		kid, err = headerKeyID(t)
		if err != nil {
			return nil, err
		}
		alg = t.Method.Alg()
		var issued time.Time
		if wc.IssuedAt != nil {
			issued = wc.IssuedAt.Time
		}
		k, err := v.keys.verifyingKey(kid, t.Method.Alg(), issued, v.now(), v.leeway)
		if err != nil {
			return nil, err
		}
		return k.verifyingKey(), nil
	})
	if err != nil {
		return nil, "", "", classify(err, tok, v.algorithms)
	}
	switch {
	case wc.Subject == "":
		return nil, "", "", fmt.Errorf("%w: no sub", ErrClaims)
	case wc.IssuedAt == nil:
		return nil, "", "", fmt.Errorf("%w: no iat", ErrClaims)
	case wc.ID == "":
		return nil, "", "", fmt.Errorf("%w: no jti", ErrClaims)
	case wc.ExpiresAt.Sub(wc.IssuedAt.Time) > v.maxValidity:
		// No leeway: both times come from the issuer's one clock.
		return nil, "", "", fmt.Errorf("%w: valid for %v, longer than the %v allowed", ErrClaims,
			wc.ExpiresAt.Sub(wc.IssuedAt.Time), v.maxValidity)
	}
	if err := v.checkCredentials(ctx, wc.Subject, wc.CredentialVersion); err != nil {
		return nil, "", "", err
	}
	c := &Claims{
		Subject:   wc.Subject,
		Admin:     wc.Admin,
		Groups:    wc.Groups,
		Issuer:    wc.Issuer,
		Audience:  []string(wc.Audience),
		ID:        wc.ID,
		IssuedAt:  wc.IssuedAt.UTC(),
		ExpiresAt: wc.ExpiresAt.UTC(),

		CredentialVersion: wc.CredentialVersion,
	}
	if c.Groups == nil {
		c.Groups = []string{}
	}
	return c, kid, alg, nil
}

// checkRaw refuses what cannot be a compact JWS before any parsing: an
// empty token, one larger than MaxTokenSize, one with a byte other than
// base64url's alphabet and the dots between segments, or one whose header or
// claims [checkSegments] refuses. Base64 decoding skips CR and LF, so
// without the byte check a token with line breaks added to its signature
// would verify as the token itself.
func checkRaw(raw string) error {
	if raw == "" {
		return ErrMissing
	}
	if len(raw) > MaxTokenSize {
		return fmt.Errorf("%w: %d bytes, at most %d accepted", ErrTooLarge, len(raw), MaxTokenSize)
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("%w: byte %d is %q, outside base64url", ErrMalformed, i, c)
		}
	}
	return checkSegments(raw)
}

func headerKeyID(t *jwt.Token) (string, error) {
	kid, ok := t.Header["kid"].(string)
	if !ok || kid == "" {
		return "", fmt.Errorf("%w: the token names no kid", ErrUnknownKey)
	}
	return kid, nil
}

// lookupSentinels are the sentinels a key lookup may return through
// golang-jwt.
func lookupSentinels() []error {
	return []error{ErrAlgorithm, ErrUnknownKey, ErrProviderUnavailable}
}

// classify turns a golang-jwt error into one wrapping exactly one of the
// package's sentinels. When claims fail several checks, the first of issuer,
// audience, expiry, not-yet-valid, missing claim is reported.
func classify(err error, tok *jwt.Token, algorithms []string) error {
	for _, s := range lookupSentinels() {
		if errors.Is(err, s) {
			return fmt.Errorf("%w: %v", s, err)
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if !errors.Is(err, jwt.ErrTokenMalformed) && tok != nil {
		if alg, _ := tok.Header["alg"].(string); !slices.Contains(algorithms, alg) {
			return fmt.Errorf("%w: %q", ErrAlgorithm, alg)
		}
	}
	var sentinel error
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		sentinel = ErrMalformed
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		sentinel = ErrSignature
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		sentinel = ErrIssuer
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		sentinel = ErrAudience
	case errors.Is(err, jwt.ErrTokenExpired):
		sentinel = ErrExpired
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		sentinel = ErrNotYetValid
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing), errors.Is(err, jwt.ErrTokenInvalidClaims),
		errors.Is(err, jwt.ErrInvalidType):
		sentinel = ErrClaims
	default:
		sentinel = ErrMalformed
	}
	return fmt.Errorf("%w: %v", sentinel, err)
}
