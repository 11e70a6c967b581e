package scoring

import (
	"mime"
	"net/url"
	"sort"
	"strings"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// isJSON reports whether a Content-Type header names JSON in UTF-8:
// application/json, with any parameters, a charset one naming UTF-8.
func isJSON(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8") || strings.EqualFold(cs, "utf8")
}

// parseMacros turns the query string into macros: each parameter once, with
// a non-empty name.
func parseMacros(raw string) (map[string]string, error) {
	if raw == "" {
		return nil, nil
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, wire.BadRequest(problem.InvalidRequest, "", "the query string is malformed").Wrap(err)
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names)
	macros := make(map[string]string, len(q))
	for _, name := range names {
		v := q[name]
		switch {
		case name == "":
			return nil, wire.BadRequest(problem.InvalidRequest, "", "a query parameter has no name")
		case len(v) > 1:
			return nil, wire.BadRequest(problem.DuplicateMacro, "", "the macro %q is given %d times; give it once", name, len(v))
		}
		macros[name] = v[0]
	}
	return macros, nil
}
