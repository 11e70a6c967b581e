package middleware

import (
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/urlpath"
	"github.com/scorehub/scorehub/problem"
)

var errNotCanonical = httperr.New(problem.NotFound,
	"no route has this address: paths with '.' or '..' segments or '//' are not served")

// CleanPath refuses, with a JSON 404 not_found, a request whose path, as
// sent, is not in canonical form: one with "." or ".." segments or an
// empty segment ("//"). An http.ServeMux answers such a path with a
// redirect to its cleaned form, in HTML, which points the client at
// another resource than the one it named; behind CleanPath every answer is
// JSON and no path resolves to another. Put it outside the mux. Escaped
// dots and slashes (%2E%2E, %2F) are left to the handlers, which see them
// inside one segment, as the mux does. CONNECT requests, whose target is
// not a path, pass.
//
// The middleware is safe for concurrent use.
func CleanPath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			if p, _ := urlpath.Sent(r.URL); !urlpath.Canonical(p) {
				httperr.Write(w, r, nil, errNotCanonical)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
