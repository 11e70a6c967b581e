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

// models returns whether v sees a model, by name: an administrator every
// model, anyone else one deployed on an endpoint of a group they see, or
// deployed nowhere, which belongs to no group. The deployments are read
// once, whatever the number of models asked about.
func (v viewer) models() func(name string) bool {
	if v.claims != nil && v.claims.Admin {
		return func(string) bool { return true }
	}
	seen := map[string]bool{} // deployed models: true where a group v sees deploys it
	for _, d := range v.st.Deployments() {
		visible := v.group(d.Group)
		for _, e := range d.Endpoints {
			if ref, err := registry.ParseModelRef(e.Model); e.Model != "" && err == nil {
				seen[ref.Model] = seen[ref.Model] || visible
			}
		}
	}
	return func(name string) bool {
		visible, deployed := seen[name]
		return visible || !deployed
	}
}
