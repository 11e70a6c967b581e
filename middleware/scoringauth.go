package middleware

import (
	"fmt"
	"net/http"

	"github.com/scorehub/scorehub/registry"
)

// ScoringAuth returns the check the scoring handler runs for a web API
// group's policy (scoring.Config.Authorize): the one function that decides
// whether r may call a scoring endpoint of a group with policy p. It takes
// the token as [Bearer] does, with the same refusals, and fails on the
// same configurations. The function is safe for concurrent use.
//
// A public policy (or an empty mode, which means public) lets
// every request through. A token-only policy needs a valid bearer token, and
// when p.Groups is not empty, a token whose holder is in at least one of
// those user groups. The token is always taken from r itself, even if a
// Bearer middleware in front of the scoring handler already checked one.
//
// A refusal is an error that carries its whole answer, WWW-Authenticate
// challenge included, which the scoring handler sends as it is (match it
// with errors.As and a *scoring.Error): no token is 401 with a bare Bearer
// challenge, a bad or expired token 401 invalid_token, a holder in none of
// the groups 403 forbidden (error="insufficient_scope"). A token refused by
// the verifier keeps the verifier's error in the chain, for errors.Is
// (tokens.ErrExpired, …). A mode the function does not know is refused as
// an internal error, never let through. Each refusal is logged as
// [BearerConfig.Logger] says, whoever then writes the answer.
func ScoringAuth(cfg BearerConfig) (func(*http.Request, registry.AuthPolicy) error, error) {
	a, err := newAuthenticator(cfg)
	if err != nil {
		return nil, err
	}
	return a.authorize, nil
}

// authorize is the function [ScoringAuth] returns.
func (a *authenticator) authorize(r *http.Request, p registry.AuthPolicy) error {
	switch p.Mode {
	case "", registry.Public:
		return nil
	case registry.TokenRequired:
	default:
		return fmt.Errorf("middleware: unknown scoring auth mode %q", p.Mode)
	}
	claims, err := a.authenticate(r)
	if err != nil {
		a.logRefusal(r, err, "")
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
	err = a.errNotInGroups.Wrap(fmt.Errorf("middleware: %q is in none of the user groups %q", claims.Subject, p.Groups))
	a.logRefusal(r, err, claims.Subject)
	return err
}
