package scoring

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/scorehub/scorehub/internal/redact"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
)

// checkAuth applies the group's token policy and returns the refusal, which
// carries its challenge when it is a 401.
func (h *Handler) checkAuth(r *http.Request, group string, p registry.AuthPolicy) error {
	return authorizeGroup(h.authorize, h.log, r, group, p)
}

// authorizeGroup is the one check of a caller against a web API group's
// policy: the scoring handler runs it for every request to a group, and
// [Jobs] for every job naming an endpoint, so that a job can do nothing its
// submitter could not do at the endpoint's scoring address. A group that
// needs no token lets everyone through. For one that does, authorize (the
// host's [Config.Authorize] or [JobsConfig.Authorize]) decides on r's
// credentials; without it, or without r, the caller is refused with a 401
// carrying its challenge.
func authorizeGroup(authorize func(*http.Request, string, registry.AuthPolicy) error, log *slog.Logger, r *http.Request, group string, p registry.AuthPolicy) error {
	if p.Mode != registry.TokenRequired {
		return nil
	}
	if r == nil { // a job submitted without its caller's request
		return errNeedsToken
	}
	if authorize == nil {
		log.WarnContext(r.Context(), "scoring: a web API group requires a token but no Authorize function is configured; refusing",
			"path", redact.Secrets(r.URL.Path))
		return errNeedsToken
	}
	if err := authorize(r, group, p); err != nil {
		return authError(err)
	}
	return nil
}

// authError is what an Authorize function's refusal is answered with: an
// answer it composed or one of the sentinels ErrUnauthorized and
// ErrForbidden as it is, anything else as 500 (the request is refused
// either way), whatever else that error says it is.
func authError(err error) error {
	if composed(err) != nil || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrForbidden) {
		return err
	}
	return errInternal.Wrap(fmt.Errorf("scoring: authorize: %w", err))
}

// errNeedsToken refuses a request to a token group when the handler has no
// Authorize function.
var errNeedsToken = &problem.Error{Status: http.StatusUnauthorized, Code: problem.Unauthorized, Message: "this endpoint needs a valid token",
	Challenge: "Bearer"}
