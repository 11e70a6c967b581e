package management_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/management"
)

// waitJob polls GET /executions/jobs/{id} until the job has ended.
func (f *fixture) waitJob(t *testing.T, id string) response {
	t.Helper()
	for range 2000 {
		r := f.do(t, request{method: http.MethodGet, path: "/executions/jobs/" + id, token: f.reader})
		r.want(t, 200, "")
		if s := r.json["state"]; s != "PENDING" && s != "RUNNING" {
			return r
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("job %s never ended", id)
	return response{}
}

func TestJobRoutes(t *testing.T) {
	f := newFixture(t)
	seed(t, f)

	// Any valid token submits; the answer is 201 with the job's address.
	created := f.do(t, request{method: http.MethodPost, path: "/executions/jobs", token: f.reader,
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
	res := f.do(t, request{method: http.MethodGet, path: "/executions/jobs/" + id + "/result", token: f.reader})
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

	list := f.do(t, request{method: http.MethodGet, path: "/executions/jobs?queueName=batch&state=FINISHED", token: f.reader})
	list.want(t, 200, "")
	if p := list.page(t); p.TotalElements != 1 || len(p.Content) != 1 || p.Content[0]["id"] != byEndpoint.json["id"] {
		t.Errorf("filtered list %s", list.body)
	}
	all := f.do(t, request{method: http.MethodGet, path: "/executions/jobs?size=1", token: f.reader})
	if p := all.page(t); p.TotalElements != 2 || p.TotalPages != 2 {
		t.Errorf("paged list %s", all.body)
	}

	tests := []struct {
		name   string
		rq     request
		status int
		typ    string
	}{
		{"stop an ended job", request{method: http.MethodPost, path: "/executions/jobs/" + id + "/stop", token: f.reader}, 409, "job_ended"},
		{"unknown job", request{method: http.MethodGet, path: "/executions/jobs/nope", token: f.reader}, 404, "not_found"},
		{"result of an unknown job", request{method: http.MethodGet, path: "/executions/jobs/nope/result", token: f.reader}, 404, "not_found"},
		{"no token", request{method: http.MethodGet, path: "/executions/jobs"}, 401, "unauthorized"},
		{"bad state filter", request{method: http.MethodGet, path: "/executions/jobs?state=DONE", token: f.reader}, 400, management.TypeInvalidParameter},
		{"neither process nor endpoint", request{method: http.MethodPost, path: "/executions/jobs", token: f.reader, body: `{"data":[]}`}, 400, management.TypeValidationFailed},
		{"unknown member", request{method: http.MethodPost, path: "/executions/jobs", token: f.reader, body: `{"process":"double","data":[],"priority":1}`}, 400, management.TypeValidationFailed},
		{"rows strictly typed", request{method: http.MethodPost, path: "/executions/jobs", token: f.reader, body: `{"process":"double","data":[{"x":[1]}]}`}, 400, "invalid_value"},
		{"unknown process", request{method: http.MethodPost, path: "/executions/jobs", token: f.reader, body: `{"process":"nope","data":[]}`}, 422, "invalid_reference"},
		{"not JSON", request{method: http.MethodPost, path: "/executions/jobs", token: f.reader, body: `x`, contentType: "text/plain"}, 415, management.TypeUnsupportedMediaType},
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
		r := f.do(t, request{method: http.MethodPost, path: "/executions/jobs", token: f.reader, body: `{"queueName":"spare","process":"double","data":[{"x":1}]}`})
		r.want(t, 503, "queue_full")
		if r.header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
		if l := f.do(t, request{method: http.MethodGet, path: "/executions/jobs?queueName=spare", token: f.reader}); l.page(t).TotalElements != 0 {
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
