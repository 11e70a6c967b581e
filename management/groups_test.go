package management_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
)

func TestGroupLifecycle(t *testing.T) {
	f := newFixture(t)
	admin := func(method, path, body string, header map[string]string) response {
		return f.do(t, request{method: method, path: path, token: f.admin, body: body, header: header})
	}

	r := admin("POST", "/api/v1/webapigroups", `{"name":"risk","description":"Risk models","auth":{"mode":"token","groups":["analysts"]}}`, nil)
	r.want(t, 201, "")
	if got := r.header.Get("Location"); got != "webapigroups/risk" {
		t.Errorf("Location %q, want webapigroups/risk (relative to the request)", got)
	}
	if r.header.Get("ETag") != `"1"` {
		t.Errorf("ETag %q, want \"1\"", r.header.Get("ETag"))
	}
	admin("POST", "/api/v1/webapigroups", `{"name":"risk"}`, nil).want(t, 409, "already_exists")
	admin("POST", "/api/v1/webapigroups", `{"name":"fraud","revision":4}`, nil).want(t, 400, "validation_failed")

	r = f.do(t, request{method: "GET", path: "/api/v1/webapigroups/risk", token: f.reader})
	r.want(t, 200, "")
	want := map[string]any{"name": "risk", "description": "Risk models", "auth": map[string]any{"mode": "token", "groups": []any{"analysts"}, "schemes": []any{"basic", "apitoken", "bearer"}}, "revision": 1.0}
	got := map[string]any{"name": r.json["name"], "description": r.json["description"], "auth": r.json["auth"], "revision": r.json["revision"]}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GET (-want +got):\n%s", d)
	}

	// PUT replaces: an absent auth is public, with no user groups.
	r = admin("PUT", "/api/v1/webapigroups/risk", `{"description":"Credit risk"}`, map[string]string{"If-Match": `"1"`})
	r.want(t, 200, "")
	if d := cmp.Diff(map[string]any{"mode": "public", "groups": []any{}, "schemes": []any{}}, r.json["auth"]); d != "" {
		t.Errorf("auth after PUT (-want +got):\n%s", d)
	}
	admin("PUT", "/api/v1/webapigroups/risk", `{"description":"x"}`, map[string]string{"If-Match": `"1"`}).want(t, 412, "precondition_failed")
	admin("PUT", "/api/v1/webapigroups/new", `{}`, map[string]string{"If-Match": `*`}).want(t, 412, "precondition_failed")
	admin("PUT", "/api/v1/webapigroups/new", `{}`, nil).want(t, 201, "")

	r = f.do(t, request{method: "GET", path: "/api/v1/webapigroups", token: f.reader})
	var names []string
	for _, g := range r.list {
		names = append(names, g.(map[string]any)["name"].(string))
	}
	if d := cmp.Diff([]string{"DEFAULT", "new", "risk"}, names); d != "" {
		t.Errorf("list (-want +got):\n%s", d)
	}

	f.putDeployment(t, registry.Deployment{Group: "risk", Path: "churn"})
	// The client is told what it sent, never a Go error chain.
	for path, msg := range map[string]string{
		"/api/v1/webapigroups/risk":    `group "risk" still has deployments (churn)`,
		"/api/v1/webapigroups/DEFAULT": `group "DEFAULT" is built in and cannot be deleted`,
	} {
		r := admin("DELETE", path, "", nil)
		r.want(t, 409, "in_use")
		if got := r.errorField("message"); got != msg {
			t.Errorf("DELETE %s: message %q, want %q", path, got, msg)
		}
	}
	admin("DELETE", "/api/v1/deployments/risk/churn", "", nil).want(t, 204, "")
	admin("DELETE", "/api/v1/webapigroups/risk", "", nil).want(t, 204, "")
	admin("GET", "/api/v1/webapigroups/risk", "", nil).want(t, 404, "not_found")
}

// A group's auth policy applies to scoring from the write on.
func TestGroupPolicyIsLiveForScoring(t *testing.T) {
	f := newFixture(t)
	f.putGroup(t, registry.Group{Name: "risk"})
	f.putDeployment(t, registry.Deployment{Group: "risk", Path: "d", Enabled: true, Endpoints: []registry.Endpoint{{Alias: "a", Process: "double"}}})
	scoreAs := func(token string) response {
		return f.do(t, request{method: "POST", path: "/webapi/risk/api/v1/services/d/a", token: token, body: `{"data":[{"x":1}]}`})
	}
	scoreAs("").want(t, 200, "")

	f.do(t, request{method: "PUT", path: "/api/v1/webapigroups/risk", token: f.admin,
		body: `{"auth":{"mode":"token","groups":["analysts"]}}`}).want(t, 200, "")
	scoreAs("").want(t, 401, string(problem.Unauthorized))
	scoreAs(f.admin).want(t, 403, string(problem.Forbidden)) // an administrator is in no user group
	scoreAs(f.reader).want(t, 200, "")
}

func TestGroupCredentialKinds(t *testing.T) {
	f := newFixture(t)
	admin := func(method, path, body string) response {
		return f.do(t, request{method: method, path: path, token: f.admin, body: body})
	}
	r := admin("POST", "/api/v1/webapigroups", `{"name":"basic-only","auth":{"mode":"token","schemes":["basic"]}}`)
	r.want(t, 201, "")
	if d := cmp.Diff([]any{"basic"}, r.json["auth"].(map[string]any)["schemes"]); d != "" {
		t.Errorf("schemes (-want +got):\n%s", d)
	}
	g, _ := f.reg.Snapshot().State().Group("basic-only")
	if !g.Auth.Accepts(registry.SchemeBasic) || g.Auth.Accepts(registry.SchemeBearer) {
		t.Errorf("stored policy %+v: want Basic accepted and Bearer refused", g.Auth)
	}

	for _, c := range []struct{ body, pointer string }{
		{`{"name":"g1","auth":{"mode":"public","schemes":["basic"]}}`, "/auth/schemes"},
		{`{"name":"g2","auth":{"mode":"token","schemes":["digest"]}}`, "/auth/schemes/0"},
		{`{"name":"g3","auth":{"mode":"token","schemes":["basic","basic"]}}`, "/auth/schemes"},
	} {
		r := admin("POST", "/api/v1/webapigroups", c.body)
		r.want(t, 400, "validation_failed")
		if fs := r.fields(); len(fs) != 1 || fs[0][0] != c.pointer {
			t.Errorf("%s: fields %q, want one at %s", c.body, fs, c.pointer)
		}
	}
}
