package management

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// Paging of GET /api/v1/deployments, as Spring Data pages.
const (
	defaultPageSize = 20
	maxPageSize     = 1000
)

// deploymentJSON is a deployment as the API shows it.
type deploymentJSON struct {
	Group       string         `json:"group"`
	Path        string         `json:"path"`
	Description string         `json:"description"`
	Enabled     bool           `json:"enabled"`
	Endpoints   []endpointJSON `json:"endpoints"`
	Revision    uint64         `json:"revision"`
	CreatedAt   time.Time      `json:"createdAt"`
	UpdatedAt   time.Time      `json:"updatedAt"`
}

// endpointJSON is one endpoint of a deployment. It runs a catalog
// process, or a model version named as "model@alias" or "model@version";
// process is empty for the latter, and model absent for the former.
// timeoutMs 0 means the scoring handler's default; queue is always named,
// DEFAULT when the endpoint sets none.
type endpointJSON struct {
	Alias       string           `json:"alias"`
	Process     string           `json:"process"`
	Model       string           `json:"model,omitzero"`
	Queue       string           `json:"queue"`
	TimeoutMs   int64            `json:"timeoutMs"`
	Description string           `json:"description"`
	Explain     *explainJSON     `json:"explain,omitzero"`
	Challengers []challengerJSON `json:"challengers,omitzero"`
	SplitKey    string           `json:"splitKey,omitzero"`
	AnsweredBy  bool             `json:"answeredBy,omitzero"`
	RowID       string           `json:"rowId,omitzero"`
	// Monitor is false, the drift measure off, or its settings; absent
	// when the endpoint sets none (a model endpoint's drift is measured
	// with the defaults).
	Monitor       jsontext.Value  `json:"monitor,omitzero"`
	OutlierColumn bool            `json:"outlierColumn,omitzero"`
	PayloadLog    *payloadLogJSON `json:"payloadLog,omitzero"`
}

