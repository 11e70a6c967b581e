package middleware

import (
	"fmt"
	"net/http"

	"github.com/scorehub/scorehub/registry"
)

// ScoringAuth returns the check the scoring handler runs for a web API
// group whose policy is registry.TokenRequired (scoring.Config.Authorize).
// See [Authenticator.Authorize].
func ScoringAuth(cfg BearerConfig) (func(*http.Request, registry.AuthPolicy) error, error) {
	a, err := NewAuthenticator(cfg)
	if err != nil {
		return nil, err
	}
	return a.Authorize, nil
}

// Authorize reports whether r may call a scoring endpoint of a group with
// policy p. A public policy (or an empty mode, which means public) lets
// every request through. A token-only policy needs a valid bearer token, and
// when p.Groups is not empty, a token whose holder is in at least one of
// those user groups. The token is always taken from r itself, even if a
// Bearer middleware in front of the scoring handler already checked one.
//
// Refusals are [*AuthError]s: no token is 401 with a bare Bearer challenge,
// a bad or expired token 401 invalid_token, a holder in none of the groups
// 403 forbidden (error="insufficient_scope"); the scoring handler sends the
// challenge as WWW-Authenticate. A mode Authorize does not know is refused
// as an internal error, never let through.
func (a *Authenticator) Authorize(r *http.Request, p registry.AuthPolicy) error {
	switch p.Mode {
	case "", registry.Public:
		return nil
	case registry.TokenRequired:
	default:
		return fmt.Errorf("middleware: unknown scoring auth mode %q", p.Mode)
	}
	claims, err := a.Authenticate(r)
	if err != nil {
		return err
	}
	if len(p.Groups) == 0 {
		return nil
	}
	for _, g := range p.Groups {
		if claims.InGroup(g) {
			return nil
		}
	}
	return a.errNotInGroups.wrap(fmt.Errorf("middleware: %q is in none of the user groups %q", claims.Subject, p.Groups))
}
