package management_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/problem"
)

// fields returns the pointer and message of every field a 400 lists.
func (r response) fields() [][2]string {
	var out [][2]string
	list, _ := r.errorField("fields").([]any)
	for _, f := range list {
		m, _ := f.(map[string]any)
		p, _ := m["pointer"].(string)
		msg, _ := m["message"].(string)
		out = append(out, [2]string{p, msg})
	}
	return out
}

const nameRule = "must be a name: 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit"

func TestValidationListsEveryField(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		want                     [][2]string
	}{
		{
			name: "deployment", method: "POST", path: "/api/v1/deployments",
			body: `{"group":"bad name","path":"","colour":"red","endpoints":[
				{"alias":"","process":"x/y","timeoutMs":-1,"shape":1},
				{"alias":"a","process":"double","queue":"..","description":"ok"},
				{"alias":"a","process":"iris","timeoutMs":86400001}]}`,
			want: [][2]string{
				{"/group", nameRule},
				{"/path", "is required"},
				{"/endpoints/0/alias", "is required"},
				{"/endpoints/0/process", nameRule},
				{"/endpoints/0/timeoutMs", "must be at least 0"},
				{"/endpoints/1/queue", nameRule},
				{"/endpoints/2/timeoutMs", "must be at most 86400000"},
				{"/endpoints/2/alias", "appears more than once"},
				{"/colour", "is not a member of this object"},
				{"/endpoints/0/shape", "is not a member of this object"},
			},
		},
		{
			name: "group", method: "POST", path: "/api/v1/webapigroups",
			body: `{"name":"-x","auth":{"mode":"secret","groups":["", "ok", "tab\there"],"extra":true}}`,
			want: [][2]string{
				{"/name", nameRule},
				{"/auth/mode", "must be one of: public, token"},
				{"/auth/groups/0", "is required"},
				{"/auth/groups/2", "must not contain control characters"},
				{"/auth/groups", "must be empty unless mode is token: a public group cannot restrict user groups"},
				{"/auth/extra", "is not a member of this object"},
			},
		},
		{
			name: "queue", method: "PUT", path: "/api/v1/queues/q",
			body: `{"name":"other","maxConcurrent":0,"Running":3}`,
			want: [][2]string{
				{"/maxConcurrent", "must be at least 1"},
				{"/maxWaiting", "is required"},
				{"/Running", "is not a member of this object"},
				{"/name", `must be the name in the URL, "q"`},
			},
		},
		{
			name: "deployment moved by PUT", method: "PUT", path: "/api/v1/deployments/DEFAULT/d",
			body: `{"group":"other","path":"d2"}`,
			want: [][2]string{
				{"/group", `must be the one in the URL, "DEFAULT": a deployment cannot move`},
				{"/path", `must be the one in the URL, "d": a deployment cannot move`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			r := f.do(t, request{method: tt.method, path: tt.path, token: f.admin, body: tt.body})
			r.want(t, 400, string(problem.ValidationFailed))
			if d := cmp.Diff(tt.want, r.fields()); d != "" {
				t.Errorf("fields (-want +got):\n%s", d)
			}
			if got := r.errorField("pointer"); got != tt.want[0][0] {
				t.Errorf("pointer %v, want the first field's, %s", got, tt.want[0][0])
			}
		})
	}
}

func TestStrictJSON(t *testing.T) {
	tests := []struct {
		name, body string
		typ        string
		pointer    string
	}{
		{"empty", ``, string(problem.MalformedJSON), ""},
		{"not JSON", `name=x`, string(problem.MalformedJSON), ""},
		{"trailing comma", `{"name":"x",}`, string(problem.MalformedJSON), ""},
		{"comment", `{"name":"x" /* hi */}`, string(problem.MalformedJSON), ""},
		{"data after the object", `{"name":"x"} {}`, string(problem.MalformedJSON), ""},
		{"name twice", `{"name":"x","name":"y"}`, string(problem.MalformedJSON), "/name"},
		{"invalid UTF-8", "{\"name\":\"x\",\"description\":\"\xff\"}", string(problem.MalformedJSON), "/description"},
		{"wrong case", `{"Name":"x"}`, string(problem.ValidationFailed), "/name"},
		{"wrong type", `{"name":"x","description":7}`, string(problem.ValidationFailed), "/description"},
		{"array for an object", `{"name":"x","auth":[]}`, string(problem.ValidationFailed), "/auth"},
		{"not an object", `["x"]`, string(problem.ValidationFailed), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			r := f.do(t, request{method: "POST", path: "/api/v1/webapigroups", token: f.admin, body: tt.body, contentType: "application/json"})
			r.want(t, 400, tt.typ)
			if got, _ := r.errorField("pointer").(string); got != tt.pointer {
				t.Errorf("pointer %q, want %q (%s)", got, tt.pointer, r.body)
			}
		})
	}
}

func TestNamesCannotLeaveTheirSegment(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/api/v1/queues/%2E%2E", "", 404},
		{"GET", "/api/v1/deployments/DEFAULT/a%2Fb", "", 404},
		{"DELETE", "/api/v1/webapigroups/a%2F..%2Fb", "", 404},
		{"PUT", "/api/v1/queues/%2E%2E", `{"maxConcurrent":1,"maxWaiting":0}`, 400},
		{"PUT", "/api/v1/webapigroups/a%2Fb", `{}`, 400},
		{"PUT", "/api/v1/deployments/DEFAULT/a%20b", `{}`, 400},
		{"POST", "/api/v1/deployments", `{"group":"DEFAULT","path":"../x"}`, 400},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := f.do(t, request{method: tt.method, path: tt.path, token: f.admin, body: tt.body})
			if r.status != tt.status {
				t.Errorf("answered %d, want %d: %s", r.status, tt.status, r.body)
			}
		})
	}
	if n := len(f.reg.Snapshot().State().Deployments()) + len(f.reg.Snapshot().State().Queues()) + len(f.reg.Snapshot().State().Groups()); n != 2 {
		t.Errorf("%d records stored, want only the built-in DEFAULT group and queue", n)
	}
}