// challengerJSON is one challenger of an endpoint (registry.Challenger);
// percent is a split challenger's share of the rows.
type challengerJSON struct {
	Model   string  `json:"model"`
	Mode    string  `json:"mode"`
	Percent float64 `json:"percent,omitzero"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

func challengersView(cs []registry.Challenger) []challengerJSON {
	if len(cs) == 0 {
		return nil
	}
	out := make([]challengerJSON, len(cs))
	for i, c := range cs {
		out[i] = challengerJSON{Model: c.Model, Mode: c.Mode, Percent: c.Percent}
	}
	return out
}

// explainJSON is an endpoint's explanations (registry.Explain): absent
// when they are off.
type explainJSON struct {
	Method string `json:"method"`
	Top    int    `json:"top"`
	Class  string `json:"class"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

func explainView(x *registry.Explain) *explainJSON {
	if x == nil {
		return nil
	}
	v := &explainJSON{Method: x.Method, Top: x.Top, Class: x.Class}
	if v.Class == "" {
		v.Class = registry.ExplainPredicted
	}
	return v
}

func deploymentView(d registry.Deployment) deploymentJSON {
	eps := make([]endpointJSON, len(d.Endpoints))
	for i, e := range d.Endpoints {
		eps[i] = endpointJSON{
			Alias:         e.Alias,
			Process:       e.Process,
			Model:         e.Model,
			Queue:         e.QueueName(),
			TimeoutMs:     e.Timeout.Milliseconds(),
			Description:   e.Description,
			Explain:       explainView(e.Explain),
			Challengers:   challengersView(e.Challengers),
			SplitKey:      e.SplitKey,
			AnsweredBy:    e.AnsweredBy,
			RowID:         e.RowID,
			Monitor:       monitorView(e.Monitor),
			OutlierColumn: e.OutlierColumn,
			PayloadLog:    payloadLogView(e.PayloadLog),
		}
	}
	return deploymentJSON{
		Group:       d.Group,
		Path:        d.Path,
		Description: d.Description,
		Enabled:     d.Enabled,
		Endpoints:   eps,
		Revision:    d.Revision,
		CreatedAt:   d.CreatedAt,
		UpdatedAt:   d.UpdatedAt,
	}
}

// deploymentInput is the body of POST /api/v1/deployments and PUT
// /api/v1/deployments/{group}/{path}, and what a PATCH's merged document
// is read as. An absent enabled means true. Its tags say what the wire
// requires; the rules of a deployment are [registry.Deployment.Faults].
type deploymentInput struct {
	Group       string          `json:"group" validate:"required"`
	Path        string          `json:"path" validate:"required"`
	Description string          `json:"description" validate:"max=4096"`
	Enabled     *bool           `json:"enabled"`
	Endpoints   []endpointInput `json:"endpoints" validate:"max=1000,dive"`
	Revision    uint64          `json:"revision"`

	CreatedAt jsontext.Value `json:"createdAt" validate:"-"`
	UpdatedAt jsontext.Value `json:"updatedAt" validate:"-"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

// endpointInput is one endpoint in a body: exactly one of process and
// model is given (an empty one is not). An empty queue means DEFAULT, a
// zero timeoutMs the scoring handler's default.
type endpointInput struct {
	Alias         string           `json:"alias" validate:"required"`
	Process       string           `json:"process"`
	Model         string           `json:"model"`
	Queue         string           `json:"queue"`
	TimeoutMs     int64            `json:"timeoutMs" validate:"max=86400000"`
	Description   string           `json:"description" validate:"max=4096"`
	Explain       *explainJSON     `json:"explain" validate:"-"`
	Challengers   []challengerJSON `json:"challengers" validate:"-"`
	SplitKey      string           `json:"splitKey"`
	AnsweredBy    bool             `json:"answeredBy"`
	RowID         string           `json:"rowId"`
	Monitor       jsontext.Value   `json:"monitor" validate:"-"`
	OutlierColumn bool             `json:"outlierColumn"`
	PayloadLog    *payloadLogJSON  `json:"payloadLog" validate:"-"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

// unknown lists the members of in that the wire does not know, and the
// faults of the endpoints' monitor members, which are read by hand.
func (in *deploymentInput) unknown() []problem.FieldError {
	out := unknownMembers("", in.Unknown)
	for i, e := range in.Endpoints {
		out = append(out, unknownMembers("/endpoints/"+strconv.Itoa(i), e.Unknown)...)
		_, faults := readMonitor(e.Monitor, "/endpoints/"+strconv.Itoa(i))
		out = append(out, faults...)
		if e.PayloadLog != nil {
			out = append(out, unknownMembers("/endpoints/"+strconv.Itoa(i)+"/payloadLog", e.PayloadLog.Unknown)...)
		}
		if e.Explain != nil {
			out = append(out, unknownMembers("/endpoints/"+strconv.Itoa(i)+"/explain", e.Explain.Unknown)...)
		}
		for j, c := range e.Challengers {
			out = append(out, unknownMembers("/endpoints/"+strconv.Itoa(i)+"/challengers/"+strconv.Itoa(j), c.Unknown)...)
		}
	}
	return out
}

func (in *deploymentInput) record(rev uint64) registry.Deployment {
	d := registry.Deployment{
		Group:       in.Group,
		Path:        in.Path,
		Description: in.Description,
		Enabled:     in.Enabled == nil || *in.Enabled,
		Endpoints:   make([]registry.Endpoint, len(in.Endpoints)),
		Revision:    rev,
	}
	for i, e := range in.Endpoints {
		d.Endpoints[i] = registry.Endpoint{
			Alias:         e.Alias,
			Process:       e.Process,
			Model:         e.Model,
			Queue:         e.Queue,
			Timeout:       millis(e.TimeoutMs),
			Description:   e.Description,
			SplitKey:      e.SplitKey,
			AnsweredBy:    e.AnsweredBy,
			RowID:         e.RowID,
			OutlierColumn: e.OutlierColumn,
		}
		d.Endpoints[i].Monitor, _ = readMonitor(e.Monitor, "")
		if l := e.PayloadLog; l != nil {
			d.Endpoints[i].PayloadLog = &registry.PayloadLog{Rate: l.Rate, Redact: l.Redact}
		}
		for _, c := range e.Challengers {
			d.Endpoints[i].Challengers = append(d.Endpoints[i].Challengers, registry.Challenger{Model: c.Model, Mode: c.Mode, Percent: c.Percent})
		}
		if x := e.Explain; x != nil {
			d.Endpoints[i].Explain = &registry.Explain{Method: x.Method, Top: x.Top, Class: x.Class}
			if x.Class == registry.ExplainPredicted {
				d.Endpoints[i].Explain.Class = "" // the default, stored as such
			}
		}
	}
	return d
}

// millis is ms milliseconds, bounded rather than wrapped where a
// time.Duration ends, so that a value out of range keeps its sign for the
// registry's rule.
func millis(ms int64) time.Duration {
	const most = math.MaxInt64 / int64(time.Millisecond)
	return time.Duration(min(max(ms, -most), most)) * time.Millisecond
}

// checkIdentity lists the fields of a body that contradict the group and
// path of the URL; empty ones are filled in from it.
func (in *deploymentInput) checkIdentity(group, path string) []problem.FieldError {
	var out []problem.FieldError
	for _, f := range []struct {
		pointer string
		field   *string
		want    string
	}{{"/group", &in.Group, group}, {"/path", &in.Path, path}} {
		switch {
		case *f.field == "":
			*f.field = f.want
		case *f.field != f.want:
			out = append(out, problem.FieldError{Pointer: f.pointer,
				Message: "must be the one in the URL, " + quote(f.want) + ": a deployment cannot move"})
		}
	}
	return out
}

// checkReferences lists every reference of d to something that does not
// exist: its group, its endpoints' queues and models, under the registry's
// rule ([registry.State.CheckReferences]), and processes the catalog does
// not hold, which the registry does not require but the API does. An
// endpoint that keeps the process it has in prev (the stored deployment)
// is not checked against the catalog, so that a deployment stored by a
// build with other processes can still be changed, for example disabled.
// The faults are listed together, in the order of the fields.
func (h *Handler) checkReferences(st *registry.State, d registry.Deployment, prev *registry.Deployment) error {
	refs := map[string]string{}
	for _, err := range unjoin(st.CheckReferences(d)) {
		var inv *registry.InvalidError
		if !errors.As(err, &inv) {
			return err
		}
		refs[inv.Pointer] = inv.Message
	}
	var fields []problem.FieldError
	add := func(pointer string) {
		if msg, ok := refs[pointer]; ok {
			fields = append(fields, problem.FieldError{Pointer: pointer, Message: msg})
		}
	}
	add("/group")
	for i, e := range d.Endpoints {
		p := "/endpoints/" + strconv.Itoa(i)
		switch {
		case e.Model != "":
			add(p + "/model")
			for j := range e.Challengers {
				add(p + "/challengers/" + strconv.Itoa(j) + "/model")
			}
			if _, unresolved := refs[p+"/model"]; len(e.Challengers) > 0 && !unresolved {
				fields = append(fields, h.checkChallengers(e, p, refs)...)
			}
			if _, unresolved := refs[p+"/model"]; e.Explain != nil && !unresolved {
				// The model must be able to explain itself: loaded as it
				// would be served, which answers at once for a version
				// scored before.
				proc, err := h.reg.Snapshot().EndpointProcess(e)
				switch {
				case errors.Is(err, registry.ErrUnavailable):
					fields = append(fields, problem.FieldError{Pointer: p + "/explain", Message: unavailableMessage(err)})
				case err == nil:
					if msg := explainsItsSample(proc); msg != "" {
						fields = append(fields, problem.FieldError{Pointer: p + "/explain", Message: msg})
					}
				}
			}
		default:
			if _, ok := h.reg.Catalog().Lookup(e.Process); !ok && !keepsProcess(prev, e) {
				fields = append(fields, problem.FieldError{Pointer: p + "/process", Message: "names no process in the catalog: " + quote(e.Process)})
			}
		}
		add(p + "/queue")
	}
	if len(fields) > 0 {
		return invalidReferences(fields)
	}
	return nil
}

// unjoin returns the errors err joins, or err alone.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func keepsProcess(prev *registry.Deployment, e registry.Endpoint) bool {
	if prev == nil {
		return false
	}
	old, ok := prev.Endpoint(e.Alias)
	return ok && old.Process == e.Process
}

// pageJSON is one page of a list, in the shape of a Spring Data page.
type pageJSON[T any] struct {
	Content       []T `json:"content"`
	TotalElements int `json:"totalElements"`
	TotalPages    int `json:"totalPages"`
	Number        int `json:"number"`
	Size          int `json:"size"`
}

// listDeployments is GET /api/v1/deployments: the deployments of the
// groups the caller may see (see viewer) sorted by group and path, of one
// group with ?group=, one page at a time (?page=, from 0, and ?size=, 20 by
// default and at most 1000). A page past the last is empty.
func (h *Handler) listDeployments(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	page, size, err := pageParams(q)
	if err != nil {
		return err
	}
	group := q.Get("group")
	if _, given := q["group"]; given && !registry.ValidName(group) {
		return httperr.Newf(problem.InvalidParameter, "the group parameter %q is not a valid name", group)
	}
	var all []registry.Deployment
	st := h.reg.Snapshot().State()
	v := viewerOf(r, st)
	for _, d := range st.Deployments() {
		if (group == "" || d.Group == group) && v.group(d.Group) {
			all = append(all, d)
		}
	}
	return writeJSON(w, http.StatusOK, pageOf(all, page, size, deploymentView))
}

// pageOf returns page (from 0) of all, size items a page, as views.
func pageOf[T, V any](all []T, page, size int, view func(T) V) pageJSON[V] {
	out := pageJSON[V]{
		Content:       []V{},
		TotalElements: len(all),
		TotalPages:    (len(all) + size - 1) / size,
		Number:        page,
		Size:          size,
	}
	if start := page * size; start < len(all) {
		for _, v := range all[start:min(start+size, len(all))] {
			out.Content = append(out.Content, view(v))
		}
	}
	return out
}

// pageParams reads a list route's ?page= (from 0) and ?size= (20 by
// default, at most maxPageSize).
func pageParams(q url.Values) (page, size int, err error) {
	if page, err = intParam(q.Get("page"), "page", 0, 0, 1<<31-1); err != nil {
		return 0, 0, err
	}
	if size, err = intParam(q.Get("size"), "size", defaultPageSize, 1, maxPageSize); err != nil {
		return 0, 0, err
	}
	return page, size, nil
}

// intParam reads an integer query parameter within [lo, hi]; empty is def.
func intParam(s, name string, def, lo, hi int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, httperr.Newf(problem.InvalidParameter,
			"the %s parameter must be an integer from %d to %d, not %q", name, lo, hi, s)
	}
	return n, nil
}

