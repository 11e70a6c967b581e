package management_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/registry"
)

// seedEndpoints stores four deployments: one enabled in a token group that
// takes every kind of credential, one in a token group that takes API
// tokens and Basic only, one disabled, and one whose process the catalog
// lacks.
func seedEndpoints(t *testing.T, f *fixture) {
	f.putGroup(t, registry.Group{Name: "risk", Auth: registry.AuthPolicy{Mode: registry.TokenRequired}})
	f.putGroup(t, registry.Group{Name: "kiosk", Auth: registry.AuthPolicy{Mode: registry.TokenRequired,
		Schemes: []registry.Scheme{registry.SchemeAPIToken, registry.SchemeBasic}}})
	f.putDeployment(t, registry.Deployment{Group: "kiosk", Path: "shop", Enabled: true, Endpoints: []registry.Endpoint{{Alias: "a", Process: "double"}}})
	f.putQueue(t, registry.Queue{Name: "batch", MaxConcurrent: 1, MaxWaiting: 1})
	f.putDeployment(t, registry.Deployment{Group: "risk", Path: "churn", Enabled: true, Endpoints: []registry.Endpoint{
		{Alias: "predict", Process: "iris", Queue: "batch", Timeout: 2 * time.Second, Description: "Species"},
		{Alias: "double", Process: "double"},
	}})
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "off", Enabled: false, Endpoints: []registry.Endpoint{{Alias: "a", Process: "double"}}})
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "orphan", Enabled: true, Endpoints: []registry.Endpoint{{Alias: "a", Process: "retired"}}})
}

