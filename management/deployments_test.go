package management_test

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
)

const mergePatch = "application/merge-patch+json"

func TestDeploymentLifecycle(t *testing.T) {
	f := newFixture(t)
	admin := func(method, path, body string, header map[string]string) response {
		ct := ""
		if method == "PATCH" {
			ct = mergePatch
		}
		return f.do(t, request{method: method, path: path, token: f.admin, body: body, contentType: ct, header: header})
	}

	r := admin("POST", "/api/v1/deployments", `{"group":"DEFAULT","path":"churn","description":"Churn",
		"endpoints":[{"alias":"predict","process":"double","timeoutMs":1500,"description":"doubles"}]}`, nil)
	r.want(t, 201, "")
	if r.header.Get("Location") != "deployments/DEFAULT/churn" || r.header.Get("ETag") != `"1"` {
		t.Errorf("Location %q ETag %q", r.header.Get("Location"), r.header.Get("ETag"))
	}
	wantEndpoints := []any{map[string]any{"alias": "predict", "process": "double", "queue": "DEFAULT", "timeoutMs": 1500.0, "description": "doubles"}}
	if d := cmp.Diff(wantEndpoints, r.json["endpoints"]); d != "" {
		t.Errorf("endpoints (-want +got):\n%s", d)
	}
	if r.json["enabled"] != true {
		t.Errorf("enabled = %v, want true when the body leaves it out", r.json["enabled"])
	}
	stored, _ := f.reg.Snapshot().State().Deployment("DEFAULT", "churn")
	if stored.Endpoints[0].Timeout.Milliseconds() != 1500 {
		t.Errorf("stored timeout %v, want 1.5s", stored.Endpoints[0].Timeout)
	}
	admin("POST", "/api/v1/deployments", `{"group":"DEFAULT","path":"churn"}`, nil).want(t, 409, "already_exists")

	r = f.do(t, request{method: "GET", path: "/api/v1/deployments/DEFAULT/churn", token: f.reader})
	r.want(t, 200, "")
	if r.header.Get("ETag") != `"1"` {
		t.Errorf("GET ETag %q, want \"1\"", r.header.Get("ETag"))
	}

	// PATCH: a merge patch on what GET shows.
	r = admin("PATCH", "/api/v1/deployments/DEFAULT/churn", `{"enabled":false,"description":null}`, map[string]string{"If-Match": `"1"`})
	r.want(t, 200, "")
	if r.json["enabled"] != false || r.json["description"] != "" || r.json["revision"] != 2.0 || r.header.Get("ETag") != `"2"` {
		t.Errorf("after PATCH: ETag %q, %s", r.header.Get("ETag"), r.body)
	}
	if d := cmp.Diff(wantEndpoints, r.json["endpoints"]); d != "" {
		t.Errorf("PATCH changed endpoints it did not name (-want +got):\n%s", d)
	}
	admin("PATCH", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true}`, map[string]string{"If-Match": `"1"`}).want(t, 412, "precondition_failed")
	admin("PATCH", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"revision":1}`, nil).want(t, 412, "precondition_failed")
	admin("PATCH", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"revision":2}`, map[string]string{"If-Match": `"1"`}).want(t, 400, "validation_failed")
	admin("PATCH", "/api/v1/deployments/DEFAULT/churn", `{"group":"elsewhere"}`, nil).want(t, 400, "validation_failed")
	admin("PATCH", "/api/v1/deployments/DEFAULT/churn", `{"endpoints":[{"alias":"a","process":"nope"}]}`, nil).want(t, 422, "invalid_reference")
	admin("PATCH", "/api/v1/deployments/DEFAULT/churn", `[]`, nil).want(t, 400, "validation_failed")
	admin("PATCH", "/api/v1/deployments/DEFAULT/missing", `{"enabled":true}`, nil).want(t, 404, "not_found")
	admin("PATCH", "/api/v1/deployments/DEFAULT/churn", `{"endpoints":[{"alias":"a","process":"iris","colour":1}]}`, nil).want(t, 400, "validation_failed")

	// PUT replaces; a revision in the body is a precondition.
	admin("PUT", "/api/v1/deployments/DEFAULT/churn", `{"revision":1}`, nil).want(t, 412, "precondition_failed")
	admin("PUT", "/api/v1/deployments/DEFAULT/churn", `{"revision":2}`, map[string]string{"If-Match": `"1"`}).want(t, 400, "validation_failed")
	r = admin("PUT", "/api/v1/deployments/DEFAULT/churn", `{"revision":2,"endpoints":[{"alias":"a","process":"iris"}]}`, map[string]string{"If-Match": `"2"`})
	r.want(t, 200, "")
	if r.json["enabled"] != true || len(r.json["endpoints"].([]any)) != 1 || r.json["description"] != "" {
		t.Errorf("after PUT: %s", r.body)
	}
	r = admin("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":false}`, nil) // unconditional
	r.want(t, 200, "")
	if r.json["revision"] != 4.0 || len(r.json["endpoints"].([]any)) != 0 {
		t.Errorf("after unconditional PUT: %s", r.body)
	}
	admin("PUT", "/api/v1/deployments/DEFAULT/fresh", `{}`, map[string]string{"If-Match": `"1"`}).want(t, 412, "precondition_failed")
	r = admin("PUT", "/api/v1/deployments/DEFAULT/fresh", `{"endpoints":[{"alias":"a","process":"double"}]}`, nil)
	r.want(t, 201, "")

	admin("DELETE", "/api/v1/deployments/DEFAULT/churn", "", map[string]string{"If-Match": `"3"`}).want(t, 412, "precondition_failed")
	admin("DELETE", "/api/v1/deployments/DEFAULT/churn", "", map[string]string{"If-Match": `W/"4"`}).want(t, 412, "precondition_failed")
	admin("DELETE", "/api/v1/deployments/DEFAULT/churn", "", map[string]string{"If-Match": `4`}).want(t, 400, string(problem.InvalidRequest))
	admin("DELETE", "/api/v1/deployments/DEFAULT/churn", "", map[string]string{"If-Match": `"1", "4"`}).want(t, 204, "")
	admin("GET", "/api/v1/deployments/DEFAULT/churn", "", nil).want(t, 404, "not_found")
}

