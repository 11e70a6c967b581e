package tokens

import (
	"errors"

	"github.com/scorehub/scorehub/internal/image"
)

// Errors of verification. [Verifier.Verify] wraps one of them with detail;
// match them with [errors.Is]. None is returned together with claims.
var (
	ErrMissing     = errors.New("tokens: no token")
	ErrTooLarge    = errors.New("tokens: token too large")
	ErrMalformed   = errors.New("tokens: malformed token")
	ErrAlgorithm   = errors.New("tokens: algorithm not allowed")
	ErrUnknownKey  = errors.New("tokens: unknown signing key")
	ErrSignature   = errors.New("tokens: invalid signature")
	ErrExpired     = errors.New("tokens: token expired")
	ErrNotYetValid = errors.New("tokens: token not valid yet")
	ErrIssuer      = errors.New("tokens: wrong issuer")
	ErrAudience    = errors.New("tokens: wrong audience")
	ErrClaims      = errors.New("tokens: required claim missing or invalid")

	// ErrRevoked reports a token whose holder was removed, or whose
	// password changed, after it was issued (VerifierConfig.Credentials).
	ErrRevoked = errors.New("tokens: token revoked")

	// ErrProviderUnavailable reports that an OpenID Connect provider's
	// discovery document or keys could not be fetched, so a token it issued
	// could not be checked. Unlike the others it is not the token's fault.
	ErrProviderUnavailable = errors.New("tokens: identity provider unavailable")
)

// Errors of authentication.
var (
	// ErrBadCredentials reports an unknown user or a wrong password; the
	// two are not told apart.
	ErrBadCredentials = errors.New("tokens: bad credentials")
)

// ErrStale reports a commit to a [KeyStore] whose base is no longer the
// stored set's Seq: another writer committed in between. [KeySet] loads
// the store again and retries; it returns ErrStale only when the store
// keeps changing under it. It is the one stale error of every store
// (signing keys, accounts, and those of package registry, where it is
// registry.ErrStale).
var ErrStale = image.ErrStale