// getDeployment is GET /api/v1/deployments/{group}/{path}; 404 for a
// deployment of a group the caller may not see.
func (h *Handler) getDeployment(w http.ResponseWriter, r *http.Request) error {
	group, path := r.PathValue("group"), r.PathValue("path")
	st := h.reg.Snapshot().State()
	d, ok := st.Deployment(group, path)
	if !ok || !viewerOf(r, st).group(group) {
		return notFound("deployment", group+"/"+path)
	}
	setETag(w, d.Revision)
	return writeJSON(w, http.StatusOK, deploymentView(d))
}

// decodeDeployment reads and checks a deployment body in JSON.
func (h *Handler) decodeDeployment(data []byte, extra func(in *deploymentInput) []problem.FieldError) (*deploymentInput, error) {
	in := &deploymentInput{}
	if err := decodeStrict(data, in); err != nil {
		return nil, err
	}
	var more []problem.FieldError
	if extra != nil {
		more = extra(in)
	}
	d := in.record(0)
	fields, joint := d.Faults()
	if err := h.checkRecord(in, fields, joint, more...); err != nil {
		return nil, err
	}
	return in, nil
}

// createDeployment is POST /api/v1/deployments: 201 with Location, or 409
// already_exists.
func (h *Handler) createDeployment(w http.ResponseWriter, r *http.Request) error {
	data, err := readBody(r, mediaJSON)
	if err != nil {
		return err
	}
	in, err := h.decodeDeployment(data, func(in *deploymentInput) []problem.FieldError {
		if in.Revision != 0 {
			return []problem.FieldError{{Pointer: "/revision", Message: "must be absent or 0 when creating"}}
		}
		return nil
	})
	if err != nil {
		return err
	}
	d := in.record(0)
	if err := h.checkReferences(h.reg.Snapshot().State(), d, nil); err != nil {
		return err
	}
	stored, err := h.reg.PutDeployment(r.Context(), d)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "deployments/"+stored.Group+"/"+stored.Path)
	setETag(w, stored.Revision)
	return writeJSON(w, http.StatusCreated, deploymentView(stored))
}

