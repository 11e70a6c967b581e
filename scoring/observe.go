package scoring

import (
	"net/http"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

// Observer is told about every request the [Handler] answers, once, after
// the answer is written: the endpoint it resolved to, the HTTP status, the
// input rows scored (zero unless the status is 200) and how long the
// handler took, response writing included. It is called from many
// goroutines at once and should return quickly; the metrics package
// implements it.
type Observer interface {
	ObserveRequest(ep process.EndpointRef, status int, rows int, d time.Duration)
}

// Unmatched returns the endpoint an [Observer] is given for a request that
// did not resolve to an endpoint: a malformed address, names nothing is
// stored under, a disabled deployment, a process missing from the catalog.
// Its group, path and alias are "_unmatched", which is not a valid registry
// name, so it never collides with a real endpoint; and it keeps what an
// observer records bounded: however many random addresses clients try, they
// all count as this one. Compare an endpoint with it by ==.
func Unmatched() process.EndpointRef {
	return process.EndpointRef{Group: unmatchedName, Path: unmatchedName, Alias: unmatchedName}
}

const unmatchedName = "_unmatched"

// observation is what the handler records of one request for its Observer.
// A nil *observation records nothing, so the handler's steps need no
// checks when no Observer is configured.
type observation struct {
	ep     process.EndpointRef
	status int
	rows   int
}

// resolved records the endpoint the request resolved to: names taken from
// the registry, never from the raw address.
func (o *observation) resolved(t *registry.Target) {
	if o != nil {
		o.ep = process.EndpointRef{Group: t.Group.Name, Path: t.Deployment.Path, Alias: t.Endpoint.Alias}
	}
}

// answered records the status of the answer and the rows it scored.
func (o *observation) answered(status, rows int) {
	if o != nil {
		o.status, o.rows = status, rows
	}
}

// serveObserved serves r and then tells the Observer about it.
func (h *Handler) serveObserved(w http.ResponseWriter, r *http.Request) {
	// Offsets from the handler's epoch read the monotonic clock alone.
	start := time.Since(h.epoch)
	o := observation{ep: Unmatched()}
	h.serve(w, r, &o)
	h.observer.ObserveRequest(o.ep, o.status, o.rows, time.Since(h.epoch)-start)
}
