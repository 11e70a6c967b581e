package management

import (
	"errors"
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
)

// healthJSON is the answer of the health probes.
type healthJSON struct {
	// Status is "up" (live), "ready", or "degraded": the store cannot be
	// reached, scoring answers from the records last read and writes are
	// refused until it is back.
	Status string `json:"status"`
	// Message says what a degraded server does and does not do.
	Message string `json:"message,omitempty"`
}

// msgDegraded is the message of a degraded readiness answer.
const msgDegraded = "the store cannot be reached: scoring answers from the records last read, " +
	"management writes are refused with 503 and Retry-After until the store is back"

// live is GET /health/live: the process is up and serving HTTP.
func (h *Handler) live(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Cache-Control", "no-store")
	return writeJSON(w, http.StatusOK, healthJSON{Status: "up"})
}

// ready is GET /health/ready: the registry's store can be read, so
// management requests can be served. A store that cannot be reached for now
// (registry.ErrStoreUnavailable) is 200 "degraded": the server still scores
// from its snapshot, so a load balancer must keep sending it scoring
// requests, which every replica of a shared store would otherwise stop
// getting at once. Any other failure is 503 unavailable, the cause logged.
func (h *Handler) ready(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Cache-Control", "no-store")
	err := h.reg.Ping(r.Context())
	switch {
	case errors.Is(err, registry.ErrStoreUnavailable):
		h.logger.Warn("management: store unavailable; serving the last snapshot", "cause", err.Error())
		return writeJSON(w, http.StatusOK, healthJSON{Status: "degraded", Message: msgDegraded})
	case err != nil:
		return httperr.New(problem.Unavailable, "the registry store cannot be read").Wrap(err)
	}
	return writeJSON(w, http.StatusOK, healthJSON{Status: "ready"})
}
