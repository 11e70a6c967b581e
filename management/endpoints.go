package management

import (
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
)

// The states of an endpoint in GET /api/v1/endpoints.
const (
	stateEnabled     = "enabled"     // scoring requests are served
	stateDisabled    = "disabled"    // the deployment is disabled: 404 endpoint_disabled
	stateUnavailable = "unavailable" // the process is not in this server's catalog, or the model not loaded: 503
)

// endpointInfo is one scoring endpoint with what a client or the test page
// needs to call it. An endpoint runs a catalog process (process) or a
// model version (model, "churn@production"; process is then empty).
type endpointInfo struct {
	URL                string   `json:"url"`
	Group              string   `json:"group"`
	Path               string   `json:"path"`
	Alias              string   `json:"alias"`
	Process            string   `json:"process"`
	Model              string   `json:"model,omitzero"`
	ProcessDescription string   `json:"processDescription"`
	Description        string   `json:"description"`
	Queue              string   `json:"queue"`
	TimeoutMs          int64    `json:"timeoutMs"`
	State              string   `json:"state"`
	Auth               string   `json:"auth"`
	Schemes            []string `json:"schemes"`
}

// listEndpoints is GET /api/v1/endpoints: every endpoint of every
// deployment, sorted by group, path and then in the deployment's order,
// with its full scoring URL (see Config.BaseURL and Config.ScoringPrefix),
// its state, and its group's auth mode and credential kinds. Without a
// token it lists only the endpoints of public groups, which anyone may call
// anyway, so that the test page can offer them before anyone signs in; with
// one, those of the groups the caller may see (see viewer): the endpoints
// of a protected group are not enumerable by those it keeps out.
func (h *Handler) listEndpoints(w http.ResponseWriter, r *http.Request) error {
	snap := h.reg.Snapshot()
	st := snap.State()
	v := viewerOf(r, st)
	base := h.base(r) + h.prefix
	out := []endpointInfo{}
	for _, d := range st.Deployments() {
		auth := string(registry.Public)
		schemes := []string{}
		if g, ok := st.Group(d.Group); ok && g.Auth.Mode == registry.TokenRequired {
			auth = string(g.Auth.Mode)
			for _, s := range g.Auth.Accepted() {
				schemes = append(schemes, string(s))
			}
		}
		if !v.group(d.Group) {
			continue
		}
		for _, e := range d.Endpoints {
			info := endpointInfo{
				// Names are valid: none needs escaping in a path.
				URL:         base + "/" + d.Group + "/api/v1/services/" + d.Path + "/" + e.Alias,
				Group:       d.Group,
				Path:        d.Path,
				Alias:       e.Alias,
				Process:     e.Process,
				Model:       e.Model,
				Description: e.Description,
				Queue:       e.QueueName(),
				TimeoutMs:   e.Timeout.Milliseconds(),
				State:       stateEnabled,
				Auth:        auth,
				Schemes:     schemes,
			}
			p, err := snap.EndpointProcess(e)
			known := err == nil
			if known {
				info.ProcessDescription = p.Description
			}
			switch {
			case !d.Enabled:
				info.State = stateDisabled
			case !known:
				info.State = stateUnavailable
			}
			out = append(out, info)
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// getEndpointProcess is GET /api/v1/endpoints/{group}/{path}/{alias}/process:
// what the endpoint runs, as GET /api/v1/processes/{name} shows a catalog
// process: its description, columns and sample input, for a model endpoint
// those of the model version it names now. The test page starts a request
// body from the sample. 503 process_unavailable when the endpoint's
// process is not in this server's catalog; 404 for an endpoint of a group
// the caller may not see, as for one that does not exist.
func (h *Handler) getEndpointProcess(w http.ResponseWriter, r *http.Request) error {
	group, path, alias := r.PathValue("group"), r.PathValue("path"), r.PathValue("alias")
	snap := h.reg.Snapshot()
	d, ok := snap.State().Deployment(group, path)
	if !ok || !viewerOf(r, snap.State()).group(group) {
		return notFound("deployment", group+"/"+path)
	}
	e, ok := d.Endpoint(alias)
	if !ok {
		return httperr.Newf(problem.NotFound, "deployment %q has no endpoint %q", group+"/"+path, alias)
	}
	p, err := snap.EndpointProcess(e)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, processView(p))
}
