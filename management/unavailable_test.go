package management_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
)

// outage is a database that can be taken down: while it is down, every
// call of the stores over it fails as a database store's does, wrapped in
// registry.ErrStoreUnavailable, and changes nothing.
type outage struct{ down atomic.Bool }

func (o *outage) check(ctx context.Context) error {
	if o.down.Load() {
		return fmt.Errorf("teststore: connect: %w: %w", registry.ErrStoreUnavailable, syscall.ECONNREFUSED)
	}
	return ctx.Err()
}

// outageStore is a records store behind an outage.
type outageStore struct {
	registry.Store
	o *outage
}

func (s outageStore) Load(ctx context.Context) (*registry.State, error) {
	if err := s.o.check(ctx); err != nil {
		return nil, err
	}
	return s.Store.Load(ctx)
}

func (s outageStore) Commit(ctx context.Context, base uint64, next *registry.State) error {
	if err := s.o.check(ctx); err != nil {
		return err
	}
	return s.Store.Commit(ctx, base, next)
}

// outageJobStore is a job store behind an outage.
type outageJobStore struct {
	jobs.Store
	o *outage
}

func (s outageJobStore) CreateJob(ctx context.Context, j jobs.Job) error {
	if err := s.o.check(ctx); err != nil {
		return err
	}
	return s.Store.CreateJob(ctx, j)
}

func (s outageJobStore) UpdateJob(ctx context.Context, base uint64, j jobs.Job, result []byte) error {
	if err := s.o.check(ctx); err != nil {
		return err
	}
	return s.Store.UpdateJob(ctx, base, j, result)
}

func (s outageJobStore) Job(ctx context.Context, id string) (jobs.Job, error) {
	if err := s.o.check(ctx); err != nil {
		return jobs.Job{}, err
	}
	return s.Store.Job(ctx, id)
}

func (s outageJobStore) Jobs(ctx context.Context, f jobs.Filter) ([]jobs.Job, int, error) {
	if err := s.o.check(ctx); err != nil {
		return nil, 0, err
	}
	return s.Store.Jobs(ctx, f)
}

func (s outageJobStore) JobResult(ctx context.Context, id string) ([]byte, error) {
	if err := s.o.check(ctx); err != nil {
		return nil, err
	}
	return s.Store.JobResult(ctx, id)
}

func (s outageJobStore) DeleteJobs(ctx context.Context, ids []string) (int, error) {
	if err := s.o.check(ctx); err != nil {
		return 0, err
	}
	return s.Store.DeleteJobs(ctx, ids)
}

// While the store is down, scoring answers from the last snapshot, reads
// of records answer from it too, every write is refused with 503
// store_unavailable and Retry-After and changes nothing, and readiness says
// the server is degraded; once the store is back, writes go through again.
func TestStoreOutage(t *testing.T) {
	var o outage
	f := newFixture(t,
		func(fo *fixtureOptions) {
			fo.wrapStore = func(s registry.Store) registry.Store { return outageStore{s, &o} }
			fo.wrapJobs = func(s jobs.Store) jobs.Store { return outageJobStore{s, &o} }
		})
	f.do(t, request{method: http.MethodPut, path: "/api/v1/deployments/DEFAULT/twice", token: f.admin,
		body: `{"enabled":true,"endpoints":[{"alias":"x","process":"double"}]}`}).want(t, http.StatusCreated, "")

	o.down.Store(true)

	ready := f.do(t, request{method: http.MethodGet, path: "/health/ready"})
	ready.want(t, http.StatusOK, "")
	if ready.json["status"] != "degraded" || ready.json["message"] == nil {
		t.Errorf("readiness while the store is down: %s", ready.body)
	}
	if got := f.score(t, "DEFAULT", "twice", "x", `{"data":[{"x":4}]}`); got.status != http.StatusOK ||
		string(got.body) != `{"data":[{"x":4,"double":8}]}`+"\n" {
		t.Errorf("scoring while the store is down: %d %s", got.status, got.body)
	}
	f.do(t, request{method: http.MethodGet, path: "/api/v1/deployments/DEFAULT/twice", token: f.admin}).want(t, http.StatusOK, "")

	for _, rq := range []request{
		{method: http.MethodPut, path: "/api/v1/queues/slow", body: `{"maxConcurrent":1,"maxWaiting":1}`},
		{method: http.MethodPut, path: "/api/v1/webapigroups/g", body: `{}`},
		{method: http.MethodDelete, path: "/api/v1/deployments/DEFAULT/twice"},
		{method: http.MethodPost, path: "/executions/jobs", body: `{"process":"double","data":[{"x":1}]}`},
		{method: http.MethodGet, path: "/executions/jobs"},
	} {
		rq.token = f.admin
		r := f.do(t, rq)
		r.want(t, http.StatusServiceUnavailable, "store_unavailable")
		if ra := r.header.Get("Retry-After"); ra != "2" {
			t.Errorf("%s %s: Retry-After %q, want 2", rq.method, rq.path, ra)
		}
		if msg, _ := r.errorField("message").(string); msg == "" || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: not the JSON error shape: %s", rq.method, rq.path, r.body)
		}
	}

	o.down.Store(false)

	ready = f.do(t, request{method: http.MethodGet, path: "/health/ready"})
	if ready.json["status"] != "ready" {
		t.Errorf("readiness once the store is back: %s", ready.body)
	}
	// Nothing refused was stored, nothing acknowledged was lost.
	f.do(t, request{method: http.MethodGet, path: "/api/v1/queues/slow", token: f.admin}).want(t, http.StatusNotFound, "not_found")
	f.do(t, request{method: http.MethodGet, path: "/api/v1/deployments/DEFAULT/twice", token: f.admin}).want(t, http.StatusOK, "")
	if _, n, err := f.jobStore.Jobs(context.Background(), jobs.Filter{}); err != nil || n != 0 {
		t.Errorf("jobs stored while the store was down: %d, %v", n, err)
	}
	f.do(t, request{method: http.MethodPut, path: "/api/v1/queues/slow", token: f.admin,
		body: `{"maxConcurrent":1,"maxWaiting":1}`}).want(t, http.StatusCreated, "")
	if got := f.score(t, "DEFAULT", "twice", "x", `{"data":[{"x":1}]}`); got.status != http.StatusOK {
		t.Errorf("scoring once the store is back: %d %s", got.status, got.body)
	}
}
