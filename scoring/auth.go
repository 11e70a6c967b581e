package scoring

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/registry"
)

// checkAuth applies the group's token policy and returns the refusal, which
// carries its challenge when it is a 401.
func (h *Handler) checkAuth(r *http.Request, p registry.AuthPolicy) error {
	if h.authorize == nil {
		h.log.WarnContext(r.Context(), "scoring: a web API group requires a token but the handler has no Authorize function; refusing",
			"path", r.URL.Path)
		return errNeedsToken
	}
	if err := h.authorize(r, p); err != nil {
		return authError(err)
	}
	return nil
}

// authError is what an Authorize function's refusal is answered with: an
// *Error or one of the sentinels ErrUnauthorized and ErrForbidden as it is,
// anything else as 500 (the request is refused either way), whatever else
// that error says it is.
func authError(err error) error {
	var e *Error
	if errors.As(err, &e) || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrForbidden) {
		return err
	}
	return errInternal.Wrap(fmt.Errorf("scoring: authorize: %w", err))
}

// errNeedsToken refuses a request to a token group when the handler has no
// Authorize function.
var errNeedsToken = &Error{Status: http.StatusUnauthorized, Type: httperr.TypeUnauthorized, Message: "this endpoint needs a valid token",
	Challenge: "Bearer"}
