// Package urlpath holds the checks of paths shared by scorehub's handlers:
// the form of a request path, for the handlers that own an http.ServeMux
// (middleware.CleanPath, the management API, the token service), where a
// path the mux would answer with a redirect to its cleaned form is refused
// with a JSON 404 instead; and the form of a prefix a handler is mounted
// under.
package urlpath

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// Prefix checks a path prefix a handler is mounted under and returns it
// without a trailing slash, "" for the root. It must start with "/"; each
// segment must be non-empty, not a dot segment, and made of letters,
// digits, '.', '_', '-' and '~' only, so that it reads the same escaped
// and unescaped.
func Prefix(p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("prefix %q must start with /", p)
	}
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return "", nil
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." || strings.Trim(seg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~-") != "" {
			return "", fmt.Errorf("prefix %q: segment %q is empty, a dot segment, or has characters other than letters, digits, '.', '_', '-', '~'", p, seg)
		}
	}
	return p, nil
}

// Canonical reports whether p, a path as sent (see [Sent]), is empty
// or a path that path.Clean leaves as it is, a trailing slash allowed: it
// has no "." or ".." segment and no empty segment ("//").
func Canonical(p string) bool {
	if p == "" {
		return true
	}
	if p[0] == '/' {
		// What path.Clean would check, without building its answer: this
		// runs on every request.
		for rest := p[1:]; rest != ""; {
			seg, after, more := strings.Cut(rest, "/")
			if seg == "" || seg == "." || seg == ".." {
				return false
			}
			if !more {
				break
			}
			rest = after
		}
		return true
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// Sent returns u's path as the client sent it as far as slashes and dots
// go, which is what [Canonical] and the handlers' routing look at: the
// escaped path when the request escaped anything the default encoding would
// not, else the decoded path, which then escapes back to what was sent and
// holds no slash or dot that was sent escaped. The second result reports
// which: true for the escaped path.
func Sent(u *url.URL) (string, bool) {
	if u.RawPath == "" {
		return u.Path, false
	}
	return u.EscapedPath(), true
}

// Mount returns the path prefix that a handler in front of this one removed
// from r.URL, as http.StripPrefix does, without a trailing slash: "/ml" for
// a request sent to /ml/api/v1/endpoints and seen as /api/v1/endpoints. It
// is "" when nothing was removed, and when the request's URI does not end
// with its URL's path (a handler rewrote the path another way): links then
// start from the root, as without a prefix. A prefix that is not a valid
// [Prefix] is "" too, so what Mount returns is safe to write into a link.
func Mount(r *http.Request) string {
	uri := r.RequestURI
	if i := strings.IndexByte(uri, '?'); i >= 0 {
		uri = uri[:i]
	}
	if !strings.HasPrefix(uri, "/") {
		// An absolute-form request target: http://host/path.
		u, err := url.ParseRequestURI(uri)
		if err != nil {
			return ""
		}
		uri = u.EscapedPath()
	}
	p := r.URL.EscapedPath()
	if len(uri) <= len(p) || !strings.HasSuffix(uri, p) {
		return ""
	}
	m, err := Prefix(uri[:len(uri)-len(p)])
	if err != nil {
		return ""
	}
	return m
}