// putDeployment is PUT /api/v1/deployments/{group}/{path}: create or
// replace.
func (h *Handler) putDeployment(w http.ResponseWriter, r *http.Request) error {
	group, path := r.PathValue("group"), r.PathValue("path")
	data, err := readBody(r, mediaJSON)
	if err != nil {
		return err
	}
	in, err := h.decodeDeployment(data, func(in *deploymentInput) []problem.FieldError {
		return in.checkIdentity(group, path)
	})
	if err != nil {
		return err
	}
	pre, err := parsePrecondition(r, in.Revision, "/revision")
	if err != nil {
		return err
	}
	h.reg.LoadModels(in.record(0))
	var stored registry.Deployment
	err = h.reg.Update(r.Context(), func(tx *registry.Tx) error {
		st := tx.State()
		cur, exists := st.Deployment(group, path)
		want, err := pre.revision("deployment", group+"/"+path, exists, cur.Revision, registry.AnyRevision)
		if err != nil {
			return err
		}
		d := in.record(want)
		var prev *registry.Deployment
		if exists {
			prev = &cur
		}
		if err := h.checkReferences(st, d, prev); err != nil {
			return err
		}
		stored, err = tx.PutDeployment(d)
		return err
	})
	if err != nil {
		return err
	}
	setETag(w, stored.Revision)
	return writeJSON(w, createdOrOK(stored.Revision), deploymentView(stored))
}

