package middleware

import (
	"net/http"

	"github.com/scorehub/scorehub/registry"
)

// ScoringAuth returns the check the scoring handler runs for a web API
// group's policy (scoring.Config.Authorize) when the service takes bearer
// idTokens only: [Credentials.Authorize] of a Credentials with cfg and no
// other kind. It fails on the configurations [Bearer] fails on. Use
// [NewCredentials] to take HTTP Basic, API tokens or an OpenID Connect
// provider's access tokens too.
//
// A public policy (or an empty mode) lets every request through. A
// token-only policy needs a valid bearer token, and when p.Groups is not
// empty, a token whose holder is in at least one of those user groups.
// Refusals are those of [Credentials.Authorize]: no token is 401 with a
// bare Bearer challenge, a bad or expired token 401 invalid_token, a holder
// in none of the groups 403 forbidden (error="insufficient_scope"), a group
// that takes no bearer tokens 401 naming none the service checks.
func ScoringAuth(cfg BearerConfig) (func(r *http.Request, group string, p registry.AuthPolicy) error, error) {
	c, err := NewCredentials(CredentialsConfig{BearerConfig: cfg})
	if err != nil {
		return nil, err
	}
	return c.Authorize, nil
}
