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

// authError maps what an Authorize function returned to the answer: an
// *Error as it is, the sentinels to 401 and 403, anything else to 500 (the
// request is refused either way).
func authError(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, ErrUnauthorized):
		return errNeedsToken.Wrap(err)
	case errors.Is(err, ErrForbidden):
		return errGroupForbidden.Wrap(err)
	}
	return errInternal.Wrap(fmt.Errorf("scoring: authorize: %w", err))
}

var (
	errNeedsToken = &Error{Status: http.StatusUnauthorized, Type: httperr.TypeUnauthorized, Message: "this endpoint needs a valid token",
		Challenge: "Bearer"}
	errGroupForbidden = &Error{Status: http.StatusForbidden, Type: httperr.TypeForbidden,
		Message: "the token does not allow using this web API group"}
)
