package scorehub

import (
	"net/http"

	"github.com/scorehub/scorehub/internal/accept"
	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/urlpath"
	"github.com/scorehub/scorehub/problem"
)

// Where the management API serves its OpenAPI document, and the service
// its endpoint test pages.
const (
	openAPIPath = "/api/v1/openapi.json"
	uiPath      = "/ui/"
)

// errRoot is what an API client reading the server's root is told: there is
// nothing there, and where to look instead.
var errRoot = httperr.New(problem.NotFound,
	"no API route at /: the API is described at "+openAPIPath+" and the endpoint test page is at "+uiPath)

// root answers GET and HEAD / : a browser, which asks for HTML, is sent to
// the test page (303); any other client gets a JSON 404 naming the OpenAPI
// document and the page. Other methods go to next, which answers / as it
// answers any unknown route.
func root(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Accept")
		// A browser asks for HTML by name; curl sends */* and wants JSON.
		if accept.Names(r.Header.Values("Accept"), "text/html", "application/xhtml+xml") {
			http.Redirect(w, r, urlpath.Mount(r)+uiPath, http.StatusSeeOther)
			return
		}
		httperr.Write(w, r, nil, errRoot)
	})
}
