package scoring

import (
	"net/http"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

// Observer is told about every request the [Handler] answers, once, after
// the answer is written (see [Observation]). It is called from many
// goroutines at once and should return quickly; the metrics package
// implements it.
type Observer interface {
	ObserveRequest(o Observation)
}

// Observation is one answered scoring request, as an [Observer] is told it.
type Observation struct {
	// Endpoint is the endpoint the request resolved to, by its registry
	// names, or [Unmatched].
	Endpoint process.EndpointRef
	// Model and Version name the model version that answered a request to
	// a model endpoint: the version the endpoint's alias named when the
	// request resolved, so that a dashboard shows a rollout or a rollback.
	// Empty and 0 for an endpoint that runs a catalog process.
	Model   string
	Version int
	// Status is the HTTP status the client got.
	Status int
	// Rows counts the input rows scored: zero unless Status is 200.
	Rows int
	// Duration is how long the handler took, response writing included.
	Duration time.Duration
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

// observation is what the handler records of one request for its
// Observer. A nil *observation records nothing, so the handler's steps need
// no checks when no Observer is configured.
type observation Observation

// resolved records the endpoint the request resolved to: names taken from
// the registry, never from the raw address; for a model endpoint, the
// model version the target runs (its process is named "<model>@<version>").
func (o *observation) resolved(t *registry.Target) {
	if o == nil {
		return
	}
	o.Endpoint = process.EndpointRef{Group: t.Group.Name, Path: t.Deployment.Path, Alias: t.Endpoint.Alias}
	if t.Endpoint.Model != "" {
		if ref, err := registry.ParseModelRef(t.Process.Name); err == nil && ref.Version > 0 {
			o.Model, o.Version = ref.Model, ref.Version
		}
	}
}

// answered records the status of the answer and the rows it scored.
func (o *observation) answered(status, rows int) {
	if o != nil {
		o.Status, o.Rows = status, rows
	}
}

// serveObserved serves r and then tells the Observer about it.
func (h *Handler) serveObserved(w http.ResponseWriter, r *http.Request) {
	// Offsets from the handler's epoch read the monotonic clock alone.
	start := time.Since(h.epoch)
	o := observation{Endpoint: Unmatched()}
	h.serve(w, r, &o)
	o.Duration = time.Since(h.epoch) - start
	h.observer.ObserveRequest(Observation(o))
}
