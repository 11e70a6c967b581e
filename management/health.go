package management

import (
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
)

// healthJSON is the answer of the health probes.
type healthJSON struct {
	Status string `json:"status"`
}

// live is GET /health/live: the process is up and serving HTTP.
func (h *Handler) live(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Cache-Control", "no-store")
	return writeJSON(w, http.StatusOK, healthJSON{Status: "up"})
}

// ready is GET /health/ready: the registry's store can be read, so
// management requests can be served. Otherwise 503 unavailable, the cause
// logged.
func (h *Handler) ready(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Cache-Control", "no-store")
	if err := h.reg.Ping(r.Context()); err != nil {
		return httperr.New(httperr.TypeUnavailable, "the registry store cannot be read").Wrap(err)
	}
	return writeJSON(w, http.StatusOK, healthJSON{Status: "ready"})
}
