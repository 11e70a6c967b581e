package scoring

import (
	"errors"
	"net/http"

	"github.com/scorehub/scorehub/registry"
)

// checkAuth applies the group's token policy; on refusal it sets the
// challenge header and returns the answer.
func (h *Handler) checkAuth(w http.ResponseWriter, r *http.Request, p registry.AuthPolicy) error {
	if h.authorize == nil {
		h.log.WarnContext(r.Context(), "scoring: a web API group requires a token but the handler has no Authorize function; refusing",
			"path", r.URL.Path)
		w.Header().Set("WWW-Authenticate", defaultChallenge)
		return &Error{Status: http.StatusUnauthorized, Type: TypeUnauthorized, Message: "this endpoint needs a valid token"}
	}
	err := h.authorize(r, p)
	if err == nil {
		return nil
	}
	e := authError(err)
	var ch Challenger
	switch {
	case errors.As(err, &ch):
		w.Header().Set("WWW-Authenticate", ch.Challenge())
	case e.Status == http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", defaultChallenge)
	}
	return e
}
