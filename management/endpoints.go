package management

import (
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
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
	snap := h.reg.Snapshot()
	_, e, _, err := endpointOf(r, snap.State())
	if err != nil {
		return err
	}
	p, err := snap.EndpointProcess(e)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, processView(p))
}

// endpointOf returns the endpoint the URL's {group}, {path} and {alias}
// name on st, with its deployment and its reference; a 404 for a
// deployment or an endpoint that does not exist, and for a deployment of
// a group the caller may not see, as for one that does not exist.
func endpointOf(r *http.Request, st *registry.State) (registry.Deployment, registry.Endpoint, process.EndpointRef, error) {
	ref := process.EndpointRef{Group: r.PathValue("group"), Path: r.PathValue("path"), Alias: r.PathValue("alias")}
	d, ok := st.Deployment(ref.Group, ref.Path)
	if !ok || !viewerOf(r, st).group(ref.Group) {
		return registry.Deployment{}, registry.Endpoint{}, ref, notFound("deployment", ref.Group+"/"+ref.Path)
	}
	e, ok := d.Endpoint(ref.Alias)
	if !ok {
		return registry.Deployment{}, registry.Endpoint{}, ref, httperr.Newf(problem.NotFound, "deployment %q has no endpoint %q", ref.Group+"/"+ref.Path, ref.Alias)
	}
	return d, e, ref, nil
}
