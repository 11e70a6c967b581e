package tokens

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
)

// serveRenew is GET PathRenew: a valid idToken this service issued in, a
// fresh one for the same subject, groups, admin flag and credential
// version out, as {"idToken":…,"expirationDate":…}. A page that keeps a
// tester signed in renews before the token expires instead of keeping the
// password. The chain of renewals ends with the password: a token whose
// credential version no longer matches (password, groups or admin flag
// changed, user removed) or that was revoked is refused, as is an expired
// one. Each attempt is charged to the client address's limit.
func (h *Service) serveRenew(w http.ResponseWriter, r *http.Request) {
	raw, ok := h.bearerAttempt(w, r, PathRenew, "a Bearer idToken of this service is required; get one at "+PathTokenService)
	if !ok {
		return
	}
	c, err := h.renewer.Verify(r.Context(), raw)
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		httperr.Write(w, r, h.logger, err)
		h.observe(PathRenew, OutcomeError)
		return
	case err != nil && !tokenRefusal(err):
		httperr.Write(w, r, h.logger, err) // the verifier could not decide: a server fault
		h.observe(PathRenew, OutcomeError)
		return
	case err != nil:
		h.logger.LogAttrs(r.Context(), slog.LevelInfo, "tokens: renewal refused",
			slog.String("client", h.client(r)), slog.String("error", err.Error()))
		message := "the idToken is not valid; sign in again at " + PathTokenService
		if errors.Is(err, ErrExpired) {
			message = "the idToken has expired; sign in again at " + PathTokenService
		} else if errors.Is(err, ErrRevoked) {
			message = "the idToken was revoked or its user's credentials changed; sign in again at " + PathTokenService
		}
		httperr.Write(w, r, h.logger, h.bearerChallenge(problem.InvalidToken, "invalid_token", message))
		h.observe(PathRenew, OutcomeInvalidToken)
		return
	}
	p := Principal{Subject: c.Subject, Admin: c.Admin, Groups: c.Groups, CredentialVersion: c.CredentialVersion}
	h.observe(PathRenew, h.issue(w, r, p, "renewal", true))
}

// tokenRefusal reports whether err says the token itself is not good,
// rather than that it could not be checked.
func tokenRefusal(err error) bool {
	for _, s := range []error{ErrMissing, ErrTooLarge, ErrMalformed, ErrAlgorithm, ErrUnknownKey, ErrSignature,
		ErrExpired, ErrNotYetValid, ErrIssuer, ErrAudience, ErrClaims, ErrRevoked} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
