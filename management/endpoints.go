package management

import (
	"net/http"

	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry"
)

// The states of an endpoint in GET /api/v1/endpoints.
const (
	stateEnabled     = "enabled"     // scoring requests are served
	stateDisabled    = "disabled"    // the deployment is disabled: 404 endpoint_disabled
	stateUnavailable = "unavailable" // the process is not in this server's catalog: 503
)

// endpointInfo is one scoring endpoint with what a client or the test page
// needs to call it.
type endpointInfo struct {
	URL                string   `json:"url"`
	Group              string   `json:"group"`
	Path               string   `json:"path"`
	Alias              string   `json:"alias"`
	Process            string   `json:"process"`
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
// anyway, so that the test page can offer them before anyone signs in; the
// endpoints of protected groups are not enumerable without credentials.
func (h *Handler) listEndpoints(w http.ResponseWriter, r *http.Request) error {
	_, signedIn := middleware.ClaimsFrom(r.Context())
	st := h.reg.Snapshot().State()
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
		if !signedIn && auth != string(registry.Public) {
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
				Description: e.Description,
				Queue:       e.QueueName(),
				TimeoutMs:   e.Timeout.Milliseconds(),
				State:       stateEnabled,
				Auth:        auth,
				Schemes:     schemes,
			}
			p, known := h.reg.Catalog().Lookup(e.Process)
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
