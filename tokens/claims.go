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
}
