package management

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/urlpath"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// jobRoutes are the execution job routes, served when [Config.Jobs] is set.
func jobRoutes() []route {
	return []route{
		{http.MethodGet, "/executions/jobs", readAccess, (*Handler).listJobs},
		{http.MethodPost, "/executions/jobs", jobAccess, (*Handler).createJob},
		{http.MethodGet, "/executions/jobs/{id}", readAccess, (*Handler).getJob},
		{http.MethodGet, "/executions/jobs/{id}/result", readAccess, (*Handler).getJobResult},
		{http.MethodPost, "/executions/jobs/{id}/stop", jobAccess, (*Handler).stopJob},
	}
}

// jobJSON is a job as the API shows it. startedAt and finishedAt are null
// until the job starts and ends; error is null unless it ended other than
// FINISHED.
type jobJSON struct {
	ID         string           `json:"id"`
	Owner      string           `json:"owner"`
	State      string           `json:"state"`
	QueueName  string           `json:"queueName"`
	Process    string           `json:"process"`
	Endpoint   *jobEndpointJSON `json:"endpoint"`
	Rows       int              `json:"rows"`
	CreatedAt  time.Time        `json:"createdAt"`
	StartedAt  *time.Time       `json:"startedAt"`
	FinishedAt *time.Time       `json:"finishedAt"`
	Error      *jobs.ErrorInfo  `json:"error"`
	// Replica and StopRequested are shown only for a server that shares
	// its job store with other replicas.
	Replica       string `json:"replica,omitzero"`
	StopRequested bool   `json:"stopRequested,omitzero"`
}

