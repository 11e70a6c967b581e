package scorehub

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/demo"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
)

// adminPassword is the built-in admin's password in the tests of who may
// do what.
const adminPassword = "Policy-admin-7Kq-password"

// client calls a service's handler as one holder of credentials.
type client struct {
	t    testing.TB
	h    http.Handler
	auth string // the Authorization header; "" for none
}

// do sends method path with body (JSON, when not "") and returns the
// status and the body.
func (c client) do(method, path, body string) (int, string) {
	c.t.Helper()
	contentType := ""
	if body != "" {
		contentType = "application/json"
	}
	return c.send(method, path, contentType, body)
}

// send is do with a body of the given Content-Type.
func (c client) send(method, path, contentType, body string) (int, string) {
	c.t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	if c.auth != "" {
		r.Header.Set("Authorization", c.auth)
	}
	w := httptest.NewRecorder()
	c.h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// must sends method path with body and fails the test unless the answer
// has status want; it returns the body decoded into out, when not nil.
func (c client) must(method, path, body string, want int, out any) {
	c.t.Helper()
	code, got := c.do(method, path, body)
	if code != want {
		c.t.Fatalf("%s %s answered %d %s, want %d", method, path, code, got, want)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(got), out); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, path, err, got)
		}
	}
}

// signIn returns a client holding the idToken of user's password.
func signIn(t testing.TB, h http.Handler, user, password string) client {
	t.Helper()
	w := get(h, "/api/rest/tokenservice", user, password)
	var tok struct{ IDToken string }
	if err := json.Unmarshal(w.Body.Bytes(), &tok); w.Code != http.StatusOK || err != nil || tok.IDToken == "" {
		t.Fatalf("signing in %s answered %d %s", user, w.Code, w.Body)
	}
	return client{t: t, h: h, auth: "Bearer " + tok.IDToken}
}

// policyService is a service with the sleep process deployed in four
// groups: g1 and open are public, secret needs a token, and members needs
// one of a user in the user group staff. The admin and a user bob (in no
// user group) can sign in.
func policyService(t *testing.T) (*Service, client) {
	t.Helper()
	svc := newService(t, Config{AdminPassword: adminPassword, Processes: []process.ProcessInfo{demo.Sleep()},
		Formats: []process.ModelFormat{&registrytest.LinearFormat{}}})
	ctx := context.Background()
	reg := svc.Registry()
	for _, g := range []registry.Group{
		groupNamed("g1"), groupNamed("open"),
		{Name: "secret", Auth: registry.AuthPolicy{Mode: registry.TokenRequired}},
		{Name: "members", Auth: registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"staff"}}},
	} {
		if _, err := reg.PutGroup(ctx, g); err != nil {
			t.Fatal(err)
		}
		d := registry.Deployment{Group: g.Name, Path: "nap", Enabled: true,
			Endpoints: []registry.Endpoint{{Alias: "now", Process: demo.SleepName}}}
		if _, err := reg.PutDeployment(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reg.PutQueue(ctx, registry.Queue{Name: "other", MaxConcurrent: 1, MaxWaiting: 10}); err != nil {
		t.Fatal(err)
	}
	admin := signIn(t, svc.Handler(), "admin", adminPassword)
	admin.must("POST", "/api/v1/users", `{"name":"bob","password":"Bob-policy-9Wz-password"}`, http.StatusCreated, nil)
	return svc, admin
}

// job is a job as the API shows it.
type job struct {
	ID    string
	Owner string
	State string
}

// napJob is the body of a job on group's sleep endpoint that sleeps for
// the macro ms, with extra members (",…") when not "".
func napJob(group, ms, extra string) string {
	return `{"endpoint":{"group":"` + group + `","path":"nap","alias":"now"},"data":[{}],"macros":{"ms":"` + ms + `"}` + extra + `}`
}

// TestRestrictedAPITokenIsNoAdmin: an administrator's API token restricted
// to the web API group g1 may do with g1 what any caller may, and nothing
// an administrator may: no catalog process, no other queue, no other
// group (public ones included), no other user's job.
func TestRestrictedAPITokenIsNoAdmin(t *testing.T) {
	svc, admin := policyService(t)
	h := svc.Handler()
	bob := signIn(t, h, "bob", "Bob-policy-9Wz-password")
	var bobs job
	bob.must("POST", "/executions/jobs", napJob("secret", "600000", ""), http.StatusCreated, &bobs)
	t.Cleanup(func() { admin.do("POST", "/executions/jobs/"+bobs.ID+"/stop", "") })

	var created struct{ Token string }
	admin.must("POST", "/api/v1/apitokens", `{"name":"only g1","webApiGroups":["g1"]}`, http.StatusCreated, &created)
	restricted := client{t: t, h: h, auth: "apitoken " + created.Token}

	var own job
	restricted.must("POST", "/executions/jobs", napJob("g1", "0", ""), http.StatusCreated, &own)
	if own.Owner != "admin" {
		t.Errorf("the restricted token's job is owned by %q, want its owner admin", own.Owner)
	}
	for _, c := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"score in another group", "POST", "/webapi/secret/api/v1/services/nap/now?ms=0", `{"data":[{}]}`, http.StatusForbidden},
		{"stop another user's job", "POST", "/executions/jobs/" + bobs.ID + "/stop", "", http.StatusNotFound},
		{"run a catalog process", "POST", "/executions/jobs", `{"process":"sleep","data":[{}],"macros":{"ms":"0"}}`, http.StatusForbidden},
		{"move a job to another queue", "POST", "/executions/jobs", napJob("g1", "0", `,"queueName":"other"`), http.StatusForbidden},
		{"a job in a protected group", "POST", "/executions/jobs", napJob("secret", "0", ""), http.StatusForbidden},
		{"a job in another public group", "POST", "/executions/jobs", napJob("open", "0", ""), http.StatusForbidden},
		{"a job in a group that does not exist", "POST", "/executions/jobs", napJob("nowhere", "0", ""), http.StatusForbidden},
		{"create a user", "POST", "/api/v1/users", `{"name":"eve","password":"Eve-policy-4Rt-password"}`, http.StatusUnauthorized},
	} {
		if code, body := restricted.do(c.method, c.path, c.body); code != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.status)
		}
	}
	var still job
	admin.must("GET", "/executions/jobs/"+bobs.ID, "", http.StatusOK, &still)
	if still.State != "PENDING" && still.State != "RUNNING" {
		t.Errorf("bob's job is %s after the restricted token tried to stop it", still.State)
	}

	// The same token unrestricted is the administrator's, as before.
	var full struct{ Token string }
	admin.must("POST", "/api/v1/apitokens", `{"name":"everything"}`, http.StatusCreated, &full)
	unrestricted := client{t: t, h: h, auth: "apitoken " + full.Token}
	unrestricted.must("POST", "/executions/jobs", `{"process":"sleep","data":[{}],"macros":{"ms":"0"}}`, http.StatusCreated, nil)
	unrestricted.must("POST", "/executions/jobs/"+bobs.ID+"/stop", "", http.StatusAccepted, nil)
}

