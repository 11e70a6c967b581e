package management_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// timedOutBody is a request body whose read fails as a connection's does
// once the server's read timeout has passed.
type timedOutBody struct{ sent io.Reader }

func (b *timedOutBody) Read(p []byte) (int, error) {
	if n, _ := b.sent.Read(p); n > 0 {
		return n, nil
	}
	return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
}

func TestBodyCutOffByTheReadTimeoutIs408(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, method, path, contentType string
	}{
		{"create a group", http.MethodPost, "/api/v1/webapigroups", "application/json"},
		{"put a queue", http.MethodPut, "/api/v1/queues/slow", "application/json"},
		{"patch a deployment", http.MethodPatch, "/api/v1/deployments/DEFAULT/iris", "application/merge-patch+json"},
		// The Bearer check reads a form body for an access_token.
		{"form body", http.MethodPost, "/api/v1/webapigroups", "application/x-www-form-urlencoded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, &timedOutBody{sent: strings.NewReader(`{"name":"slo`)})
			req.Header.Set("Content-Type", tt.contentType)
			req.Header.Set("Authorization", "Bearer "+f.admin)
			rec := httptest.NewRecorder()
			f.handler.ServeHTTP(rec, req)
			var got struct{ Error struct{ Type string } }
			json.Unmarshal(rec.Body.Bytes(), &got)
			if rec.Code != http.StatusRequestTimeout || got.Error.Type != "request_timeout" {
				t.Errorf("answered %d %s, want 408 request_timeout", rec.Code, rec.Body)
			}
			if _, ok := f.reg.Snapshot().State().Group("slo"); ok {
				t.Errorf("a group was created from a body that never arrived")
			}
		})
	}
}

func TestDotSegmentsAreNotFoundNotRedirected(t *testing.T) {
	f := newFixture(t)
	for _, target := range []string{
		"/api/v1/webapigroups/..",
		"/api/v1/webapigroups/../../health/live",
		"/api/v1/deployments/DEFAULT/./iris",
		"/api/v1//webapigroups",
		"/api/v1/webapigroups/%2e%2e",
	} {
		t.Run(target, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, target, nil)
			req.Header.Set("Authorization", "Bearer "+f.admin)
			rec := httptest.NewRecorder()
			f.handler.ServeHTTP(rec, req)
			var got struct{ Error struct{ Type string } }
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusNotFound ||
				got.Error.Type != "not_found" || rec.Header().Get("Location") != "" {
				t.Errorf("answered %d %q %s, want a JSON 404 not_found without a redirect", rec.Code, rec.Header(), rec.Body)
			}
		})
	}
}