// jobEndpointJSON names an endpoint in a job.
type jobEndpointJSON struct {
	Group string `json:"group" validate:"required,name"`
	Path  string `json:"path" validate:"required,name"`
	Alias string `json:"alias" validate:"required,name"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

func jobView(j jobs.Job) jobJSON {
	v := jobJSON{
		ID: j.ID, Owner: j.Owner, State: string(j.State), QueueName: j.Queue, Process: j.Process, Rows: j.Rows,
		CreatedAt: j.CreatedAt, Error: j.Error, Replica: j.Replica, StopRequested: j.StopRequested,
	}
	if e := j.Endpoint; e != nil {
		v.Endpoint = &jobEndpointJSON{Group: e.Group, Path: e.Path, Alias: e.Alias}
	}
	v.StartedAt, v.FinishedAt = timeOrNull(j.StartedAt), timeOrNull(j.FinishedAt)
	return v
}

// jobInput is the body of POST /executions/jobs.
type jobInput struct {
	QueueName string            `json:"queueName" validate:"omitempty,name"`
	Process   string            `json:"process" validate:"omitempty,name"`
	Endpoint  *jobEndpointJSON  `json:"endpoint" validate:"omitempty"`
	Data      jsontext.Value    `json:"data" validate:"required"`
	Macros    map[string]string `json:"macros" validate:"max=1000,dive,keys,required,max=256,nocontrol,endkeys,max=65536"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

func (in *jobInput) unknown() []problem.FieldError {
	out := unknownMembers("", in.Unknown)
	if in.Endpoint != nil {
		out = append(out, unknownMembers("/endpoint", in.Endpoint.Unknown)...)
	}
	return out
}

// jobCaller is who calls a job route, for the runner to decide what they
// may run and see: the claims Bearer accepted; the creation of the user
// account of that name, so that a user made with the name of a deleted one
// does not inherit the deleted one's jobs; and the request, whose
// credentials the runner checks against an endpoint's group policy as the
// scoring handler would.
func (h *Handler) jobCaller(r *http.Request) (scoring.Caller, error) {
	claims, _ := middleware.ClaimsFrom(r.Context())
	if claims == nil {
		return scoring.Caller{}, errNoClaims
	}
	c := scoring.Caller{Subject: claims.Subject, Admin: claims.Admin, WebAPIGroups: claims.WebAPIGroups, Request: r}
	if h.accounts != nil {
		if a, ok := h.accounts.User(claims.Subject); ok {
			c.Since = a.CreatedAt
		}
	}
	return c, nil
}

// createJob is POST /executions/jobs: 201 with the PENDING job and its
// Location.
func (h *Handler) createJob(w http.ResponseWriter, r *http.Request) error {
	data, err := readBody(r, mediaJSON)
	if err != nil {
		return err
	}
	var in jobInput
	if err := decodeStrict(data, &in); err != nil {
		return err
	}
	var extra []problem.FieldError
	if (in.Process == "") == (in.Endpoint == nil) {
		extra = append(extra, problem.FieldError{Pointer: "/process", Message: "or /endpoint must be given, and not both"})
	}
	if err := h.check(&in, extra...); err != nil {
		return err
	}
	// The rows go through the scoring decoder, so that a job's input is
	// typed exactly as a scoring request's. It reads "data" and ignores the
	// other members, so it takes the job's body as it is, and its pointers
	// (/data/3/age) name the places in it.
	rows, err := scoring.Decode(bytes.NewReader(data), h.jobs.Limits())
	if err != nil {
		return err
	}
	caller, err := h.jobCaller(r)
	if err != nil {
		return err
	}
	spec := scoring.JobSpec{Queue: in.QueueName, Process: in.Process, Input: rows, Macros: in.Macros, Caller: caller}
	if e := in.Endpoint; e != nil {
		spec.Endpoint = &process.EndpointRef{Group: e.Group, Path: e.Path, Alias: e.Alias}
	}
	job, err := h.jobs.Submit(r.Context(), spec)
	if err != nil {
		return err
	}
	w.Header().Set("Location", urlpath.Mount(r)+"/executions/jobs/"+url.PathEscape(job.ID))
	return writeJSON(w, http.StatusCreated, jobView(job))
}

// listJobs is GET /executions/jobs: newest first, of one state with
// ?state=, one queue with ?queueName= and one owner with ?owner=, one page
// at a time (?page=, from 0, and ?size=, 20 by default and at most 1000).
// Only an admin sees every owner's jobs; anyone else sees their own.
func (h *Handler) listJobs(w http.ResponseWriter, r *http.Request) error {
	caller, err := h.jobCaller(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	page, size, err := pageParams(q)
	if err != nil {
		return err
	}
	f := jobs.Filter{State: jobs.State(q.Get("state")), Queue: q.Get("queueName"), Owner: q.Get("owner"),
		Offset: page * size, Limit: size}
	if _, given := q["owner"]; given && (f.Owner == "" || len(f.Owner) > maxOwnerLength) {
		return httperr.Newf(problem.InvalidParameter, "the owner parameter must name a user in 1 to %d bytes", maxOwnerLength)
	}
	if _, given := q["state"]; given && !f.State.Valid() {
		return httperr.Newf(problem.InvalidParameter,
			"the state parameter %q is not a job state (PENDING, RUNNING, FINISHED, ERROR, STOPPED, TIMED_OUT)", f.State)
	}
	if _, given := q["queueName"]; given && !registry.ValidName(f.Queue) {
		return httperr.Newf(problem.InvalidParameter, "the queueName parameter %q is not a valid name", f.Queue)
	}
	jobs, total, err := h.jobs.List(r.Context(), caller, f)
	if err != nil {
		return err
	}
	out := pageJSON[jobJSON]{Content: make([]jobJSON, len(jobs)), TotalElements: total, TotalPages: (total + size - 1) / size, Number: page, Size: size}
	for i, j := range jobs {
		out.Content[i] = jobView(j)
	}
	return writeJSON(w, http.StatusOK, out)
}

// getJob is GET /executions/jobs/{id}.
func (h *Handler) getJob(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if !registry.ValidName(id) {
		return notFound("job", id)
	}
	caller, err := h.jobCaller(r)
	if err != nil {
		return err
	}
	j, err := h.jobs.Job(r.Context(), caller, id)
	if err != nil {
		return jobError(id, err)
	}
	return writeJSON(w, http.StatusOK, jobView(j))
}

// getJobResult is GET /executions/jobs/{id}/result: the rows as a scoring
// request would have been answered, 409 until the job is FINISHED.
func (h *Handler) getJobResult(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if !registry.ValidName(id) {
		return notFound("job", id)
	}
	caller, err := h.jobCaller(r)
	if err != nil {
		return err
	}
	body, err := h.jobs.Result(r.Context(), caller, id)
	if err != nil {
		return jobError(id, err)
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
	return nil
}

// stopJob is POST /executions/jobs/{id}/stop: 202 with the job as it was
// when asked; it becomes STOPPED once its process returns.
func (h *Handler) stopJob(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if !registry.ValidName(id) {
		return notFound("job", id)
	}
	caller, err := h.jobCaller(r)
	if err != nil {
		return err
	}
	j, err := h.jobs.Stop(r.Context(), caller, id)
	if err != nil {
		return jobError(id, err)
	}
	return writeJSON(w, http.StatusAccepted, jobView(j))
}

// jobError names the job in a 404.
func jobError(id string, err error) error {
	if errors.Is(err, registry.ErrNotFound) {
		return notFound("job", id).Wrap(err)
	}
	return err
}

// maxOwnerLength bounds the owner a job list is filtered by, well above
// any user name the token service issues.
const maxOwnerLength = 256

// errNoClaims answers a job route reached without the claims Bearer puts
// in the request's context: a route wired without it, refused rather than
// run as nobody.
var errNoClaims = httperr.New(problem.Unauthorized, "this route needs a valid token")
