package management_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// waitJob polls GET /executions/jobs/{id}, as an admin, until the job has
// ended.
func (f *fixture) waitJob(t *testing.T, id string) response {
	t.Helper()
	var r response
	testutil.Eventually(t, 15*time.Second, "job "+id+" ended", func() bool {
		r = f.do(t, request{method: http.MethodGet, path: "/executions/jobs/" + id, token: f.admin})
		r.want(t, 200, "")
		s := r.json["state"]
		return s != "PENDING" && s != "RUNNING"
	})
	return r
}

func TestJobRoutes(t *testing.T) {
	f := newFixture(t)
	seed(t, f)

	// The answer is 201 with the job's address.
	created := f.do(t, request{method: http.MethodPost, path: "/executions/jobs", token: f.admin,
		body: `{"process":"double","data":[{"x":1},{"x":3}],"macros":{"m":"1"}}`})
	created.want(t, 201, "")
	id, _ := created.json["id"].(string)
	if created.json["state"] != "PENDING" || created.header.Get("Location") != "/executions/jobs/"+id {
		t.Fatalf("created %s, Location %q", created.body, created.header.Get("Location"))
	}
	done := f.waitJob(t, id)
	if done.json["state"] != "FINISHED" || done.json["queueName"] != "DEFAULT" || done.json["process"] != "double" || done.json["error"] != nil {
		t.Errorf("finished job %s", done.body)
	}
	res := f.do(t, request{method: http.MethodGet, path: "/executions/jobs/" + id + "/result", token: f.admin})
	res.want(t, 200, "")
	if d := cmp.Diff(`{"data":[{"x":1,"double":2},{"x":3,"double":6}]}`+"\n", string(res.body)); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}

	// An endpoint's job runs on the endpoint's queue.
	byEndpoint := f.do(t, request{method: http.MethodPost, path: "/executions/jobs", token: f.admin,
		body: `{"endpoint":{"group":"risk","path":"churn","alias":"score"},"data":[{"x":2}]}`})
	byEndpoint.want(t, 201, "")
	if byEndpoint.json["queueName"] != "batch" {
		t.Errorf("endpoint job on queue %v, want batch", byEndpoint.json["queueName"])
	}
	f.waitJob(t, byEndpoint.json["id"].(string))

	list := f.do(t, request{method: http.MethodGet, path: "/executions/jobs?queueName=batch&state=FINISHED", token: f.admin})
	list.want(t, 200, "")
	if p := list.page(t); p.TotalElements != 1 || len(p.Content) != 1 || p.Content[0]["id"] != byEndpoint.json["id"] {
		t.Errorf("filtered list %s", list.body)
	}
	all := f.do(t, request{method: http.MethodGet, path: "/executions/jobs?size=1", token: f.admin})
	if p := all.page(t); p.TotalElements != 2 || p.TotalPages != 2 {
		t.Errorf("paged list %s", all.body)
	}

	tests := []struct {
		name   string
		rq     request
		status int
		typ    string
	}{
		{"stop an ended job", request{method: http.MethodPost, path: "/executions/jobs/" + id + "/stop", token: f.admin}, 409, "job_ended"},
		{"unknown job", request{method: http.MethodGet, path: "/executions/jobs/nope", token: f.reader}, 404, "not_found"},
		{"result of an unknown job", request{method: http.MethodGet, path: "/executions/jobs/nope/result", token: f.reader}, 404, "not_found"},
		{"no token", request{method: http.MethodGet, path: "/executions/jobs"}, 401, "unauthorized"},
		{"bad state filter", request{method: http.MethodGet, path: "/executions/jobs?state=DONE", token: f.reader}, 400, string(problem.InvalidParameter)},
		{"neither process nor endpoint", request{method: http.MethodPost, path: "/executions/jobs", token: f.reader, body: `{"data":[]}`}, 400, string(problem.ValidationFailed)},
		{"unknown member", request{method: http.MethodPost, path: "/executions/jobs", token: f.reader, body: `{"process":"double","data":[],"priority":1}`}, 400, string(problem.ValidationFailed)},
		{"rows strictly typed", request{method: http.MethodPost, path: "/executions/jobs", token: f.reader, body: `{"process":"double","data":[{"x":[1]}]}`}, 400, "invalid_value"},
		{"unknown process", request{method: http.MethodPost, path: "/executions/jobs", token: f.admin, body: `{"process":"nope","data":[]}`}, 422, "invalid_reference"},
		{"not JSON", request{method: http.MethodPost, path: "/executions/jobs", token: f.reader, body: `x`, contentType: "text/plain"}, 415, string(problem.UnsupportedMediaType)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.do(t, tt.rq).want(t, tt.status, tt.typ)
		})
	}

	t.Run("a full waiting list is 503 with Retry-After and no job", func(t *testing.T) {
		slot, err := f.jobs.Queues().Acquire(t.Context(), "spare") // MaxConcurrent 1, MaxWaiting 0
		if err != nil {
			t.Fatal(err)
		}
		defer slot.Release(nil)
		r := f.do(t, request{method: http.MethodPost, path: "/executions/jobs", token: f.admin, body: `{"queueName":"spare","process":"double","data":[{"x":1}]}`})
		r.want(t, 503, "queue_full")
		if r.header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
		if l := f.do(t, request{method: http.MethodGet, path: "/executions/jobs?queueName=spare", token: f.admin}); l.page(t).TotalElements != 0 {
			t.Errorf("jobs on the full queue: %s", l.body)
		}
	})
}