func TestUnknownReferencesAre422(t *testing.T) {
	f := newFixture(t)
	r := f.do(t, request{method: "POST", path: "/api/v1/deployments", token: f.admin, body: `{"group":"nogroup","path":"p","endpoints":[
		{"alias":"a","process":"double"},
		{"alias":"b","process":"missing","queue":"noqueue"},
		{"alias":"c","process":"iris","queue":"DEFAULT"}]}`})
	r.want(t, 422, "invalid_reference")
	want := [][2]string{
		{"/group", `names no web API group: "nogroup"`},
		{"/endpoints/1/process", `names no process in the catalog: "missing"`},
		{"/endpoints/1/queue", `names no queue: "noqueue"`},
	}
	if d := cmp.Diff(want, r.fields()); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	if len(f.reg.Snapshot().State().Deployments()) != 0 {
		t.Error("a deployment was stored")
	}
}

// A deployment stored with a process this build does not have can still be
// changed without touching that endpoint; a new reference to a missing
// process is refused.
func TestKeptProcessesNeedNotBeInTheCatalog(t *testing.T) {
	f := newFixture(t)
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "old", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "a", Process: "retired"}}})
	f.do(t, request{method: "PATCH", path: "/api/v1/deployments/DEFAULT/old", token: f.admin, contentType: mergePatch,
		body: `{"enabled":false}`}).want(t, 200, "")
	r := f.do(t, request{method: "PUT", path: "/api/v1/deployments/DEFAULT/old", token: f.admin,
		body: `{"endpoints":[{"alias":"a","process":"retired"},{"alias":"b","process":"retired"}]}`})
	r.want(t, 422, "invalid_reference")
	if d := cmp.Diff([][2]string{{"/endpoints/1/process", `names no process in the catalog: "retired"`}}, r.fields()); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
}

