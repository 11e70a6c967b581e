package urlpath

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	for p, want := range map[string]bool{
		"":                         true,
		"/":                        true,
		"/api/v1/groups":           true,
		"/api/v1/groups/":          true,
		"/api/v1/%2E%2E/x":         true, // escaped: one segment, the handlers' business
		"/api/v1/../x":             false,
		"/api/v1/./groups":         false,
		"/api//v1":                 false,
		"/api/v1/groups/..":        false,
		"//":                       false,
		"/webapi/DEFAULT/api/v1/.": false,
	} {
		if got := Canonical(p); got != want {
			t.Errorf("Canonical(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestPrefix(t *testing.T) {
	for p, want := range map[string]string{
		"/":             "",
		"/webapi":       "/webapi",
		"/webapi/":      "/webapi",
		"/a/b.c_d-e~f/": "/a/b.c_d-e~f",
	} {
		if got, err := Prefix(p); err != nil || got != want {
			t.Errorf("Prefix(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	for _, p := range []string{"", "webapi", "//", "/a//b", "/a/./b", "/a/..", "/a b", "/%2F", "/ä", "/a?b", "/a#b"} {
		if got, err := Prefix(p); err == nil {
			t.Errorf("Prefix(%q) = %q, want an error", p, got)
		}
	}
}

// TestCanonicalAgreesWithClean checks the scan against path.Clean, which
// it stands in for, on paths built from the parts that matter.
func TestCanonicalAgreesWithClean(t *testing.T) {
	parts := []string{"/", "a", ".", "..", "...", ".a", "%2E", "//"}
	var build func(prefix string, depth int)
	build = func(prefix string, depth int) {
		if want := slowCanonical(prefix); Canonical(prefix) != want {
			t.Errorf("Canonical(%q) = %v, path.Clean says %v", prefix, !want, want)
		}
		if depth == 0 {
			return
		}
		for _, p := range parts {
			build(prefix+p, depth-1)
		}
	}
	build("/", 5)
}

func slowCanonical(p string) bool {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

func TestSent(t *testing.T) {
	for target, want := range map[string]struct {
		path    string
		escaped bool
	}{
		"/a/b":          {"/a/b", false},
		"/a%20b":        {"/a b", false}, // escapes back to what was sent
		"/a%2Fb":        {"/a%2Fb", true},
		"/a/%2E%2E/b":   {"/a/%2E%2E/b", true},
		"/webap%69/x":   {"/webap%69/x", true},
		"/a%25b":        {"/a%b", false},
		"/%E2%82%AC/..": {"/€/..", false},
	} {
		u, err := url.ParseRequestURI(target)
		if err != nil {
			t.Fatal(err)
		}
		if p, esc := Sent(u); p != want.path || esc != want.escaped {
			t.Errorf("Sent(%q) = %q, %v; want %q, %v", target, p, esc, want.path, want.escaped)
		}
	}
}

func TestMount(t *testing.T) {
	for _, tt := range []struct {
		name, strip, target, want string
	}{
		{"not stripped", "", "/api/v1/endpoints", ""},
		{"stripped", "/ml", "/ml/api/v1/endpoints", "/ml"},
		{"stripped with its slash", "/ml/", "/ml/api/v1/endpoints", "/ml"},
		{"two segments", "/a/b", "/a/b/ui/?x=1", "/a/b"},
		{"the mount itself", "/ml", "/ml", "/ml"},
		{"absolute form", "/ml", "http://example.com/ml/api/v1/endpoints", "/ml"},
		{"escaped rest", "/ml", "/ml/api/v1/models/a%20b", "/ml"},
		{"a prefix unfit for a link", "/m'l", "/m'l/x", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			var h http.Handler = http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = Mount(r) })
			if tt.strip != "" {
				h = http.StripPrefix(tt.strip, h)
			}
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, tt.target, nil))
			if got != tt.want {
				t.Errorf("Mount of %s stripped of %q = %q, want %q", tt.target, tt.strip, got, tt.want)
			}
		})
	}
}