func TestJobRoutesAccess(t *testing.T) {
	t.Run("JobsRequireAdmin", func(t *testing.T) {
		f := newFixture(t, withConfig(management.Config{JobsRequireAdmin: true}))
		body := `{"process":"double","data":[{"x":1}]}`
		f.do(t, request{method: http.MethodPost, path: "/executions/jobs", token: f.reader, body: body}).want(t, 403, "forbidden")
		f.do(t, request{method: http.MethodPost, path: "/executions/jobs", token: f.admin, body: body}).want(t, 201, "")
		f.do(t, request{method: http.MethodGet, path: "/executions/jobs", token: f.reader}).want(t, 200, "")
	})
	t.Run("without a runner", func(t *testing.T) {
		f := newFixture(t, withoutJobs())
		for _, r := range f.handler.Routes() {
			if strings.Contains(r, "/executions/jobs") {
				t.Errorf("serves %s without a jobs runner", r)
			}
		}
		f.do(t, request{method: http.MethodGet, path: "/executions/jobs", token: f.admin}).want(t, 404, "not_found")
	})
}

// TestJobsFollowGroupPolicy replays jobs that ran what their submitter may
// not run at the scoring address: ann, in the user group analysts only,
// submits a job for an endpoint of a group open to quants, a job running a
// catalog process directly, and a job moving an endpoint to another queue.
func TestJobsFollowGroupPolicy(t *testing.T) {
	f := newFixture(t)
	seed(t, f)
	f.putGroup(t, registry.Group{Name: "quant", Auth: registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"quants"}}})
	f.putGroup(t, registry.Group{Name: "team", Auth: registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"analysts"}}})
	f.putDeployment(t, registry.Deployment{Group: "quant", Path: "model", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "score", Process: "double"}}})
	f.putDeployment(t, registry.Deployment{Group: "team", Path: "model", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "score", Process: "double"}}})

	// The scoring address refuses ann.
	f.score(t, "quant", "model", "score", `{"data":[{"x":1}]}`).want(t, 401, "unauthorized")
	sc := f.do(t, request{method: http.MethodPost, path: "/webapi/quant/api/v1/services/model/score", token: f.reader, body: `{"data":[{"x":1}]}`})
	sc.want(t, 403, "forbidden")

	job := func(body string) string {
		return `{"data":[{"x":1}],` + body + `}`
	}
	tests := []struct {
		name   string
		token  string
		body   string
		status int
		typ    string
	}{
		{"endpoint of a group ann is not in", f.reader, job(`"endpoint":{"group":"quant","path":"model","alias":"score"}`), 403, "forbidden"},
		{"unknown endpoint of that group", f.reader, job(`"endpoint":{"group":"quant","path":"nope","alias":"score"}`), 403, "forbidden"},
		{"endpoint of ann's group", f.reader, job(`"endpoint":{"group":"team","path":"model","alias":"score"}`), 201, ""},
		{"public endpoint", f.reader, job(`"endpoint":{"group":"risk","path":"churn","alias":"score"}`), 201, ""},
		{"catalog process", f.reader, job(`"process":"double"`), 403, "forbidden"},
		{"endpoint moved to another queue", f.reader, job(`"endpoint":{"group":"risk","path":"churn","alias":"score"},"queueName":"DEFAULT"`), 403, "forbidden"},
		{"catalog process by an administrator", f.admin, job(`"process":"double"`), 201, ""},
		{"endpoint moved by an administrator", f.admin, job(`"endpoint":{"group":"risk","path":"churn","alias":"score"},"queueName":"DEFAULT"`), 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.do(t, request{method: http.MethodPost, path: "/executions/jobs", token: tt.token, body: tt.body}).want(t, tt.status, tt.typ)
		})
	}
}

