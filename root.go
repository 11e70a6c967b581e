package scorehub

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

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
		if acceptsHTML(r.Header.Values("Accept")) {
			http.Redirect(w, r, urlpath.Mount(r)+uiPath, http.StatusSeeOther)
			return
		}
		httperr.Write(w, r, nil, errRoot)
	})
}

// acceptsHTML reports whether an Accept header names text/html with a
// quality above zero. A wildcard does not count: curl sends */*, and
// wants JSON.
func acceptsHTML(accept []string) bool {
	for _, line := range accept {
		for _, part := range strings.Split(line, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || (mt != "text/html" && mt != "application/xhtml+xml") {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}
