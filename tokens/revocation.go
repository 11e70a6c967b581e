package tokens

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
)

// CredentialSource tells a [Verifier] which password each local user has
// now, so that a token issued for an older password, or for a user since
// removed, is refused with [ErrRevoked] before it expires.
// Implementations must be safe for concurrent use and should answer from
// memory: CredentialVersion runs on every verification of a token that
// carries a credential version. A source shared by several servers (a
// database, a replicated file) makes a revocation hold on all of them.
type CredentialSource interface {
	// CredentialVersion returns the current credential version of the
	// user subject (as [CredentialVersion] makes it from the user's
	// password hash) and true, or false if there is no such user. An
	// error means the source could not answer; the token is then
	// refused, but not as revoked.
	CredentialVersion(ctx context.Context, subject string) (version string, known bool, err error)
}

// credentialVersionBytes is how much of the SHA-256 of a password hash a
// credential version keeps: enough that two hashes never share one.
const credentialVersionBytes = 16

// CredentialVersion returns the credential version of a password hash: the
// first 16 bytes of its SHA-256, base64url without padding. It changes
// whenever the hash does, as it does on every password change since bcrypt
// salts each hash afresh. It can sit in a token that its holder reads:
// without the hash's random salt it is no help in guessing the password.
func CredentialVersion(passwordHash []byte) string {
	sum := sha256.Sum256(passwordHash)
	return base64.RawURLEncoding.EncodeToString(sum[:credentialVersionBytes])
}
