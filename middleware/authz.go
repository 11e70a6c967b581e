package middleware

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/tokens"
)

// RequireAdmin lets a request through to next only if the claims [Bearer]
// put in its context say the holder is an administrator. Without claims
// (RequireAdmin mounted without Bearer in front of it) the answer is 401
// unauthorized; with claims of someone else it is 403 forbidden. Both carry
// a WWW-Authenticate challenge, the 403 with error="insufficient_scope".
// The 403 is logged with the subject, as [BearerConfig.Logger] of the
// Bearer in front says.
func RequireAdmin(next http.Handler) http.Handler {
	return require(next, msgAdmin, func(c *tokens.Claims) bool { return c.Admin })
}

// requireGroup returns middleware that lets a request through only if the
// claims [Bearer] put in its context list the user group name. Being an
// administrator does not count as being in a group. Refusals are as for
// [RequireAdmin]. requireGroup panics if name is empty, as a mux does on an
// empty pattern: it is a mistake in the program, not in a request.
func requireGroup(name string) func(http.Handler) http.Handler {
	if name == "" {
		panic("middleware: requireGroup with an empty group name")
	}
	return func(next http.Handler) http.Handler {
		return require(next, msgGroup, func(c *tokens.Claims) bool { return c.InGroup(name) })
	}
}

func require(next http.Handler, refusal string, allowed func(*tokens.Claims) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := authFrom(r.Context())
		if info == nil || info.claims == nil {
			httperr.Write(w, r, nil, newAuthError(problem.Unauthorized, msgMissing, httperr.BearerChallenge("", "", "")))
			return
		}
		if !allowed(info.claims) {
			err := forbidden(info.realm(), refusal)
			var logger *slog.Logger
			if info.auth != nil && info.auth.logRefusal(r, err, info.claims.Subject) {
				logger = discard // logged above, at its own level
			}
			httperr.Write(w, r, logger, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// forbidden is the 403 for a valid token that does not grant enough.
func forbidden(realm, msg string) *problem.Error {
	return newAuthError(problem.Forbidden, msg, httperr.BearerChallenge(realm, codeInsufficientScope, msg))
}

func authFrom(ctx context.Context) *authInfo {
	info, _ := ctx.Value(authKey{}).(*authInfo)
	return info
}