// TestProtectedGroupsHideFromNonMembers: a signed-in user whom a protected
// group keeps out of scoring sees nothing of it either: not its endpoints,
// their schemas, its deployments, the group, or a model deployed only
// there; a member sees them, and so does an administrator.
func TestProtectedGroupsHideFromNonMembers(t *testing.T) {
	svc, admin := policyService(t)
	h := svc.Handler()
	admin.must("POST", "/api/v1/users", `{"name":"sam","password":"Sam-policy-6Pd-password","groups":["staff"]}`, http.StatusCreated, nil)
	artifact := string(registrytest.LinearArtifact(1, []string{"x"}, []float64{2}))
	for _, model := range []string{"hidden", "shared", "loose"} {
		if code, body := admin.send("POST", "/api/v1/models/"+model+"/versions", "application/octet-stream", artifact); code != http.StatusCreated {
			t.Fatalf("uploading %s: %d %s", model, code, body)
		}
	}
	// hidden is deployed in members only, shared in members and g1,
	// loose nowhere.
	admin.must("PUT", "/api/v1/deployments/members/scored",
		`{"enabled":true,"endpoints":[{"alias":"a","model":"hidden@1"},{"alias":"b","model":"shared@1"}]}`, http.StatusCreated, nil)
	admin.must("PUT", "/api/v1/deployments/g1/scored", `{"enabled":true,"endpoints":[{"alias":"b","model":"shared@1"}]}`, http.StatusCreated, nil)

	bob := signIn(t, h, "bob", "Bob-policy-9Wz-password")
	sam := signIn(t, h, "sam", "Sam-policy-6Pd-password")
	if code, _ := bob.do("POST", "/webapi/members/api/v1/services/nap/now?ms=0", `{"data":[{}]}`); code != http.StatusForbidden {
		t.Fatalf("bob scoring in members answered %d, want 403: the test's premise", code)
	}
	for _, path := range []string{
		"/api/v1/endpoints/members/nap/now/process",
		"/api/v1/endpoints/members/scored/a/challengers",
		"/api/v1/deployments/members/nap",
		"/api/v1/webapigroups/members",
		"/api/v1/models/hidden",
		"/api/v1/models/hidden/versions",
		"/api/v1/models/hidden/versions/1",
	} {
		if code, body := bob.do("GET", path, ""); code != http.StatusNotFound {
			t.Errorf("bob reads %s: %d %s, want 404", path, code, body)
		}
		// Without credentials: a 401 where reading needs a token, and
		// where anyone may read (an endpoint's process), a 404 all the
		// same.
		if code, body := (client{t: t, h: h}).do("GET", path, ""); code != http.StatusNotFound && code != http.StatusUnauthorized {
			t.Errorf("an anonymous visitor reads %s: %d %s, want 404 or 401", path, code, body)
		}
		for _, c := range []client{sam, admin} {
			if code, body := c.do("GET", path, ""); code != http.StatusOK {
				t.Errorf("a member or an admin reads %s: %d %s, want 200", path, code, body)
			}
		}
	}
	for _, c := range []struct {
		path string
		bob  []string // what bob sees
		sam  []string // what a member sees, as the admin
	}{
		{"/api/v1/endpoints", []string{"g1/nap", "g1/scored", "open/nap", "secret/nap"},
			[]string{"g1/nap", "g1/scored", "members/nap", "members/scored", "open/nap", "secret/nap"}},
		{"/api/v1/deployments", []string{"g1/nap", "g1/scored", "open/nap", "secret/nap"},
			[]string{"g1/nap", "g1/scored", "members/nap", "members/scored", "open/nap", "secret/nap"}},
		{"/api/v1/webapigroups", []string{"DEFAULT", "g1", "open", "secret"},
			[]string{"DEFAULT", "g1", "members", "open", "secret"}},
		{"/api/v1/models", []string{"loose", "shared"}, []string{"hidden", "loose", "shared"}},
	} {
		if got := names(t, bob, c.path); strings.Join(got, " ") != strings.Join(c.bob, " ") {
			t.Errorf("bob lists %s: %q, want %q", c.path, got, c.bob)
		}
		for _, who := range []client{sam, admin} {
			if got := names(t, who, c.path); strings.Join(got, " ") != strings.Join(c.sam, " ") {
				t.Errorf("a member or an admin lists %s: %q, want %q", c.path, got, c.sam)
			}
		}
	}
}

