package management_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry"
)

// benchFixture holds 100 deployments of 3 endpoints each.
func benchFixture(b *testing.B) *fixture {
	f := newFixture(b)
	for i := range 100 {
		f.putDeployment(b, registry.Deployment{Group: "DEFAULT", Path: "d" + strconv.Itoa(i), Enabled: true, Endpoints: []registry.Endpoint{
			{Alias: "a", Process: "double"}, {Alias: "b", Process: "iris"}, {Alias: "c", Process: "double"},
		}})
	}
	return f
}

// serve runs one request through the handler, token check included.
func (f *fixture) serve(b *testing.B, method, path, contentType, body string) {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+f.admin)
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	f.handler.ServeHTTP(w, r)
	if w.Code >= 300 {
		b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
	}
}

func BenchmarkGetDeployment(b *testing.B) {
	f := benchFixture(b)
	for b.Loop() {
		f.serve(b, http.MethodGet, "/api/v1/deployments/DEFAULT/d42", "", "")
	}
}

func BenchmarkListEndpoints300(b *testing.B) {
	f := benchFixture(b)
	for b.Loop() {
		f.serve(b, http.MethodGet, "/api/v1/endpoints", "", "")
	}
}

func BenchmarkListDeploymentsPage(b *testing.B) {
	f := benchFixture(b)
	for b.Loop() {
		f.serve(b, http.MethodGet, "/api/v1/deployments?page=2&size=20", "", "")
	}
}

func BenchmarkPutDeployment(b *testing.B) {
	f := benchFixture(b)
	body := `{"description":"bench","endpoints":[{"alias":"a","process":"double","timeoutMs":1000},{"alias":"b","process":"iris"}]}`
	for b.Loop() {
		f.serve(b, http.MethodPut, "/api/v1/deployments/DEFAULT/d42", "application/json", body)
	}
}

func BenchmarkPatchDeployment(b *testing.B) {
	f := benchFixture(b)
	for b.Loop() {
		f.serve(b, http.MethodPatch, "/api/v1/deployments/DEFAULT/d42", "application/merge-patch+json", `{"enabled":false}`)
	}
}
