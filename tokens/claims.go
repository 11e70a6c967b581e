package tokens

import "time"

// Claims are what a verified scorehub token says about its holder.
type Claims struct {
	Subject   string    // "sub": the user name
	Admin     bool      // "admin": may change the service
	Groups    []string  // "grp": the user groups the holder is in
	Issuer    string    // "iss"
	Audience  []string  // "aud"
	ID        string    // "jti"
	IssuedAt  time.Time // "iat"
	ExpiresAt time.Time // "exp"

	// CredentialVersion ("cv") names the password the holder logged in
	// with (see [CredentialVersion]); empty for a token that was not
	// issued for a password, such as one exchanged for an OpenID Connect
	// provider's token.
	CredentialVersion string
}

// InGroup reports whether the holder is in the user group name.
func (c *Claims) InGroup(name string) bool {
	for _, g := range c.Groups {
		if g == name {
			return true
		}
	}
	return false
}

// Principal is an authenticated user, before a token is issued for it.
type Principal struct {
	Subject string
	Admin   bool
	Groups  []string

	// CredentialVersion, when not empty, is put in the token as "cv", so
	// that a [Verifier] with VerifierConfig.Credentials refuses the token
	// once the subject's password, groups or admin flag change or the
	// subject is removed. The users of package tokens/accounts make it
	// with [CredentialVersion] from a user's hash, admin flag and groups,
	// or at random.
	CredentialVersion string
}
