package management_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/tokens"
)

func TestNewFailsClosed(t *testing.T) {
	reg, err := registry.New(context.Background(), process.NewCatalog(), registry.NewMemStore(registry.StoreOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	queues, err := scoring.NewQueues(reg)
	if err != nil {
		t.Fatal(err)
	}
	verifier := verifierFunc(func(context.Context, string) (*tokens.Claims, error) { return nil, tokens.ErrSignature })
	valid := management.Config{Registry: reg, Queues: queues, Verifier: verifier}
	otherReg, err := registry.New(context.Background(), process.NewCatalog(), registry.NewMemStore(registry.StoreOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	defer otherReg.Close()
	otherQueues, err := scoring.NewQueues(otherReg)
	if err != nil {
		t.Fatal(err)
	}
	jobsElsewhere, err := scoring.NewJobs(scoring.JobsConfig{Registry: otherReg, Queues: otherQueues, Store: jobs.NewMemStore(registry.StoreOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	defer jobsElsewhere.Close()

	tests := []struct {
		name   string
		change func(*management.Config)
		want   string // in the error
	}{
		{"no registry", func(c *management.Config) { c.Registry = nil }, "Registry"},
		{"no queues", func(c *management.Config) { c.Queues = nil }, "Queues"},
		{"no verifier", func(c *management.Config) { c.Verifier = nil }, "Verifier"},
		{"queues of another registry", func(c *management.Config) { c.Queues = otherQueues }, "another registry"},
		{"jobs on other queues", func(c *management.Config) { c.Jobs = jobsElsewhere }, "other queues"},
		{"negative body limit", func(c *management.Config) { c.MaxBodyBytes = -1 }, "MaxBodyBytes"},
		{"negative model limit", func(c *management.Config) { c.MaxModelBytes = -1 }, "MaxModelBytes"},
		{"realm with a control character", func(c *management.Config) { c.Realm = "a\nb" }, "realm"},
		{"relative prefix", func(c *management.Config) { c.ScoringPrefix = "webapi" }, "must start with /"},
		{"dot segment in prefix", func(c *management.Config) { c.ScoringPrefix = "/a/../webapi" }, `".."`},
		{"space in prefix", func(c *management.Config) { c.ScoringPrefix = "/web api" }, "segment"},
		{"brace in prefix", func(c *management.Config) { c.ScoringPrefix = "/{group}" }, "segment"},
		{"base URL of another scheme", func(c *management.Config) { c.BaseURL = "ftp://scorehub.example" }, "http or https"},
		{"base URL without host", func(c *management.Config) { c.BaseURL = "https://" }, "no host"},
		{"base URL with query", func(c *management.Config) { c.BaseURL = "https://scorehub.example/?x=1" }, "only a scheme"},
		{"base URL with credentials", func(c *management.Config) { c.BaseURL = "https://u:p@scorehub.example" }, "only a scheme"},
		{"token route that is not one", func(c *management.Config) { c.TokenRoutes = []string{"GET /api/v1/queues"} }, "TokenRoutes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valid
			tt.change(&cfg)
			h, err := management.New(cfg)
			if err == nil || h != nil {
				t.Fatalf("New = %v, %v; want an error", h, err)
			}
			if !strings.HasPrefix(err.Error(), "management: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want one starting management: and naming %q", err, tt.want)
			}
		})
	}
	t.Run("valid", func(t *testing.T) {
		if _, err := management.New(valid); err != nil {
			t.Fatalf("New(%+v): %v", valid, err)
		}
	})
}

// seed stores what the routes of the auth matrix act on: a group "risk", a
// queue "batch", a deployment risk/churn, a model "churn" with two
// versions and the aliases production (which risk/churn's endpoint
// "model" names) and staging, and a model "spare" nothing uses.
func seed(t *testing.T, f *fixture) {
	t.Helper()
	f.putGroup(t, registry.Group{Name: "risk", Description: "Risk models"})
	f.putQueue(t, registry.Queue{Name: "batch", MaxConcurrent: 2, MaxWaiting: 10})
	f.putQueue(t, registry.Queue{Name: "spare", MaxConcurrent: 1, MaxWaiting: 0})
	f.addModel(t, "churn", linear(1), process.ModelMetadata{})
	f.addModel(t, "churn", linear(2), process.ModelMetadata{})
	f.addModel(t, "spare", linear(3), process.ModelMetadata{})
	f.putAlias(t, "churn", "production", 1)
	f.putAlias(t, "churn", "staging", 1)
	f.putAlias(t, "churn", "candidate", 1)
	f.putDeployment(t, registry.Deployment{Group: "risk", Path: "churn", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "score", Process: "double", Queue: "batch"}, {Alias: "model", Model: "churn@production",
			Challengers: []registry.Challenger{{Model: "churn@candidate", Mode: registry.ChallengeShadow}}}}})
}

// TestAuthMatrix sends every route with no token, an expired one, a
// forged one, a reader's and an administrator's: reads need a valid token,
// writes an administrator's, the probes and the document nothing.
func TestAuthMatrix(t *testing.T) {
	type call struct {
		path, body, contentType string
		admin                   int    // the status an administrator gets
		adminType               string // and its error type, for a route the fixture cannot answer 2xx
	}
	calls := map[string]call{
		"GET /health/live":         {path: "/health/live", admin: 200},
		"GET /health/ready":        {path: "/health/ready", admin: 200},
		"GET /api/v1/openapi.json": {path: "/api/v1/openapi.json", admin: 200},

		"GET /executions/queues":       {path: "/executions/queues", admin: 200},
		"GET /api/v1/queues":           {path: "/api/v1/queues", admin: 200},
		"GET /api/v1/queues/{name}":    {path: "/api/v1/queues/batch", admin: 200},
		"PUT /api/v1/queues/{name}":    {path: "/api/v1/queues/fast", body: `{"maxConcurrent":4,"maxWaiting":8}`, admin: 201},
		"DELETE /api/v1/queues/{name}": {path: "/api/v1/queues/spare", admin: 204},

		"GET /api/v1/webapigroups":            {path: "/api/v1/webapigroups", admin: 200},
		"POST /api/v1/webapigroups":           {path: "/api/v1/webapigroups", body: `{"name":"fraud"}`, admin: 201},
		"GET /api/v1/webapigroups/{group}":    {path: "/api/v1/webapigroups/risk", admin: 200},
		"PUT /api/v1/webapigroups/{group}":    {path: "/api/v1/webapigroups/risk", body: `{"description":"Credit risk"}`, admin: 200},
		"DELETE /api/v1/webapigroups/{group}": {path: "/api/v1/webapigroups/empty", admin: 204},

		"GET /api/v1/deployments":                {path: "/api/v1/deployments", admin: 200},
		"POST /api/v1/deployments":               {path: "/api/v1/deployments", body: `{"group":"risk","path":"limits","endpoints":[{"alias":"a","process":"double"}]}`, admin: 201},
		"GET /api/v1/deployments/{group}/{path}": {path: "/api/v1/deployments/risk/churn", admin: 200},
		"PUT /api/v1/deployments/{group}/{path}": {path: "/api/v1/deployments/risk/churn", body: `{"endpoints":[{"alias":"a","process":"iris"}]}`, admin: 200},
		"PATCH /api/v1/deployments/{group}/{path}": {path: "/api/v1/deployments/risk/churn", body: `{"enabled":false}`,
			contentType: "application/merge-patch+json", admin: 200},
		"DELETE /api/v1/deployments/{group}/{path}": {path: "/api/v1/deployments/risk/churn", admin: 204},

		"GET /api/v1/endpoints":                                    {path: "/api/v1/endpoints", admin: 200},
		"GET /api/v1/endpoints/{group}/{path}/{alias}/process":     {path: "/api/v1/endpoints/risk/churn/model/process", admin: 200},
		"GET /api/v1/endpoints/{group}/{path}/{alias}/challengers": {path: "/api/v1/endpoints/risk/churn/model/challengers", admin: 200},
		// The fixture's model has no reference: it was uploaded without verification rows.
		"GET /api/v1/endpoints/{group}/{path}/{alias}/drift": {path: "/api/v1/endpoints/risk/churn/model/drift", admin: 404, adminType: string(problem.NotFound)},
		"POST /api/v1/endpoints/{group}/{path}/{alias}/promote": {path: "/api/v1/endpoints/risk/churn/model/promote",
			body: `{"challenger":"churn@candidate"}`, admin: 200},

		"GET /api/v1/models":                                    {path: "/api/v1/models", admin: 200},
		"GET /api/v1/models/{name}":                             {path: "/api/v1/models/churn", admin: 200},
		"DELETE /api/v1/models/{name}":                          {path: "/api/v1/models/spare", admin: 204},
		"GET /api/v1/models/{name}/versions":                    {path: "/api/v1/models/churn/versions", admin: 200},
		"POST /api/v1/models/{name}/versions":                   {path: "/api/v1/models/churn/versions", body: linear(9), contentType: "application/octet-stream", admin: 201},
		"GET /api/v1/models/{name}/versions/{version}":          {path: "/api/v1/models/churn/versions/1", admin: 200},
		"DELETE /api/v1/models/{name}/versions/{version}":       {path: "/api/v1/models/churn/versions/2", admin: 204},
		"GET /api/v1/models/{name}/versions/{version}/artifact": {path: "/api/v1/models/churn/versions/1/artifact", admin: 200},
		"PUT /api/v1/models/{name}/versions/{version}/reference": {path: "/api/v1/models/churn/versions/1/reference",
			body: "age,income\n30,2\n40,\n", contentType: "text/csv", admin: 200},
		"GET /api/v1/models/{name}/aliases/{alias}":    {path: "/api/v1/models/churn/aliases/production", admin: 200},
		"PUT /api/v1/models/{name}/aliases/{alias}":    {path: "/api/v1/models/churn/aliases/canary", body: `{"version":2}`, admin: 201},
		"DELETE /api/v1/models/{name}/aliases/{alias}": {path: "/api/v1/models/churn/aliases/staging", admin: 204},
		"GET /api/v1/processes":                        {path: "/api/v1/processes", admin: 200},
		"GET /api/v1/processes/{name}":                 {path: "/api/v1/processes/iris", admin: 200},
	}
	public := map[string]bool{"GET /health/live": true, "GET /health/ready": true, "GET /api/v1/openapi.json": true}
	// Routes anyone may read, that check a token when one is sent.
	anyone := map[string]bool{"GET /api/v1/endpoints": true, "GET /api/v1/endpoints/{group}/{path}/{alias}/process": true}
	// Reads for administrators only.
	adminRead := map[string]bool{"GET /api/v1/models/{name}/versions/{version}/artifact": true}

	// The job routes have their own access rule, tested in jobs_test.go.
	routes := newFixture(t, withoutJobs()).handler.Routes()
	if len(routes) != len(calls) {
		t.Errorf("the handler serves %d routes, the matrix covers %d", len(routes), len(calls))
	}
	for _, pattern := range routes {
		c, ok := calls[pattern]
		if !ok {
			t.Errorf("route %s is not in the matrix", pattern)
			continue
		}
		method, _, _ := strings.Cut(pattern, " ")
		write := method != http.MethodGet || adminRead[pattern]
		t.Run(pattern, func(t *testing.T) {
			f := newFixture(t)
			seed(t, f)
			f.putGroup(t, registry.Group{Name: "empty"})
			tokens := []struct {
				name   string
				token  string
				status int
				typ    string
			}{
				{"no token", "", 401, string(problem.Unauthorized)},
				{"expired", f.expired, 401, string(problem.InvalidToken)},
				{"forged", f.forged, 401, string(problem.InvalidToken)},
				{"reader", f.reader, 200, ""},
				{"admin", f.admin, c.admin, c.adminType},
			}
			for _, tk := range tokens {
				status, typ := tk.status, tk.typ
				switch {
				case public[pattern], anyone[pattern] && tk.token == "":
					status, typ = c.admin, ""
				case tk.name == "reader" && write:
					status, typ = 403, string(problem.Forbidden)
				case tk.name == "reader":
					status, typ = c.admin, c.adminType
				}
				r := f.do(t, request{method: method, path: c.path, token: tk.token, body: c.body, contentType: c.contentType})
				if r.status != status || r.errorType() != typ {
					t.Errorf("%s: %d %q, want %d %q; body: %s", tk.name, r.status, r.errorType(), status, typ, r.body)
				}
				switch {
				case r.status == 401 && tk.token == "":
					if got, want := r.header.Get("WWW-Authenticate"), `Bearer realm="`+testRealm+`"`; got != want {
						t.Errorf("%s: WWW-Authenticate %q, want %q", tk.name, got, want)
					}
				case r.status == 401:
					if got := r.header.Get("WWW-Authenticate"); !strings.Contains(got, `error="invalid_token"`) {
						t.Errorf("%s: WWW-Authenticate %q, want error=\"invalid_token\"", tk.name, got)
					}
				}
				if !public[pattern] && r.header.Get("Cache-Control") != "no-store" {
					t.Errorf("%s: Cache-Control %q, want no-store", tk.name, r.header.Get("Cache-Control"))
				}
			}
		})
	}
}

func TestUnknownRoutesAndMethodsAnswerJSON(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		method, path string
		status       int
		typ, allow   string
	}{
		{"GET", "/api/v1/nothing", 404, "not_found", ""},
		{"GET", "/api/v1/queues/DEFAULT/extra", 404, "not_found", ""},
		{"POST", "/api/v1/queues", 405, string(problem.MethodNotAllowed), "GET, HEAD"},
		{"PATCH", "/api/v1/queues/DEFAULT", 405, string(problem.MethodNotAllowed), "GET, PUT, DELETE, HEAD"},
		{"DELETE", "/api/v1/deployments", 405, string(problem.MethodNotAllowed), "GET, POST, HEAD"},
		{"POST", "/health/live", 405, string(problem.MethodNotAllowed), "GET, HEAD"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := f.do(t, request{method: tt.method, path: tt.path, token: f.admin})
			r.want(t, tt.status, tt.typ)
			if got := r.header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow %q, want %q", got, tt.allow)
			}
		})
	}
}