// patchDeployment is PATCH /api/v1/deployments/{group}/{path}: a JSON merge
// patch (RFC 7396) applied to the deployment as GET shows it, the result
// read and checked as a PUT body would be. Arrays, endpoints among them,
// are replaced whole. Without If-Match the patch applies to the deployment
// as it is when the write commits: a write in between makes it read and
// apply again, so no update is lost.
func (h *Handler) patchDeployment(w http.ResponseWriter, r *http.Request) error {
	group, path := r.PathValue("group"), r.PathValue("path")
	data, err := readBody(r, mediaMergePatch)
	if err != nil {
		return err
	}
	patch, err := decodePatch(data)
	if err != nil {
		return err
	}
	patchRev, err := patchRevision(patch)
	if err != nil {
		return err
	}
	pre, err := parsePrecondition(r, patchRev, "/revision")
	if err != nil {
		return err
	}
	if cur, ok := h.reg.Snapshot().State().Deployment(group, path); ok {
		if d, err := h.patched(cur, patch, cur.Revision); err == nil {
			h.reg.LoadModels(d)
		}
	}
	var stored registry.Deployment
	err = h.reg.Update(r.Context(), func(tx *registry.Tx) error {
		st := tx.State()
		cur, exists := st.Deployment(group, path)
		if !exists {
			return notFound("deployment", group+"/"+path)
		}
		want, err := pre.revision("deployment", group+"/"+path, true, cur.Revision, cur.Revision)
		if err != nil {
			return err
		}
		d, err := h.patched(cur, patch, want)
		if err != nil {
			return err
		}
		if err := h.checkReferences(st, d, &cur); err != nil {
			return err
		}
		stored, err = tx.PutDeployment(d)
		return err
	})
	if err != nil {
		return err
	}
	setETag(w, stored.Revision)
	return writeJSON(w, http.StatusOK, deploymentView(stored))
}