// names lists what GET path answers, by name (a model or group) or
// group/path (an endpoint or a deployment), once each, in order.
func names(t *testing.T, c client, path string) []string {
	t.Helper()
	type item struct{ Name, Group, Path string }
	var list []item
	code, body := c.do("GET", path, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	var page struct{ Content []item }
	if err := json.Unmarshal([]byte(body), &page); err == nil {
		list = page.Content
	} else if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, body)
	}
	var out []string
	for _, it := range list {
		n := it.Name
		if it.Group != "" {
			n = it.Group + "/" + it.Path
		}
		if len(out) == 0 || out[len(out)-1] != n {
			out = append(out, n)
		}
	}
	return out
}

// TestRecreatedUserInheritsNoJobs: deleting a user stops their jobs, and a
// user made later with the same name sees none of the deleted one's jobs,
// finished or stopped, nor their results.
func TestRecreatedUserInheritsNoJobs(t *testing.T) {
	svc, admin := policyService(t)
	h := svc.Handler()
	admin.must("POST", "/api/v1/users", `{"name":"carl","password":"Carl-policy-3Hx-password"}`, http.StatusCreated, nil)
	old := signIn(t, h, "carl", "Carl-policy-3Hx-password")
	var done, long job
	old.must("POST", "/executions/jobs", napJob("g1", "0", ""), http.StatusCreated, &done)
	old.must("POST", "/executions/jobs", napJob("g1", "600000", ""), http.StatusCreated, &long)
	testutil.Eventually(t, 10*time.Second, "the short job finishing", func() bool {
		var j job
		old.must("GET", "/executions/jobs/"+done.ID, "", http.StatusOK, &j)
		return j.State == "FINISHED"
	})

	admin.must("DELETE", "/api/v1/users/carl", "", http.StatusNoContent, nil)
	testutil.Eventually(t, 10*time.Second, "the deleted user's running job stopping", func() bool {
		var j job
		admin.must("GET", "/executions/jobs/"+long.ID, "", http.StatusOK, &j)
		return j.State == "STOPPED"
	})

	admin.must("POST", "/api/v1/users", `{"name":"carl","password":"Carl-again-8Vm-password"}`, http.StatusCreated, nil)
	again := signIn(t, h, "carl", "Carl-again-8Vm-password")
	if n := jobCount(t, again); n != 0 {
		t.Errorf("the new carl lists %d jobs of the old one", n)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/executions/jobs/" + done.ID},
		{"GET", "/executions/jobs/" + done.ID + "/result"},
		{"GET", "/executions/jobs/" + long.ID},
		{"POST", "/executions/jobs/" + long.ID + "/stop"},
	} {
		if code, body := again.do(c.method, c.path, ""); code != http.StatusNotFound {
			t.Errorf("the new carl: %s %s answered %d %s, want 404", c.method, c.path, code, body)
		}
	}
	var mine job
	again.must("POST", "/executions/jobs", napJob("g1", "0", ""), http.StatusCreated, &mine)
	again.must("GET", "/executions/jobs/"+mine.ID, "", http.StatusOK, nil)
	if n := jobCount(t, again); n != 1 {
		t.Errorf("the new carl lists %d jobs, want their one", n)
	}
	if n := jobCount(t, admin); n != 3 {
		t.Errorf("the admin lists %d jobs, want the old carl's two and the new one's", n)
	}
}

// jobCount returns how many jobs c lists.
func jobCount(t *testing.T, c client) int {
	t.Helper()
	var page struct{ TotalElements int }
	c.must("GET", "/executions/jobs", "", http.StatusOK, &page)
	return page.TotalElements
}
