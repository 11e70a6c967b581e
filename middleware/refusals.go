package middleware

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/scorehub/scorehub/internal/keyedlimit"
	"github.com/scorehub/scorehub/internal/redact"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/tokens"
)

// maxLoggedPath bounds the request path a refusal record carries: the path is
// the client's to choose, and a record per refused request must stay small.
const maxLoggedPath = 256

// tokenSentinels are the verification errors a refusal record may name as
// its cause. Only their fixed text is logged, never the detail a verifier
// wraps them with, which could quote the token.
var tokenSentinels = [...]error{
	tokens.ErrMissing, tokens.ErrTooLarge, tokens.ErrMalformed, tokens.ErrAlgorithm,
	tokens.ErrUnknownKey, tokens.ErrSignature, tokens.ErrExpired, tokens.ErrNotYetValid,
	tokens.ErrIssuer, tokens.ErrAudience, tokens.ErrClaims, tokens.ErrRevoked,
}

// logRefusal records err if it refuses r's credentials and reports whether
// it did; any other error (a verifier that failed, a body too large) is left
// to whoever writes the answer. A token that was presented and refused
// (invalid, expired, its holder not allowed) is logged at warn level, a
// request without usable credentials at info level: the record says who was
// turned away from which route and why, so that probing and guessing show
// in the log. It carries the method, the path (bounded), the route pattern
// when a ServeMux matched one, the error type, the reason the client was
// given, the verification error's sentinel as cause, the client's address
// (read with TrustedProxies), the request ID and the subject when the token
// was valid. The token itself is never logged.
func (a *authenticator) logRefusal(r *http.Request, err error, subject string) bool {
	var e *problem.Error
	if !errors.As(err, &e) {
		return false
	}
	level := slog.LevelInfo
	switch {
	case e.Code == problem.InvalidToken || e.Status == http.StatusForbidden:
		level = slog.LevelWarn
	case e.Status == http.StatusUnauthorized, e.Code == problem.InvalidRequest:
	default:
		return false
	}
	ctx := r.Context()
	if !a.logger.Enabled(ctx, level) {
		return true
	}
	path := redact.Secrets(r.URL.Path)
	if len(path) > maxLoggedPath {
		path = path[:maxLoggedPath] + "…"
	}
	attrs := make([]slog.Attr, 0, 10)
	attrs = append(attrs, slog.String("method", r.Method), slog.String("path", path))
	if r.Pattern != "" {
		attrs = append(attrs, slog.String("route", r.Pattern))
	}
	attrs = append(attrs, slog.Int("status", e.Status), slog.String("type", string(e.Code)), slog.String("reason", e.Message))
	for _, s := range tokenSentinels {
		if errors.Is(e.Err, s) {
			attrs = append(attrs, slog.String("cause", s.Error()))
			break
		}
	}
	if client := keyedlimit.ClientAddr(r, a.trusted); client.IsValid() {
		attrs = append(attrs, slog.String("client", client.String()))
	} else if r.RemoteAddr != "" { // not an IP address: a Unix socket, say
		attrs = append(attrs, slog.String("client", r.RemoteAddr))
	}
	if id := requestIDFrom(ctx); id != "" {
		attrs = append(attrs, slog.String("request_id", id))
	}
	if subject != "" {
		attrs = append(attrs, slog.String("subject", subject))
	}
	a.logger.LogAttrs(ctx, level, "middleware: credentials refused", attrs...)
	return true
}
