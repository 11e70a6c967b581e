package standalone

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestRoot: a browser opening the server's address lands on the test page;
// an API client reading / learns where the OpenAPI document and the page
// are, in the JSON every other error has.
func TestRoot(t *testing.T) {
	base, _ := startInProcess(t, io.Discard)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		name, method, accept string
		status               int
		location             string
	}{
		{"browser", http.MethodGet, "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8", http.StatusSeeOther, "/ui/"},
		{"browser HEAD", http.MethodHead, "text/html", http.StatusSeeOther, "/ui/"},
		{"curl", http.MethodGet, "*/*", http.StatusNotFound, ""},
		{"no Accept", http.MethodGet, "", http.StatusNotFound, ""},
		{"JSON client", http.MethodGet, "application/json", http.StatusNotFound, ""},
		{"HTML refused", http.MethodGet, "text/html;q=0, application/json", http.StatusNotFound, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base+"/", nil)
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
			if got := res.Header.Get("Vary"); !strings.Contains(got, "Accept") {
				t.Errorf("Vary %q, want it to name Accept: caches must not give a browser's redirect to curl", got)
			}
			if tc.location != "" {
				if got := res.Header.Get("Location"); got != tc.location {
					t.Errorf("Location %q, want %q", got, tc.location)
				}
				return
			}
			var body struct {
				Error struct{ Type, Message string }
			}
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
				t.Fatalf("the answer is not JSON: %v", err)
			}
			if body.Error.Type != "not_found" || !strings.Contains(body.Error.Message, "/api/v1/openapi.json") || !strings.Contains(body.Error.Message, "/ui/") {
				t.Errorf("error %+v, want not_found naming /api/v1/openapi.json and /ui/", body.Error)
			}
		})
	}

	// Only / itself: any other unknown route stays a plain 404, for a
	// browser too.
	req, _ := http.NewRequest(http.MethodGet, base+"/nothing-here", nil)
	req.Header.Set("Accept", "text/html")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /nothing-here as a browser: %d, want 404", res.StatusCode)
	}
}