func TestDeploymentPages(t *testing.T) {
	f := newFixture(t)
	f.putGroup(t, registry.Group{Name: "g"})
	for i := range 5 {
		f.putDeployment(t, registry.Deployment{Group: "g", Path: "p" + strconv.Itoa(i)})
	}
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "other"})

	tests := []struct {
		query string
		paths []string
		total int
		pages int
		page  int
		size  int
	}{
		{"", []string{"DEFAULT/other", "g/p0", "g/p1", "g/p2", "g/p3", "g/p4"}, 6, 1, 0, 20},
		{"?group=g&size=2", []string{"g/p0", "g/p1"}, 5, 3, 0, 2},
		{"?group=g&size=2&page=2", []string{"g/p4"}, 5, 3, 2, 2},
		{"?group=g&size=2&page=3", nil, 5, 3, 3, 2},
		{"?group=none", nil, 0, 0, 0, 20},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := f.do(t, request{method: "GET", path: "/api/v1/deployments" + tt.query, token: f.reader})
			r.want(t, 200, "")
			p := r.page(t)
			var paths []string
			for _, d := range p.Content {
				paths = append(paths, d["group"].(string)+"/"+d["path"].(string))
			}
			if d := cmp.Diff(tt.paths, paths); d != "" {
				t.Errorf("content (-want +got):\n%s", d)
			}
			got := []int{p.TotalElements, p.TotalPages, p.Number, p.Size}
			if d := cmp.Diff([]int{tt.total, tt.pages, tt.page, tt.size}, got); d != "" {
				t.Errorf("totalElements, totalPages, number, size (-want +got):\n%s", d)
			}
		})
	}
	for _, q := range []string{"?size=0", "?size=1001", "?page=-1", "?page=x", "?group=a%2Fb"} {
		t.Run(q, func(t *testing.T) {
			f.do(t, request{method: "GET", path: "/api/v1/deployments" + q, token: f.reader}).want(t, 400, string(problem.InvalidParameter))
		})
	}
}

// Eight clients change one deployment at once, each reading it and writing
// it back with If-Match, adding its name to the description. Each attempt
// either wins or gets 412; each client retries until it wins. No update may
// be lost: every name is in the final description once, and the revision
// counts the wins.
func TestConcurrentPatchesWithIfMatchLoseNothing(t *testing.T) {
	f := newFixture(t)
	start := f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "shared"})
	const clients = 8
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		wins     int
		failures []string
	)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("c%d", c)
			for attempt := 0; attempt < 1000; attempt++ {
				r := f.do(t, request{method: "GET", path: "/api/v1/deployments/DEFAULT/shared", token: f.admin})
				desc, _ := r.json["description"].(string)
				body := fmt.Sprintf(`{"description":%q}`, strings.TrimPrefix(desc+","+name, ","))
				r = f.do(t, request{method: "PATCH", path: "/api/v1/deployments/DEFAULT/shared", token: f.admin,
					contentType: mergePatch, body: body, header: map[string]string{"If-Match": r.header.Get("ETag")}})
				mu.Lock()
				switch r.status {
				case 200:
					wins++
				case 412:
				default:
					failures = append(failures, fmt.Sprintf("%s: %d %s", name, r.status, r.body))
				}
				mu.Unlock()
				if r.status != 412 {
					return
				}
			}
			mu.Lock()
			failures = append(failures, name+" never won")
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("answers other than 200 and 412: %v", failures)
	}
	final, _ := f.reg.Snapshot().State().Deployment("DEFAULT", "shared")
	if final.Revision != start.Revision+uint64(wins) || wins != clients {
		t.Errorf("revision %d after %d wins from %d, want %d and %d wins", final.Revision, wins, start.Revision, start.Revision+clients, clients)
	}
	names := strings.Split(final.Description, ",")
	sort.Strings(names)
	if d := cmp.Diff([]string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"}, names); d != "" {
		t.Errorf("names in the description (-want +got):\n%s", d)
	}
}

// Without If-Match a PATCH applies to the deployment as it is when it
// commits: eight at once all succeed (none is told to retry), each one a
// write of its own on top of the others.
func TestConcurrentPatchesWithoutIfMatchAllApply(t *testing.T) {
	f := newFixture(t)
	start := f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "shared"})
	const clients = 8
	var wg sync.WaitGroup
	statuses := make([]int, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"description":"c%d"}`, c)
			statuses[c] = f.do(t, request{method: "PATCH", path: "/api/v1/deployments/DEFAULT/shared", token: f.admin, contentType: mergePatch, body: body}).status
		}()
	}
	wg.Wait()
	for c, s := range statuses {
		if s != 200 {
			t.Errorf("client %d: %d, want 200", c, s)
		}
	}
	final, _ := f.reg.Snapshot().State().Deployment("DEFAULT", "shared")
	if final.Revision != start.Revision+clients {
		t.Errorf("revision %d, want %d: every patch is one write", final.Revision, start.Revision+clients)
	}
	if !strings.HasPrefix(final.Description, "c") {
		t.Errorf("description %q, want one client's", final.Description)
	}
}
