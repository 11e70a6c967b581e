package management_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/tokens"
)

func loadDoc(t *testing.T, spec []byte) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(spec)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	return doc
}

// documented lists the document's operations as mux patterns.
func documented(doc *openapi3.T) []string {
	var out []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, method+" "+path)
		}
	}
	sort.Strings(out)
	return out
}

// TestOpenAPIDescribesExactlyTheRoutesServed compares the document with the
// routes in both directions: every route the management mux serves, the
// token routes and the scoring route are documented, and nothing else is.
func TestOpenAPIDescribesExactlyTheRoutesServed(t *testing.T) {
	f := newFixture(t)
	doc := loadDoc(t, f.handler.OpenAPI())
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi %q, want 3.0.3", doc.OpenAPI)
	}

	served := f.handler.Routes()
	served = append(served,
		"GET "+tokens.PathTokenService,
		"GET "+tokens.PathExchange,
		"GET "+tokens.PathJWKS,
		"POST "+management.DefaultScoringPrefix+"/{group}/api/v1/services/{path}/{alias}",
	)
	sort.Strings(served)
	if d := cmp.Diff(served, documented(doc)); d != "" {
		t.Errorf("routes served (-) and documented (+):\n%s", d)
	}

	// The token routes listed above are the ones the tokens handler serves.
	keys, err := tokens.NewKeySet(tokens.KeySetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := tokens.HashPassword("pw", 4)
	if err != nil {
		t.Fatal(err)
	}
	users, err := tokens.NewStaticUsers(tokens.User{Name: "u", PasswordHash: hash})
	if err != nil {
		t.Fatal(err)
	}
	th, err := tokens.NewService(tokens.ServiceConfig{Issuer: newIssuer(t, keys, nil), Users: users})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range th.Routes() {
		if !strings.Contains(strings.Join(served, "\n"), r) {
			t.Errorf("the tokens handler serves %s, which the comparison above leaves out", r)
		}
	}

	// Every operation says what it answers on error, in the one error shape.
	for _, op := range documented(doc) {
		method, path, _ := strings.Cut(op, " ")
		o := doc.Paths.Find(path).GetOperation(method)
		if o.Responses.Status(500) == nil {
			t.Errorf("%s documents no 500", op)
		}
		for code, rr := range o.Responses.Map() {
			if code[0] < '4' {
				continue
			}
			if s := rr.Value.Content.Get("application/json"); s == nil || s.Schema.Ref != "#/components/schemas/Error" {
				t.Errorf("%s %s is not documented as the Error schema", op, code)
			}
		}
	}
}

func TestOpenAPIServedWithConfiguredPrefixAndServer(t *testing.T) {
	tests := []struct {
		name        string
		cfg         management.Config
		scoringPath string
		server      string
	}{
		{"defaults", management.Config{}, "/webapi/{group}/api/v1/services/{path}/{alias}", "/"},
		{"prefix and base URL", management.Config{ScoringPrefix: "/score/v2", BaseURL: "https://public.example/hub"},
			"/score/v2/{group}/api/v1/services/{path}/{alias}", "https://public.example/hub"},
		{"root prefix", management.Config{ScoringPrefix: "/"}, "/{group}/api/v1/services/{path}/{alias}", "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, withConfig(tt.cfg))
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil)
			f.handler.ServeHTTP(rec, req)
			f.checkRecorded(t, req, rec)
			if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("answered %d %s", rec.Code, rec.Header().Get("Content-Type"))
			}
			if !bytes.Equal(rec.Body.Bytes(), f.handler.OpenAPI()) {
				t.Error("the document served is not Handler.OpenAPI()")
			}
			doc := loadDoc(t, rec.Body.Bytes())
			if doc.Paths.Value(tt.scoringPath) == nil || doc.Paths.Value(tt.scoringPath).Post == nil {
				t.Errorf("no POST %s in %v", tt.scoringPath, documented(doc))
			}
			if len(doc.Servers) != 1 || doc.Servers[0].URL != tt.server {
				t.Errorf("servers %v, want %s", doc.Servers, tt.server)
			}
		})
	}
}

// The conformance check the other tests rely on does catch a response the
// document does not allow.
func TestConformanceCatchesDrift(t *testing.T) {
	f := newFixture(t)
	c := newConformance(t, f.handler.OpenAPI(), nil)
	tests := []struct {
		name, method, path string
		status             int
		contentType, body  string
	}{
		{"undocumented status", "GET", "/api/v1/queues", 418, "application/json", `{"error":{"type":"teapot","message":"short"}}`},
		{"missing member", "GET", "/api/v1/queues/DEFAULT", 200, "application/json", `{"name":"DEFAULT"}`},
		{"extra member", "GET", "/health/live", 200, "application/json", `{"status":"up","uptime":3}`},
		{"error of another shape", "GET", "/api/v1/queues/x", 404, "application/json", `{"message":"not found"}`},
		{"not JSON for an unknown path", "GET", "/nowhere", 404, "text/plain", `404 page not found`},
		{"answer for an unknown path that is not an error", "GET", "/nowhere", 200, "application/json", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, f.srv.URL+tt.path, nil)
			res := &http.Response{StatusCode: tt.status, Header: http.Header{"Content-Type": {tt.contentType}},
				Body: io.NopCloser(strings.NewReader(tt.body))}
			if err := c.check(req, res, []byte(tt.body)); err == nil {
				t.Error("check passed a response the document does not allow")
			}
		})
	}
}

// The token routes answer as documented too.
func TestTokenRoutesConform(t *testing.T) {
	f := newFixture(t)
	get := func(path string, set func(*http.Request)) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
		set(req)
		res, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := get(tokens.PathTokenService, func(r *http.Request) { r.SetBasicAuth("root", adminPassword) }); res.StatusCode != 200 {
		t.Errorf("token service: %d", res.StatusCode)
	}
	if res := get(tokens.PathTokenService, func(r *http.Request) { r.SetBasicAuth("root", "wrong") }); res.StatusCode != 401 {
		t.Errorf("token service with a wrong password: %d", res.StatusCode)
	}
	if res := get(tokens.PathJWKS, func(*http.Request) {}); res.StatusCode != 200 {
		t.Errorf("JWKS: %d", res.StatusCode)
	}
}
