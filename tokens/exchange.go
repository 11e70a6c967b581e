package tokens

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strings"

	"github.com/scorehub/scorehub/internal/accept"
	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
)

// serveExchange is GET PathExchange: an access token the OpenID Connect
// provider issued (typically from an offline token) in, a scorehub token
// out. The body is the JSON object when Accept names application/json, and
// otherwise the bare JWT as text/plain, which AI Hub's own tooling reads as
// the whole body.
func (h *Service) serveExchange(w http.ResponseWriter, r *http.Request) {
	raw, ok := h.bearerAttempt(w, r, PathExchange, "a Bearer access token from the identity provider is required")
	if !ok {
		return
	}
	p, err := h.provider.Verify(r.Context(), raw)
	switch {
	case errors.Is(err, ErrProviderUnavailable):
		httperr.Write(w, r, h.logger, httperr.New(problem.Unavailable,
			"the identity provider cannot be reached; retry later").
			WithRetryAfter(int(math.Ceil(h.provider.refreshInterval.Seconds()))).Wrap(err))
		h.observe(PathExchange, OutcomeError)
		return
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		httperr.Write(w, r, h.logger, err)
		h.observe(PathExchange, OutcomeError)
		return
	case err != nil:
		h.logger.LogAttrs(r.Context(), slog.LevelInfo, "tokens: access token refused",
			slog.String("client", h.client(r)), slog.String("error", err.Error()))
		httperr.Write(w, r, h.logger, h.bearerChallenge(problem.InvalidToken, "invalid_token", describe(err)))
		h.observe(PathExchange, OutcomeInvalidToken)
		return
	}
	h.observe(PathExchange, h.issue(w, r, p, "exchange", accept.Names(r.Header.Values("Accept"), "application/json")))
}

// bearerChallenge is the refusal of code typ with a Bearer challenge (RFC
// 6750), naming code when there is one.
func (h *Service) bearerChallenge(typ problem.Code, code, message string) error {
	description := message
	if code == "" {
		description = "" // RFC 6750 §3: no error, no description
	}
	return httperr.New(typ, message).WithChallenge(httperr.BearerChallenge(h.realm, code, description))
}

// bearerToken reads the token of a single "Authorization: Bearer" header;
// the scheme is case-insensitive.
func bearerToken(auth []string) (string, bool) {
	if len(auth) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(auth[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// describe says in one sentence, safe for the client, why a token was
// refused.
func describe(err error) string {
	switch {
	case errors.Is(err, ErrTooLarge):
		return "the access token is too large"
	case errors.Is(err, ErrMalformed):
		return "the access token is malformed"
	case errors.Is(err, ErrAlgorithm), errors.Is(err, ErrUnknownKey), errors.Is(err, ErrSignature):
		return "the access token's signature cannot be verified"
	case errors.Is(err, ErrExpired):
		return "the access token has expired"
	case errors.Is(err, ErrNotYetValid):
		return "the access token is not valid yet"
	case errors.Is(err, ErrIssuer):
		return "the access token is from another issuer"
	case errors.Is(err, ErrAudience):
		return "the access token is not meant for this service"
	case errors.Is(err, ErrClaims):
		return "the access token lacks a claim this service needs"
	}
	return "the access token is not valid"
}

// bearerAttempt reads the one Bearer token of a request to route and
// spends an attempt of the client address's limit on it. Without a usable
// token, or past the limit, it answers (a 401 saying missing, a 400 or a
// 429), tells the observer and returns false.
func (h *Service) bearerAttempt(w http.ResponseWriter, r *http.Request, route, missing string) (string, bool) {
	auth := r.Header.Values("Authorization")
	if len(auth) > 1 {
		httperr.Write(w, r, h.logger, h.bearerChallenge(problem.InvalidRequest, "invalid_request", "the request has more than one Authorization header"))
		h.observe(route, OutcomeInvalidToken)
		return "", false
	}
	raw, ok := bearerToken(auth)
	if !ok {
		httperr.Write(w, r, h.logger, h.bearerChallenge(problem.Unauthorized, "", missing))
		h.observe(route, OutcomeInvalidToken)
		return "", false
	}
	if !h.limitAddr(w, r) {
		h.observe(route, OutcomeRateLimited)
		return "", false
	}
	return raw, true
}