// TestJobsOwned replays a token holder listing every job, reading another
// user's job and result, and stopping it: jobs carry their owner, another
// user's job is a 404 exactly like a job that does not exist, and only an
// admin lists everyone's, filtering by owner.
func TestJobsOwned(t *testing.T) {
	f := newFixture(t)
	seed(t, f)
	body := `{"endpoint":{"group":"risk","path":"churn","alias":"score"},"data":[{"x":1}]}`
	anns := f.do(t, request{method: http.MethodPost, path: "/executions/jobs", token: f.reader, body: body})
	anns.want(t, 201, "")
	roots := f.do(t, request{method: http.MethodPost, path: "/executions/jobs", token: f.admin, body: body})
	roots.want(t, 201, "")
	annID, rootID := anns.json["id"].(string), roots.json["id"].(string)
	if anns.json["owner"] != "ann" || roots.json["owner"] != "root" {
		t.Fatalf("owners %v and %v, want ann and root", anns.json["owner"], roots.json["owner"])
	}
	f.waitJob(t, annID)
	f.waitJob(t, rootID)

	// To ann, root's job answers exactly as one that does not exist.
	for _, suffix := range []string{"", "/result"} {
		got := f.do(t, request{method: http.MethodGet, path: "/executions/jobs/" + rootID + suffix, token: f.reader})
		got.want(t, 404, "not_found")
		f.do(t, request{method: http.MethodGet, path: "/executions/jobs/" + annID + suffix, token: f.reader}).want(t, 200, "")
	}
	f.do(t, request{method: http.MethodPost, path: "/executions/jobs/" + rootID + "/stop", token: f.reader}).want(t, 404, "not_found")
	f.do(t, request{method: http.MethodPost, path: "/executions/jobs/" + annID + "/stop", token: f.reader}).want(t, 409, "job_ended")

	ids := func(r response) []string {
		r.want(t, 200, "")
		var out []string
		content, _ := r.json["content"].([]any)
		for _, c := range content {
			out = append(out, c.(map[string]any)["id"].(string))
		}
		return out
	}
	tests := []struct {
		name  string
		token string
		query string
		want  []string
	}{
		{"ann sees her own", f.reader, "", []string{annID}},
		{"ann asks for root's", f.reader, "?owner=root", nil},
		{"admin sees all", f.admin, "", []string{rootID, annID}},
		{"admin filters by owner", f.admin, "?owner=ann", []string{annID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(f.do(t, request{method: http.MethodGet, path: "/executions/jobs" + tt.query, token: tt.token}))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("listed (-want +got):\n%s", diff)
			}
		})
	}
	f.do(t, request{method: http.MethodGet, path: "/executions/jobs?owner=", token: f.admin}).want(t, 400, string(problem.InvalidParameter))
}

