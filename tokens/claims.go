package tokens

import "time"

// Claims are what a verified scorehub token says about its holder, or
// what another credential checked by the service says (an API token adds
// its restriction, WebAPIGroups).
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

	// WebAPIGroups, when not empty, are the only web API groups the
	// credential may use: an API token's restriction (see [Claims.MayUse]).
	// A restricted credential never acts as an administrator: whoever
	// makes the claims of one sets Admin to false ([Claims.Restrict] does).
	// A scorehub token never carries a restriction.
	WebAPIGroups []string
}

// Restrict limits c to the web API groups named, when there are any: the
// claims then name those groups in WebAPIGroups and are not an
// administrator's, whatever the holder is. No groups leave c as it is.
func (c *Claims) Restrict(groups []string) {
	if len(groups) == 0 {
		return
	}
	c.WebAPIGroups = append([]string(nil), groups...)
	c.Admin = false
}

// MayUse reports whether the credential may use the web API group named
// group at all: true unless it is restricted (WebAPIGroups) to others. It
// says nothing of the group's own policy.
func (c *Claims) MayUse(group string) bool {
	if len(c.WebAPIGroups) == 0 {
		return true
	}
	for _, g := range c.WebAPIGroups {
		if g == group {
			return true
		}
	}
	return false
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