func TestHeadAnswersLikeGet(t *testing.T) {
	f := newFixture(t)
	r := f.do(t, request{method: http.MethodHead, path: "/api/v1/queues/DEFAULT", token: f.admin})
	if r.status != 200 || r.header.Get("ETag") != `"1"` || len(r.body) != 0 {
		t.Errorf("HEAD answered %d ETag %q with %d body bytes, want 200 \"1\" and none", r.status, r.header.Get("ETag"), len(r.body))
	}
}

func TestEveryWriteIsLogged(t *testing.T) {
	f := newFixture(t)
	f.do(t, request{method: "PUT", path: "/api/v1/queues/fast", token: f.admin, body: `{"maxConcurrent":4,"maxWaiting":8}`}).want(t, 201, "")
	f.do(t, request{method: "DELETE", path: "/api/v1/queues/fast", token: f.reader}).want(t, 403, string(problem.Forbidden))
	f.do(t, request{method: "DELETE", path: "/api/v1/queues/DEFAULT", token: f.admin}).want(t, 409, "in_use")
	f.do(t, request{method: "POST", path: "/api/v1/webapigroups", body: `{"name":"x"}`}).want(t, 401, string(problem.Unauthorized))
	f.do(t, request{method: "GET", path: "/api/v1/queues", token: f.admin}).want(t, 200, "")

	var got []map[string]any
	for _, rec := range logRecords(t, f.logs, "management: write") {
		got = append(got, map[string]any{"subject": rec["subject"], "method": rec["method"], "route": rec["route"],
			"path": rec["path"], "status": rec["status"], "level": rec["level"]})
	}
	want := []map[string]any{
		{"subject": "root", "method": "PUT", "route": "PUT /api/v1/queues/{name}", "path": "/api/v1/queues/fast", "status": 201.0, "level": "INFO"},
		{"subject": "ann", "method": "DELETE", "route": "DELETE /api/v1/queues/{name}", "path": "/api/v1/queues/fast", "status": 403.0, "level": "INFO"},
		{"subject": "root", "method": "DELETE", "route": "DELETE /api/v1/queues/{name}", "path": "/api/v1/queues/DEFAULT", "status": 409.0, "level": "INFO"},
		{"subject": "", "method": "POST", "route": "POST /api/v1/webapigroups", "path": "/api/v1/webapigroups", "status": 401.0, "level": "INFO"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("write log records (-want +got):\n%s", d)
	}
}

func TestBodyLimit(t *testing.T) {
	big := `{"name":"x","description":"` + strings.Repeat("a", management.DefaultMaxBodyBytes) + `"}`
	t.Run("default 1 MiB", func(t *testing.T) {
		f := newFixture(t)
		f.do(t, request{method: "POST", path: "/api/v1/webapigroups", token: f.admin, body: big}).want(t, 413, "body_too_large")
	})
	t.Run("configured", func(t *testing.T) {
		f := newFixture(t, withConfig(management.Config{MaxBodyBytes: 64}))
		f.do(t, request{method: "POST", path: "/api/v1/webapigroups", token: f.admin,
			body: `{"name":"x","description":"` + strings.Repeat("a", 64) + `"}`}).want(t, 413, "body_too_large")
		f.do(t, request{method: "POST", path: "/api/v1/webapigroups", token: f.admin, body: `{"name":"x"}`}).want(t, 201, "")
	})
	t.Run("refused before the body for a non-admin", func(t *testing.T) {
		f := newFixture(t)
		f.do(t, request{method: "POST", path: "/api/v1/webapigroups", token: f.reader, body: big}).want(t, 403, string(problem.Forbidden))
	})
}

func TestContentType(t *testing.T) {
	tests := []struct {
		name, method, path, contentType string
		status                          int
	}{
		{"POST as text", "POST", "/api/v1/webapigroups", "text/plain", 415},
		{"POST with UTF-8 charset", "POST", "/api/v1/webapigroups", "application/json; charset=utf-8", 201},
		{"POST in Latin-1", "POST", "/api/v1/webapigroups", "application/json; charset=iso-8859-1", 415},
		{"POST as merge patch", "POST", "/api/v1/webapigroups", "application/merge-patch+json", 415},
		{"PUT as form", "PUT", "/api/v1/queues/q", "application/x-www-form-urlencoded", 415},
		{"PATCH as JSON", "PATCH", "/api/v1/deployments/DEFAULT/d", "application/json", 415},
		{"PATCH as merge patch", "PATCH", "/api/v1/deployments/DEFAULT/d", "application/merge-patch+json", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "d"})
			body := `{"name":"g"}`
			switch tt.method {
			case "PUT":
				body = `{"maxConcurrent":1,"maxWaiting":1}`
			case "PATCH":
				body = `{"description":"d"}`
			}
			r := f.do(t, request{method: tt.method, path: tt.path, token: f.admin, body: body, contentType: tt.contentType})
			if r.status != tt.status {
				t.Fatalf("answered %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.status == 415 && r.errorType() != string(problem.UnsupportedMediaType) {
				t.Errorf("type %q, want %q", r.errorType(), problem.UnsupportedMediaType)
			}
			if msg, _ := r.errorField("message").(string); tt.status == 415 && !strings.HasSuffix(msg, "; got "+tt.contentType) {
				t.Errorf("message %q does not name the Content-Type sent, %s", msg, tt.contentType)
			}
			if tt.method == "PATCH" && tt.status == 415 && r.header.Get("Accept-Patch") != "application/merge-patch+json" {
				t.Errorf("Accept-Patch %q, want application/merge-patch+json", r.header.Get("Accept-Patch"))
			}
		})
	}
}