// TestJobQuotas replays filling the job store over HTTP: a user past the
// active jobs quota gets 429 job_quota_exceeded with Retry-After while an
// administrator is not bound by it, of two jobs whose results do not both
// fit the user's bytes the one that ends last ends ERROR unstored, a job
// whose result could not fit what is left is refused before it runs, and
// results at the store's total give 507 storage_full to everyone.
func TestJobQuotas(t *testing.T) {
	release := make(chan struct{})
	block := process.ProcessInfo{Name: "block", Process: process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
		<-release
		return process.NewTable(in.Table.Rows())
	})}
	body := func(alias string) string {
		return `{"endpoint":{"group":"risk","path":"churn","alias":"` + alias + `"},"data":[{"x":1}]}`
	}
	post := func(f *fixture, token, alias string) response {
		return f.do(t, request{method: http.MethodPost, path: "/executions/jobs", token: token, body: body(alias)})
	}
	deploy := func(f *fixture) {
		seed(t, f)
		f.putDeployment(t, registry.Deployment{Group: "risk", Path: "churn", Enabled: true, Endpoints: []registry.Endpoint{
			{Alias: "score", Process: "double", Queue: "batch"}, {Alias: "block", Process: "block", Queue: "batch"}}})
	}

	t.Run("active jobs", func(t *testing.T) {
		f := newFixture(t, withProcess(block), withJobsConfig(func(c *scoring.JobsConfig) { c.MaxActiveJobsPerOwner = 1 }))
		deploy(f)
		t.Cleanup(func() { close(release) })
		post(f, f.reader, "block").want(t, 201, "")
		over := post(f, f.reader, "score")
		over.want(t, 429, "job_quota_exceeded")
		if over.header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
		post(f, f.admin, "score").want(t, 201, "")
	})

	// size is the length of one result of the score endpoint.
	probe := newFixture(t)
	seed(t, probe)
	done := probe.waitJob(t, post(probe, probe.reader, "score").json["id"].(string))
	res := probe.do(t, request{method: http.MethodGet, path: "/executions/jobs/" + done.json["id"].(string) + "/result", token: probe.reader})
	res.want(t, 200, "")
	size := int64(len(res.body))

	t.Run("result bytes", func(t *testing.T) {
		// hold answers as double does once held is closed, so that two
		// jobs are submitted before either result is stored.
		held := make(chan struct{})
		double := doubler()
		hold := process.ProcessInfo{Name: "hold", Output: double.Output, Process: process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
			<-held
			return double.Process.Score(ctx, in)
		})}
		f := newFixture(t, withProcess(hold), withJobsConfig(func(c *scoring.JobsConfig) { c.MaxOwnerResultBytes, c.MaxResultBytes = size+1, 2*size }))
		seed(t, f)
		f.putDeployment(t, registry.Deployment{Group: "risk", Path: "churn", Enabled: true, Endpoints: []registry.Endpoint{
			{Alias: "score", Process: "double", Queue: "batch"}, {Alias: "hold", Process: "hold", Queue: "batch"}}})
		// Both under her quota when submitted; only one result fits when
		// they end.
		a, b := post(f, f.reader, "hold"), post(f, f.reader, "hold")
		a.want(t, 201, "")
		b.want(t, 201, "")
		close(held)
		ends := map[any]int{}
		var j response
		for _, r := range []response{a, b} {
			r = f.waitJob(t, r.json["id"].(string))
			ends[r.json["state"]]++
			if r.json["state"] == "ERROR" {
				j = r
			}
		}
		if ends["FINISHED"] != 1 || ends["ERROR"] != 1 {
			t.Fatalf("ends %v, want one FINISHED and one ERROR", ends)
		}
		if e, _ := j.json["error"].(map[string]any); j.json["state"] != "ERROR" || e["type"] != "job_quota_exceeded" {
			t.Fatalf("job past the quota: %v", j.json)
		}
		f.do(t, request{method: http.MethodGet, path: "/executions/jobs/" + j.json["id"].(string) + "/result", token: f.reader}).want(t, 409, "job_not_finished")
		// Under her quota now, but a result could not fit what is left:
		// refused before it runs.
		post(f, f.reader, "score").want(t, 429, "job_quota_exceeded")
		// The administrator is bound only by the total, which its result
		// fills.
		if j := f.waitJob(t, post(f, f.admin, "score").json["id"].(string)); j.json["state"] != "FINISHED" {
			t.Fatalf("admin's job %v", j.json)
		}
		post(f, f.admin, "score").want(t, 507, "storage_full")
		post(f, f.reader, "score").want(t, 507, "storage_full")
	})
}

// TestJobBodyLimit: a job's body is bounded by the runner's limit for
// jobs, not by a scoring request's.
func TestJobBodyLimit(t *testing.T) {
	f := newFixture(t, withJobsConfig(func(c *scoring.JobsConfig) { c.Limits.MaxBodyBytes = 64 << 10 }))
	seed(t, f)
	rows := strings.Repeat(`{"x":1},`, 10_000) // 80 KB
	body := `{"endpoint":{"group":"risk","path":"churn","alias":"score"},"data":[` + rows + `{"x":1}]}`
	f.do(t, request{method: http.MethodPost, path: "/executions/jobs", token: f.reader, body: body}).want(t, 413, "body_too_large")
}