// patched is cur with the merge patch applied, read and checked as a PUT
// body is, at revision want.
func (h *Handler) patched(cur registry.Deployment, patch map[string]any, want uint64) (registry.Deployment, error) {
	doc, err := json.Marshal(deploymentView(cur))
	if err != nil {
		return registry.Deployment{}, fmt.Errorf("management: encode deployment: %w", err)
	}
	merged, err := mergeDocument(doc, patch)
	if err != nil {
		return registry.Deployment{}, err
	}
	in, err := h.decodeDeployment(merged, func(in *deploymentInput) []problem.FieldError {
		return in.checkIdentity(cur.Group, cur.Path)
	})
	if err != nil {
		return registry.Deployment{}, err
	}
	return in.record(want), nil
}

// deleteDeployment is DELETE /api/v1/deployments/{group}/{path}. Its
// endpoints answer 404 from then on.
func (h *Handler) deleteDeployment(w http.ResponseWriter, r *http.Request) error {
	group, path := r.PathValue("group"), r.PathValue("path")
	pre, err := parsePrecondition(r, 0, "")
	if err != nil {
		return err
	}
	err = h.reg.Update(r.Context(), func(tx *registry.Tx) error {
		cur, exists := tx.State().Deployment(group, path)
		if !exists {
			return notFound("deployment", group+"/"+path)
		}
		want, err := pre.revision("deployment", group+"/"+path, true, cur.Revision, registry.AnyRevision)
		if err != nil {
			return err
		}
		return tx.DeleteDeployment(group, path, want)
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// unavailableMessage is what a client is told of a model endpoint that
// cannot be served: the registry's message, which names no secret.
func unavailableMessage(err error) string {
	var e *problem.Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return "the endpoint's model cannot be served as asked"
}

// explainsItsSample scores the sample of an explained model endpoint's
// process (its version's verification rows, or a row of its inputs), and
// returns why it could not, "" when it could: a model whose file keeps it
// from explaining (a LightGBM model of linear trees, say), or whose
// contributions do not add up to the margins it computes (local accuracy,
// which [process.Explanation.Check] holds them to), is refused when it is
// deployed rather than at every request.
func explainsItsSample(p process.ProcessInfo) string {
	if len(p.Sample) == 0 {
		return ""
	}
	req, err := scoring.Decode(strings.NewReader(`{"data":`+string(p.Sample)+`}`), scoring.Limits{})
	if err != nil {
		return ""
	}
	if _, err := p.Process.Score(context.Background(), process.Input{Table: req.Table}); err != nil {
		var e *problem.Error
		var la *process.LocalAccuracyError
		if errors.As(err, &la) {
			of := ""
			if la.Group != "" {
				of = fmt.Sprintf(" of class %q", la.Group)
			}
			return fmt.Sprintf("the model's contributions do not add up to its predictions: for row %d of its sample, the bias plus the contributions%s is %v, but the model's margin is %v",
				la.Row+1, of, la.Sum, la.Margin)
		}
		if errors.As(err, &e) && e.Message != "" {
			return "the model cannot explain its predictions: " + e.Message
		}
		return "the model cannot explain its predictions"
	}
	return ""
}

// checkChallengers lists the challengers of model endpoint e, at p, that
// could not score beside its model: loaded as they would be served, each
// must answer the columns the endpoint's model answers. Challengers whose
// reference names nothing are in refs already.
func (h *Handler) checkChallengers(e registry.Endpoint, p string, refs map[string]string) []problem.FieldError {
	cs, err := h.reg.Snapshot().EndpointChallengers(e)
	if err != nil {
		return nil // the endpoint's own model is reported where it is checked
	}
	var fields []problem.FieldError
	for j, c := range cs {
		cp := p + "/challengers/" + strconv.Itoa(j) + "/model"
		if _, named := refs[cp]; named || c.Err == nil {
			continue
		}
		fields = append(fields, problem.FieldError{Pointer: cp, Message: unavailableMessage(c.Err)})
	}
	return fields
}
