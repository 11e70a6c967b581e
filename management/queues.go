package management

import (
	"net/http"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/scoring"
)

// queueJSON is a queue as the API shows it: its definition, its live
// figures from the scoring queues, and its record's revision and times.
type queueJSON struct {
	scoring.QueueStats
	Revision  uint64    `json:"revision"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// queueInput is the body of PUT /api/v1/queues/{name}. The figures a GET
// shows may come back and are ignored. Its tags say what the wire
// requires; the rules of a queue are [registry.Queue.Faults].
type queueInput struct {
	Name          string `json:"name" validate:"required"`
	MaxConcurrent *int   `json:"maxConcurrent" validate:"required,max=100000"`
	MaxWaiting    *int   `json:"maxWaiting" validate:"required,max=10000000"`
	Revision      uint64 `json:"revision"`

	CreatedAt jsontext.Value `json:"createdAt" validate:"-"`
	UpdatedAt jsontext.Value `json:"updatedAt" validate:"-"`
	Running   jsontext.Value `json:"running" validate:"-"`
	Waiting   jsontext.Value `json:"waiting" validate:"-"`
	Completed jsontext.Value `json:"completed" validate:"-"`
	Failed    jsontext.Value `json:"failed" validate:"-"`
	Rejected  jsontext.Value `json:"rejected" validate:"-"`
	TimedOut  jsontext.Value `json:"timedOut" validate:"-"`
	Cancelled jsontext.Value `json:"cancelled" validate:"-"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

func (in *queueInput) unknown() []problem.FieldError { return unknownMembers("", in.Unknown) }

// queueView joins q's definition with the live figures of the queue.
func (h *Handler) queueView(q registry.Queue) queueJSON {
	s, _ := h.queues.Stat(q.Name)
	// The record is the definition; the live figures may lag a write.
	s.Name, s.MaxConcurrent, s.MaxWaiting = q.Name, q.MaxConcurrent, q.MaxWaiting
	return queueJSON{QueueStats: s, Revision: q.Revision, CreatedAt: q.CreatedAt, UpdatedAt: q.UpdatedAt}
}

// listQueues is GET /executions/queues (AI Hub 9) and GET /api/v1/queues
// (AI Hub 10): every defined queue, sorted by name.
func (h *Handler) listQueues(w http.ResponseWriter, r *http.Request) error {
	qs := h.reg.Snapshot().State().Queues()
	out := make([]queueJSON, len(qs))
	for i, q := range qs {
		out[i] = h.queueView(q)
	}
	return writeJSON(w, http.StatusOK, out)
}

// getQueue is GET /api/v1/queues/{name}.
func (h *Handler) getQueue(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	q, ok := h.reg.Snapshot().State().Queue(name)
	if !ok {
		return notFound("queue", name)
	}
	setETag(w, q.Revision)
	return writeJSON(w, http.StatusOK, h.queueView(q))
}

// putQueue is PUT /api/v1/queues/{name}: define a queue or change one.
// Executions already running keep their slots; the new limits apply to
// what arrives next.
func (h *Handler) putQueue(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	data, err := readBody(r, mediaJSON)
	if err != nil {
		return err
	}
	var in queueInput
	if err := decodeStrict(data, &in); err != nil {
		return err
	}
	var extra []problem.FieldError
	switch {
	case in.Name == "":
		in.Name = name
	case in.Name != name:
		extra = append(extra, problem.FieldError{Pointer: "/name", Message: "must be the name in the URL, " + quote(name)})
	}
	q := registry.Queue{Name: in.Name}
	if in.MaxConcurrent != nil {
		q.MaxConcurrent = *in.MaxConcurrent
	}
	if in.MaxWaiting != nil {
		q.MaxWaiting = *in.MaxWaiting
	}
	if err := h.checkRecord(&in, q.Faults(), nil, extra...); err != nil {
		return err
	}
	pre, err := parsePrecondition(r, in.Revision, "/revision")
	if err != nil {
		return err
	}
	var stored registry.Queue
	err = h.reg.Update(r.Context(), func(tx *registry.Tx) error {
		cur, exists := tx.State().Queue(name)
		want, err := pre.revision("queue", name, exists, cur.Revision, registry.AnyRevision)
		if err != nil {
			return err
		}
		q.Revision = want // q names the queue of the URL: checkRecord refused another
		stored, err = tx.PutQueue(q)
		return err
	})
	if err != nil {
		return err
	}
	setETag(w, stored.Revision)
	return writeJSON(w, createdOrOK(stored.Revision), h.queueView(stored))
}

// deleteQueue is DELETE /api/v1/queues/{name}. DEFAULT and queues an
// endpoint uses cannot be removed (409 in_use).
func (h *Handler) deleteQueue(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	pre, err := parsePrecondition(r, 0, "")
	if err != nil {
		return err
	}
	err = h.reg.Update(r.Context(), func(tx *registry.Tx) error {
		cur, exists := tx.State().Queue(name)
		if !exists {
			return notFound("queue", name)
		}
		want, err := pre.revision("queue", name, true, cur.Revision, registry.AnyRevision)
		if err != nil {
			return err
		}
		return tx.DeleteQueue(name, want)
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