func TestEndpointsList(t *testing.T) {
	f := newFixture(t)
	seedEndpoints(t, f)
	r := f.do(t, request{method: "GET", path: "/api/v1/endpoints", token: f.reader})
	r.want(t, 200, "")
	var got []map[string]any
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	base := f.srv.URL + "/webapi"
	want := []map[string]any{
		{"url": base + "/DEFAULT/api/v1/services/off/a", "group": "DEFAULT", "path": "off", "alias": "a", "process": "double",
			"processDescription": "Doubles x.", "description": "", "queue": "DEFAULT", "timeoutMs": 0.0, "state": "disabled", "auth": "public", "schemes": []any{}},
		{"url": base + "/DEFAULT/api/v1/services/orphan/a", "group": "DEFAULT", "path": "orphan", "alias": "a", "process": "retired",
			"processDescription": "", "description": "", "queue": "DEFAULT", "timeoutMs": 0.0, "state": "unavailable", "auth": "public", "schemes": []any{}},
		{"url": base + "/kiosk/api/v1/services/shop/a", "group": "kiosk", "path": "shop", "alias": "a", "process": "double",
			"processDescription": "Doubles x.", "description": "", "queue": "DEFAULT", "timeoutMs": 0.0, "state": "enabled", "auth": "token", "schemes": []any{"basic", "apitoken"}},
		{"url": base + "/risk/api/v1/services/churn/predict", "group": "risk", "path": "churn", "alias": "predict", "process": "iris",
			"processDescription": irisDescription(t, f), "description": "Species", "queue": "batch", "timeoutMs": 2000.0, "state": "enabled", "auth": "token", "schemes": []any{"basic", "apitoken", "bearer"}},
		{"url": base + "/risk/api/v1/services/churn/double", "group": "risk", "path": "churn", "alias": "double", "process": "double",
			"processDescription": "Doubles x.", "description": "", "queue": "DEFAULT", "timeoutMs": 0.0, "state": "enabled", "auth": "token", "schemes": []any{"basic", "apitoken", "bearer"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("endpoints (-want +got):\n%s", d)
	}

	// The URLs it lists are where scoring answers.
	res := f.do(t, request{method: "POST", path: strings.TrimPrefix(got[4]["url"].(string), f.srv.URL), token: f.reader, body: `{"data":[{"x":2}]}`})
	res.want(t, 200, "")
}

// Without a token the list holds the endpoints of public groups only:
// anyone may call those, and the test page offers them before anyone signs
// in. A protected group's endpoints are not enumerable without credentials,
// and a token that is sent is checked, not ignored.
func TestEndpointsListWithoutAToken(t *testing.T) {
	f := newFixture(t)
	seedEndpoints(t, f)
	r := f.do(t, request{method: "GET", path: "/api/v1/endpoints"})
	r.want(t, 200, "")
	var got []struct{ Group, Path, Auth string }
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	want := []struct{ Group, Path, Auth string }{{"DEFAULT", "off", "public"}, {"DEFAULT", "orphan", "public"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("endpoints without a token (-want +got):\n%s", d)
	}
	if cc, vary := r.header.Get("Cache-Control"), r.header.Values("Vary"); cc != "no-store" || !strings.Contains(strings.Join(vary, ","), "Authorization") {
		t.Errorf("Cache-Control %q, Vary %q: a cache must not hand the anonymous list to a signed-in client or the reverse", cc, vary)
	}
	for _, tc := range []struct{ name, token string }{{"expired", f.expired}, {"forged", f.forged}} {
		if r := f.do(t, request{method: "GET", path: "/api/v1/endpoints", token: tc.token}); r.status != http.StatusUnauthorized {
			t.Errorf("%s token: %d, want 401: a token sent is never ignored", tc.name, r.status)
		}
	}
	// A query is not credentials, unless it carries a token, which is
	// refused wherever it is sent.
	if r := f.do(t, request{method: "GET", path: "/api/v1/endpoints?size=0"}); r.status != http.StatusOK {
		t.Errorf("a query without a token: %d, want 200 as without it", r.status)
	}
	if r := f.do(t, request{method: "GET", path: "/api/v1/endpoints?access_token=" + f.reader}); r.status != http.StatusBadRequest {
		t.Errorf("a token in the query: %d, want 400", r.status)
	}
}

// Without a token, what an endpoint of a public group runs is shown, so
// that the test page starts an anonymous visitor from its sample; one of a
// protected group answers as one that does not exist.
func TestEndpointProcessWithoutAToken(t *testing.T) {
	f := newFixture(t)
	seedEndpoints(t, f)
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "open", Enabled: true, Endpoints: []registry.Endpoint{{Alias: "a", Process: "iris"}}})
	r := f.do(t, request{method: "GET", path: "/api/v1/endpoints/DEFAULT/open/a/process"})
	r.want(t, 200, "")
	if rows, _ := r.json["sample"].([]any); len(rows) == 0 {
		t.Errorf("the public endpoint's process has no sample: %s", r.body)
	}
	if cc, vary := r.header.Get("Cache-Control"), r.header.Values("Vary"); cc != "no-store" || !strings.Contains(strings.Join(vary, ","), "Authorization") {
		t.Errorf("Cache-Control %q, Vary %q: a cache must not hand one visitor's answer to another", cc, vary)
	}
	for _, path := range []string{"/api/v1/endpoints/kiosk/shop/a/process", "/api/v1/endpoints/risk/churn/predict/process", "/api/v1/endpoints/DEFAULT/none/a/process"} {
		f.do(t, request{method: "GET", path: path}).want(t, 404, "not_found")
	}
	f.do(t, request{method: "GET", path: "/api/v1/endpoints/risk/churn/predict/process", token: f.reader}).want(t, 200, "")
	for _, tc := range []struct{ name, token string }{{"expired", f.expired}, {"forged", f.forged}} {
		if r := f.do(t, request{method: "GET", path: "/api/v1/endpoints/DEFAULT/open/a/process", token: tc.token}); r.status != http.StatusUnauthorized {
			t.Errorf("%s token: %d, want 401: a token sent is never ignored", tc.name, r.status)
		}
	}
}

func irisDescription(t *testing.T, f *fixture) string {
	p, ok := f.reg.Catalog().Lookup("iris")
	if !ok {
		t.Fatal("no iris process")
	}
	return p.Description
}

// The scoring URL's base is the configured one, or the request's own
// scheme and host.
func TestEndpointURLs(t *testing.T) {
	tests := []struct {
		name    string
		cfg     management.Config
		target  string // the request's URL; https means it came over TLS
		wantURL string
	}{
		{"from the request", management.Config{}, "http://scoring.test:8080/api/v1/endpoints",
			"http://scoring.test:8080/webapi/DEFAULT/api/v1/services/d/a"},
		{"over TLS", management.Config{}, "https://scoring.test/api/v1/endpoints",
			"https://scoring.test/webapi/DEFAULT/api/v1/services/d/a"},
		{"prefix", management.Config{ScoringPrefix: "/score/v2/"}, "http://scoring.test/api/v1/endpoints",
			"http://scoring.test/score/v2/DEFAULT/api/v1/services/d/a"},
		{"root prefix", management.Config{ScoringPrefix: "/"}, "http://scoring.test/api/v1/endpoints",
			"http://scoring.test/DEFAULT/api/v1/services/d/a"},
		{"base URL", management.Config{BaseURL: "https://public.example/hub/"}, "http://10.0.0.7:8080/api/v1/endpoints",
			"https://public.example/hub/webapi/DEFAULT/api/v1/services/d/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, withConfig(tt.cfg))
			f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "d", Enabled: true, Endpoints: []registry.Endpoint{{Alias: "a", Process: "double"}}})
			req := httptest.NewRequest(http.MethodGet, tt.target, nil)
			req.Header.Set("Authorization", "Bearer "+f.reader)
			rec := httptest.NewRecorder()
			f.handler.ServeHTTP(rec, req)
			var got []struct{ URL string }
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 || len(got) != 1 {
				t.Fatalf("answered %d %s (%v)", rec.Code, rec.Body, err)
			}
			if got[0].URL != tt.wantURL {
				t.Errorf("url %q, want %q", got[0].URL, tt.wantURL)
			}
		})
	}
}
