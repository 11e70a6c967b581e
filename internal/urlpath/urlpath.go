// Package urlpath holds the one check of a request path's form shared by
// the handlers that own an http.ServeMux (middleware.CleanPath, the
// management API, the token service): a path the mux would answer with a
// redirect to its cleaned form is refused with a JSON 404 instead.
package urlpath

import (
	"path"
	"strings"
)

// Canonical reports whether p, a path as sent (URL.EscapedPath), is empty
// or a path that path.Clean leaves as it is, a trailing slash allowed: it
// has no "." or ".." segment and no empty segment ("//").
func Canonical(p string) bool {
	if p == "" {
		return true
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}
