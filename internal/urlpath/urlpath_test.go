package urlpath

import "testing"

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
