package scoring

import (
	"net/url"
	"strings"

	"github.com/scorehub/scorehub/registry"
)

// parseRoute splits a path /{group}/api/v1/services/{path}/{alias} and,
// when it is escaped, unescapes the names. It reports false for any other
// shape and for a name that is not valid once unescaped (so "%2F" and ".."
// never reach a lookup).
func parseRoute(p string, escaped bool) (group, path, alias string, ok bool) {
	rest, ok := strings.CutPrefix(p, "/")
	if !ok {
		return "", "", "", false
	}
	group, rest, ok = strings.Cut(rest, "/")
	if !ok {
		return "", "", "", false
	}
	if rest, ok = strings.CutPrefix(rest, "api/v1/services/"); !ok {
		return "", "", "", false
	}
	path, alias, ok = strings.Cut(rest, "/")
	if !ok || strings.IndexByte(alias, '/') >= 0 {
		return "", "", "", false
	}
	for _, s := range []*string{&group, &path, &alias} {
		if escaped && strings.IndexByte(*s, '%') >= 0 {
			u, err := url.PathUnescape(*s)
			if err != nil {
				return "", "", "", false
			}
			*s = u
		}
		if !registry.ValidName(*s) {
			return "", "", "", false
		}
	}
	return group, path, alias, true
}
