package management

import (
	"net/http"

	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens"
)

// viewer is who reads the registry's records, and so which web API groups'
// resources they see: those of groups whose scoring policy lets them in
// (middleware.MaySee), every group for an administrator. A resource of a
// group the viewer may not see answers as one that does not exist (404),
// so that a protected group's endpoints, deployments and models cannot be
// enumerated by those it keeps out.
type viewer struct {
	claims *tokens.Claims // nil: no credentials
	st     *registry.State
}

// viewerOf returns the viewer of r, over the state st.
func viewerOf(r *http.Request, st *registry.State) viewer {
	c, _ := middleware.ClaimsFrom(r.Context())
	return viewer{claims: c, st: st}
}

// group reports whether v sees the web API group named name and its
// deployments. A group that does not exist has nothing to hide.
func (v viewer) group(name string) bool {
	g, ok := v.st.Group(name)
	if !ok {
		return v.claims != nil && v.claims.Admin
	}
	return middleware.MaySee(v.claims, g.Name, g.Auth)
}

// model reports whether v sees the model named name: an administrator
// every model, anyone else one deployed on an endpoint of a group they
// see, or deployed nowhere, which belongs to no group.
func (v viewer) model(name string) bool {
	if v.claims != nil && v.claims.Admin {
		return true
	}
	deployed := false
	for _, d := range v.st.Deployments() {
		for _, e := range d.Endpoints {
			ref, err := registry.ParseModelRef(e.Model)
			if e.Model == "" || err != nil || ref.Model != name {
				continue
			}
			if v.group(d.Group) {
				return true
			}
			deployed = true
		}
	}
	return !deployed
}
