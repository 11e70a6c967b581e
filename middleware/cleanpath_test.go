package middleware_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/middleware"
)

func TestCleanPathRefusesDotSegmentsInsteadOfRedirecting(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/groups/{name}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "group ", r.PathValue("name"))
	})
	mux.HandleFunc("GET /ui/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ui") })
	h := middleware.CleanPath(mux)
	tests := []struct {
		target string
		status int
		body   string // for a success
	}{
		{"/api/v1/groups/a.b", 200, "group a.b"},
		{"/api/v1/groups/...", 200, "group ..."},
		{"/ui/", 200, "ui"},
		{"/ui", http.StatusTemporaryRedirect, ""}, // the mux's own redirect to the subtree stays
		{"/api/v1/groups/../../secret", 404, ""},
		{"/api/v1/groups/./a", 404, ""},
		{"/api/v1//groups/a", 404, ""},
		// Escaped, they stay inside the segment: the handler judges the name.
		{"/api/v1/groups/%2e%2e", 200, "group .."},
		{"/api/v1/groups/a%2F..%2F..", 200, "group a/../.."},
		{"/api/v1/groups/a/.", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.target, nil))
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			switch tt.status {
			case 200:
				if d := cmp.Diff(tt.body, rec.Body.String()); d != "" {
					t.Errorf("body (-want +got):\n%s", d)
				}
			case 404:
				var got struct{ Error struct{ Type string } }
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Error.Type != "not_found" ||
					rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Location") != "" {
					t.Errorf("answer %q %q, want a JSON not_found and no redirect", rec.Header(), rec.Body)
				}
			}
		})
	}
}

func ExampleCleanPath() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /files/{name}", func(w http.ResponseWriter, r *http.Request) {})
	h := middleware.CleanPath(mux)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/files/../admin", nil))
	fmt.Println(rec.Code, rec.Header().Get("Location") == "")
	// Output: 404 true
}
