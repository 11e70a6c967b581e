package scoring_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// jobProcs are the processes of the job tests: double (x → double), fail
// (an error with a secret in it), sleep (waits for its context) and block
// (waits for release, ignoring its context, then succeeds).
type jobProcs struct {
	started chan struct{} // block sends once it runs
	release chan struct{} // closing it lets block return
}

func (p *jobProcs) list() []process.ProcessInfo {
	ok := func(in process.Input) (*process.Table, error) {
		out := make([]float64, in.Table.Rows())
		if x, found := in.Table.Lookup("x"); found {
			for i := range out {
				v, _ := x.Number(i)
				out[i] = 2 * v
			}
		}
		return process.NewTable(len(out), process.NumberColumn("double", out, nil))
	}
	return []process.ProcessInfo{
		{Name: "double", Input: []process.ColumnSpec{{Name: "x", Kind: process.Number, Required: true}},
			Process: process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) { return ok(in) })},
		{Name: "fail", Process: process.ProcessFunc(func(context.Context, process.Input) (*process.Table, error) {
			return nil, errors.New("connect to db with password hunter2")
		})},
		{Name: "sleep", Process: process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})},
		{Name: "block", Process: process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
			p.started <- struct{}{}
			<-p.release
			return ok(in)
		})},
	}
}

type jobsFixture struct {
	*fixture
	procs *jobProcs
	store *jobs.MemStore
	jobs  *scoring.Jobs
	now   *testutil.Clock
}

// asAdmin is the caller of the job tests that are not about who may run
// what.
var asAdmin = scoring.Caller{Subject: "admin", Admin: true}

func newJobsFixture(t *testing.T) *jobsFixture {
	t.Helper()
	return newJobsFixtureAuth(t, nil)
}

// newJobsFixtureAuth is newJobsFixture with authorize as the runner's
// JobsConfig.Authorize and the scoring handler's Config.Authorize.
func newJobsFixtureAuth(t *testing.T, authorize func(*http.Request, string, registry.AuthPolicy) error) *jobsFixture {
	t.Helper()
	return newJobsFixtureWith(t, authorize, func(*scoring.JobsConfig) {})
}

// newJobsFixtureWith is newJobsFixtureAuth with the runner's config changed
// by edit.
func newJobsFixtureWith(t *testing.T, authorize func(*http.Request, string, registry.AuthPolicy) error, edit func(*scoring.JobsConfig)) *jobsFixture {
	t.Helper()
	p := &jobProcs{started: make(chan struct{}, 10), release: make(chan struct{})}
	f := &jobsFixture{fixture: newFixture(t, scoring.Config{Authorize: authorize}, p.list()...), procs: p, now: testutil.NewClock(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))}
	f.store = jobs.NewMemStore(registry.StoreOptions{Now: f.now.Now})
	var err error
	cfg := scoring.JobsConfig{Registry: f.reg, Queues: f.h.Queues(), Store: f.store, Now: f.now.Now, Authorize: authorize, Logger: slog.New(slog.NewTextHandler(f.log, nil))}
	edit(&cfg)
	f.jobs, err = scoring.NewJobs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-p.release:
		default:
			close(p.release)
		}
		f.jobs.Close()
		f.store.Close()
	})
	return f
}

func (f *jobsFixture) submit(t *testing.T, spec scoring.JobSpec) jobs.Job {
	t.Helper()
	j, err := f.jobs.Submit(context.Background(), spec)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if j.State != jobs.StatePending || j.ID == "" {
		t.Fatalf("submitted job %+v, want a PENDING one with an id", j)
	}
	return j
}

// wait polls the job until it is in state want.
func (f *jobsFixture) wait(t *testing.T, id string, want jobs.State) jobs.Job {
	t.Helper()
	var j jobs.Job
	testutil.Eventually(t, 15*time.Second, "job "+id+" became "+string(want), func() bool {
		var err error
		j, err = f.jobs.Job(context.Background(), asAdmin, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != want && j.State.Final() {
			t.Fatalf("job ended %s (%+v), want %s", j.State, j.Error, want)
		}
		return j.State == want
	})
	return j
}

// rows decodes {"data":rows} with the runner's limits.
func (f *jobsFixture) rows(t *testing.T, rows string) *scoring.Request {
	t.Helper()
	req, err := scoring.Decode(strings.NewReader(`{"data":`+rows+`}`), f.jobs.Limits())
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestJobLifecycle(t *testing.T) {
	ctx := context.Background()
	inBubble(t, "PENDING → RUNNING → FINISHED stores the result", func(t *testing.T) {
		f := newJobsFixture(t)
		j := f.submit(t, scoring.JobSpec{Caller: asAdmin, Process: "double", Input: f.rows(t, `[{"id":12345678901234567890,"x":1},{"x":2.5}]`)})
		done := f.wait(t, j.ID, jobs.StateFinished)
		if done.StartedAt.IsZero() || done.FinishedAt.IsZero() || done.Error != nil || done.Rows != 2 || done.Queue != registry.DefaultQueue {
			t.Errorf("finished job %+v", done)
		}
		res, err := f.jobs.Result(ctx, asAdmin, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"data":[{"id":12345678901234567890,"x":1,"double":2},{"x":2.5,"double":5}]}` + "\n"
		if d := cmp.Diff(want, string(res)); d != "" {
			t.Errorf("result (-want +got):\n%s", d)
		}
	})
	inBubble(t, "RUNNING → ERROR says only what is safe", func(t *testing.T) {
		f := newJobsFixture(t)
		j := f.wait(t, f.submit(t, scoring.JobSpec{Caller: asAdmin, Process: "fail", Input: f.rows(t, `[{"a":"b"}]`)}).ID, jobs.StateError)
		want := &jobs.ErrorInfo{Type: string(problem.Internal), Title: "Job failed", Message: "internal error"}
		if d := cmp.Diff(want, j.Error); d != "" {
			t.Errorf("error (-want +got):\n%s", d)
		}
		if !strings.Contains(f.log.String(), "hunter2") {
			t.Error("the cause did not reach the log")
		}
	})
	inBubble(t, "RUNNING → TIMED_OUT past the endpoint's timeout", func(t *testing.T) {
		f := newJobsFixture(t)
		f.putDeployment(t, registry.Deployment{Group: registry.DefaultGroup, Path: "slow", Enabled: true,
			Endpoints: []registry.Endpoint{{Alias: "a", Process: "sleep", Timeout: 20 * time.Millisecond}}})
		j := f.submit(t, scoring.JobSpec{Caller: asAdmin, Endpoint: &process.EndpointRef{Group: registry.DefaultGroup, Path: "slow", Alias: "a"}, Input: f.rows(t, `[{"a":1}]`)})
		done := f.wait(t, j.ID, jobs.StateTimedOut)
		if done.Error == nil || done.Error.Type != string(problem.Timeout) || done.Process != "sleep" {
			t.Errorf("timed out job %+v", done)
		}
		if _, err := f.jobs.Result(ctx, asAdmin, j.ID); httperr.From(err).Status != http.StatusConflict {
			t.Errorf("result of a timed out job: %v, want 409", err)
		}
	})
	inBubble(t, "RUNNING → STOPPED when the process ignoring its context returns", func(t *testing.T) {
		f := newJobsFixture(t)
		j := f.submit(t, scoring.JobSpec{Caller: asAdmin, Process: "block", Input: f.rows(t, `[{"x":1}]`)})
		<-f.procs.started
		f.wait(t, j.ID, jobs.StateRunning)
		if _, err := f.jobs.Result(ctx, asAdmin, j.ID); string(httperr.From(err).Code) != "job_not_finished" {
			t.Errorf("result of a running job: %v, want job_not_finished", err)
		}
		if _, err := f.jobs.Stop(ctx, asAdmin, j.ID); err != nil {
			t.Fatal(err)
		}
		if still, _ := f.jobs.Job(ctx, asAdmin, j.ID); still.State != jobs.StateRunning {
			t.Errorf("state %s before the process returned, want RUNNING", still.State)
		}
		close(f.procs.release) // the process then succeeds: the job is STOPPED all the same
		done := f.wait(t, j.ID, jobs.StateStopped)
		if done.Error == nil || done.Error.Type != "stopped" {
			t.Errorf("stopped job %+v", done)
		}
		if _, err := f.jobs.Stop(ctx, asAdmin, j.ID); string(httperr.From(err).Code) != "job_ended" {
			t.Errorf("stopping a stopped job: %v, want job_ended", err)
		}
		if st, _ := f.h.Queues().Stat(registry.DefaultQueue); st.Running != 0 {
			t.Errorf("the slot is still held: %+v", st)
		}
	})
	inBubble(t, "PENDING → STOPPED while waiting for a slot", func(t *testing.T) {
		f := newJobsFixture(t)
		f.putQueue(t, registry.Queue{Name: "one", MaxConcurrent: 1, MaxWaiting: 5})
		slot, err := f.h.Queues().Acquire(ctx, "one")
		if err != nil {
			t.Fatal(err)
		}
		defer slot.Release(nil)
		j := f.submit(t, scoring.JobSpec{Caller: asAdmin, Queue: "one", Process: "double", Input: f.rows(t, `[{"x":1}]`)})
		synctest.Wait()
		if st, _ := f.h.Queues().Stat("one"); st.Waiting != 1 {
			t.Fatalf("figures %+v, want the job waiting for the slot", st)
		}
		if _, err := f.jobs.Stop(ctx, asAdmin, j.ID); err != nil {
			t.Fatal(err)
		}
		done := f.wait(t, j.ID, jobs.StateStopped)
		if !done.StartedAt.IsZero() {
			t.Errorf("a job stopped while pending has StartedAt %v", done.StartedAt)
		}
	})
}

func TestJobSubmitRefusals(t *testing.T) {
	ctx := context.Background()
	f := newJobsFixture(t)
	f.putQueue(t, registry.Queue{Name: "tight", MaxConcurrent: 1, MaxWaiting: 0})
	slot, err := f.h.Queues().Acquire(ctx, "tight")
	if err != nil {
		t.Fatal(err)
	}
	defer slot.Release(nil)
	tests := []struct {
		name   string
		spec   scoring.JobSpec
		rows   string
		status int
		typ    string
	}{
		{"neither process nor endpoint", scoring.JobSpec{Caller: asAdmin}, `[]`, 400, string(problem.InvalidRequest)},
		{"both process and endpoint", scoring.JobSpec{Caller: asAdmin, Process: "double", Endpoint: &process.EndpointRef{Group: "DEFAULT", Path: "demo", Alias: "double"}}, `[]`, 400, string(problem.InvalidRequest)},
		{"unknown process", scoring.JobSpec{Caller: asAdmin, Process: "nope"}, `[]`, 422, string(problem.InvalidReference)},
		{"unknown endpoint", scoring.JobSpec{Caller: asAdmin, Endpoint: &process.EndpointRef{Group: "DEFAULT", Path: "demo", Alias: "nope"}}, `[]`, 422, string(problem.InvalidReference)},
		{"unknown queue", scoring.JobSpec{Caller: asAdmin, Queue: "nope", Process: "double"}, `[{"x":1}]`, 422, string(problem.InvalidReference)},
		{"strict JSON", scoring.JobSpec{Caller: asAdmin, Process: "double"}, `[{"x":1,}]`, 400, string(problem.MalformedJSON)},
		{"mixed types", scoring.JobSpec{Caller: asAdmin, Process: "double"}, `[{"x":1},{"x":"a"}]`, 400, string(problem.MixedTypes)},
		{"input schema", scoring.JobSpec{Caller: asAdmin, Process: "double"}, `[{"y":1}]`, 400, string(problem.SchemaMismatch)},
		{"full waiting list", scoring.JobSpec{Caller: asAdmin, Queue: "tight", Process: "double"}, `[{"x":1}]`, 503, string(problem.QueueFull)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The rows go through Decode first, as a host's would.
			req, err := scoring.Decode(strings.NewReader(`{"data":`+tt.rows+`}`), f.jobs.Limits())
			if err == nil {
				tt.spec.Input = req
				_, err = f.jobs.Submit(ctx, tt.spec)
			}
			if e := httperr.From(err); e.Status != tt.status || string(e.Code) != tt.typ {
				t.Errorf("Submit: %d %s (%v), want %d %s", e.Status, string(e.Code), err, tt.status, tt.typ)
			}
		})
	}
	if _, total, _ := f.jobs.List(ctx, asAdmin, jobs.Filter{}); total != 0 {
		t.Errorf("%d jobs stored by refused submissions", total)
	}
}

// Shutdown waits for jobs within its context, then stops the rest and
// takes no more.
func TestJobsShutdown(t *testing.T) {
	ctx := context.Background()
	f := newJobsFixture(t)
	quick := f.submit(t, scoring.JobSpec{Caller: asAdmin, Process: "double", Input: f.rows(t, `[{"x":1}]`)})
	stuck := f.submit(t, scoring.JobSpec{Caller: asAdmin, Process: "block", Input: f.rows(t, `[{"x":1}]`)})
	<-f.procs.started
	f.wait(t, quick.ID, jobs.StateFinished)
	sctx, cancel := context.WithCancel(ctx)
	cancel() // the grace period is over at once
	if err := f.jobs.Shutdown(sctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown: %v, want context.Canceled for the job it stopped", err)
	}
	j, _ := f.jobs.Job(ctx, asAdmin, stuck.ID)
	if j.State != jobs.StateStopped || j.Error == nil || !strings.Contains(j.Error.Message, "shut down") {
		t.Errorf("job running at shutdown: %+v %+v", j, j.Error)
	}
	if _, err := f.jobs.Submit(ctx, scoring.JobSpec{Caller: asAdmin, Process: "double", Input: f.rows(t, `[{"x":1}]`)}); httperr.From(err).Status != http.StatusServiceUnavailable {
		t.Errorf("Submit after Shutdown: %v, want 503", err)
	}
	close(f.procs.release)
	if done, _ := f.jobs.Job(ctx, asAdmin, quick.ID); done.State != jobs.StateFinished {
		t.Errorf("a finished job became %s", done.State)
	}
}

func TestJobsSweep(t *testing.T) {
	ctx := context.Background()
	f := newJobsFixture(t)
	old := f.submit(t, scoring.JobSpec{Caller: asAdmin, Process: "double", Input: f.rows(t, `[{"x":1}]`)})
	f.wait(t, old.ID, jobs.StateFinished)
	f.now.Advance(23 * time.Hour)
	if n, err := f.jobs.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("Sweep within the retention removed %d, %v", n, err)
	}
	f.now.Advance(2 * time.Hour)
	if n, err := f.jobs.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("Sweep past the retention removed %d, %v; want 1", n, err)
	}
	if _, err := f.jobs.Job(ctx, asAdmin, old.ID); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("swept job: %v", err)
	}
}

func TestNewJobsFailsClosed(t *testing.T) {
	f := newJobsFixture(t)
	other := newFixture(t, scoring.Config{})
	store := jobs.NewMemStore(registry.StoreOptions{})
	valid := scoring.JobsConfig{Registry: f.reg, Queues: f.h.Queues(), Store: store}
	for _, tt := range []struct {
		name   string
		change func(*scoring.JobsConfig)
	}{
		{"no registry", func(c *scoring.JobsConfig) { c.Registry = nil }},
		{"no queues", func(c *scoring.JobsConfig) { c.Queues = nil }},
		{"no store", func(c *scoring.JobsConfig) { c.Store = nil }},
		{"queues of another registry", func(c *scoring.JobsConfig) { c.Queues = other.h.Queues() }},
		{"negative retention", func(c *scoring.JobsConfig) { c.Retention = -time.Hour }},
		{"bad limits", func(c *scoring.JobsConfig) { c.Limits.MaxRows = -1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valid
			tt.change(&cfg)
			if j, err := scoring.NewJobs(cfg); err == nil || !strings.HasPrefix(err.Error(), "scoring: ") {
				if j != nil {
					j.Close()
				}
				t.Errorf("NewJobs: %v, want a scoring: error", err)
			}
		})
	}
}

func ExampleJobs() {
	cat := process.NewCatalog()
	_ = cat.Register(process.ProcessInfo{Name: "count", Process: process.ProcessFunc(
		func(_ context.Context, in process.Input) (*process.Table, error) {
			return process.NewTable(in.Table.Rows(), process.TextColumn("seen", make([]string, in.Table.Rows()), nil))
		})})
	store := registry.NewMemStore(registry.StoreOptions{})
	reg, _ := registry.New(context.Background(), cat, store)
	queues, _ := scoring.NewQueues(reg)
	js, _ := scoring.NewJobs(scoring.JobsConfig{Registry: reg, Queues: queues, Store: jobs.NewMemStore(registry.StoreOptions{})})
	defer js.Close()

	// Only an administrator runs a catalog process directly.
	admin := scoring.Caller{Subject: "root", Admin: true}
	rows, _ := scoring.Decode(strings.NewReader(`{"data":[{"a":1}]}`), js.Limits())
	job, _ := js.Submit(context.Background(), scoring.JobSpec{Caller: admin, Process: "count", Input: rows})
	fmt.Println(job.State)
	for job.State != jobs.StateFinished {
		time.Sleep(time.Millisecond)
		job, _ = js.Job(context.Background(), admin, job.ID)
	}
	result, _ := js.Result(context.Background(), admin, job.ID)
	fmt.Print(string(result))
	// Output:
	// PENDING
	// {"data":[{"a":1,"seen":""}]}
}

// TestJobSubmitInput: a job needs rows, and rows decoded under more
// generous limits than the runner's are refused as a request of that size
// would be.
func TestJobSubmitInput(t *testing.T) {
	f := newJobsFixture(t)
	tight, err := scoring.NewJobs(scoring.JobsConfig{Registry: f.reg, Queues: f.h.Queues(), Store: f.store,
		Limits: scoring.Limits{MaxRows: 2, MaxColumns: 2}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tight.Close() })
	tests := []struct {
		name   string
		rows   string
		status int
		typ    string
	}{
		{"no rows", "", 400, string(problem.InvalidRequest)},
		{"within the limits", `[{"x":1},{"x":2}]`, 0, ""},
		{"too many rows", `[{"x":1},{"x":2},{"x":3}]`, 413, string(problem.TooManyRows)},
		{"too many columns", `[{"x":1,"a":1,"b":2}]`, 413, string(problem.TooManyColumns)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := scoring.JobSpec{Caller: asAdmin, Process: "double"}
			if tt.rows != "" {
				spec.Input = f.rows(t, tt.rows)
			}
			_, err := tight.Submit(context.Background(), spec)
			if tt.status == 0 {
				if err != nil {
					t.Errorf("Submit: %v", err)
				}
				return
			}
			if e := httperr.From(err); e.Status != tt.status || string(e.Code) != tt.typ {
				t.Errorf("Submit: %d %s (%v), want %d %s", e.Status, string(e.Code), err, tt.status, tt.typ)
			}
		})
	}
}

// TestQueuesOfAnotherRegistry: a handler and a jobs runner must run on
// queues built over their own registry.
func TestQueuesOfAnotherRegistry(t *testing.T) {
	f := newJobsFixture(t)
	other := newFixture(t, scoring.Config{})
	if _, err := scoring.NewJobs(scoring.JobsConfig{Registry: f.reg, Queues: other.h.Queues(), Store: f.store}); err == nil {
		t.Error("NewJobs took queues of another registry")
	}
	if _, err := scoring.New(scoring.Config{Registry: f.reg, Queues: other.h.Queues()}); err == nil {
		t.Error("New took queues of another registry")
	}
	if _, err := scoring.NewJobs(scoring.JobsConfig{Registry: f.reg, Store: f.store}); err == nil {
		t.Error("NewJobs took no queues")
	}
}

// TestJobsApplyGroupPolicy replays jobs that ran what their submitter could
// not run at the scoring address: an endpoint of a token group submitted
// by a user outside its user groups, a catalog process submitted by a
// non-administrator, and an endpoint's execution moved to another queue.
// Each job must get the answer the scoring handler gives the same caller.
func TestJobsApplyGroupPolicy(t *testing.T) {
	// The caller named in "Authorization: Bearer <name>" is valid; alice
	// is in the user group analysts, bob is not.
	authorize := func(r *http.Request, group string, p registry.AuthPolicy) error {
		user, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			return &problem.Error{Status: 401, Code: "unauthorized", Message: "this endpoint needs a valid token", Challenge: "Bearer"}
		}
		if user != "alice" {
			return scoring.ErrForbidden
		}
		return nil
	}
	f := newJobsFixtureAuth(t, authorize)
	ctx := context.Background()
	if _, err := f.reg.PutGroup(ctx, registry.Group{Name: "secure",
		Auth: registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"analysts"}}}); err != nil {
		t.Fatal(err)
	}
	f.putDeployment(t, registry.Deployment{Group: "secure", Path: "demo", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "double", Process: "double"}}})
	f.putQueue(t, registry.Queue{Name: "fast", MaxConcurrent: 1, MaxWaiting: 5})

	caller := func(user string, admin bool) scoring.Caller {
		r := httptest.NewRequest("POST", "/executions/jobs", nil)
		if user != "" {
			r.Header.Set("Authorization", "Bearer "+user)
		}
		return scoring.Caller{Subject: user, Admin: admin, Request: r}
	}
	secure := &process.EndpointRef{Group: "secure", Path: "demo", Alias: "double"}
	public := &process.EndpointRef{Group: registry.DefaultGroup, Path: "demo", Alias: "double"}
	tests := []struct {
		name   string
		spec   scoring.JobSpec
		status int // 0: the job is taken
		typ    string
	}{
		{"member of the user group", scoring.JobSpec{Caller: caller("alice", false), Endpoint: secure}, 0, ""},
		{"outside the user groups", scoring.JobSpec{Caller: caller("bob", false), Endpoint: secure}, 403, "forbidden"},
		{"administrator outside the user groups", scoring.JobSpec{Caller: caller("bob", true), Endpoint: secure}, 403, "forbidden"},
		{"no credentials", scoring.JobSpec{Caller: scoring.Caller{Subject: "alice"}, Endpoint: secure}, 401, "unauthorized"},
		{"outside the user groups, unknown endpoint", scoring.JobSpec{Caller: caller("bob", false),
			Endpoint: &process.EndpointRef{Group: "secure", Path: "nope", Alias: "x"}}, 403, "forbidden"},
		{"public endpoint", scoring.JobSpec{Caller: caller("bob", false), Endpoint: public}, 0, ""},
		{"catalog process, not an administrator", scoring.JobSpec{Caller: caller("alice", false), Process: "double"}, 403, "forbidden"},
		{"catalog process, administrator", scoring.JobSpec{Caller: caller("bob", true), Process: "double"}, 0, ""},
		{"another queue, not an administrator", scoring.JobSpec{Caller: caller("bob", false), Endpoint: public, Queue: "fast"}, 403, "forbidden"},
		{"the endpoint's own queue named", scoring.JobSpec{Caller: caller("bob", false), Endpoint: public, Queue: registry.DefaultQueue}, 0, ""},
		{"another queue, administrator", scoring.JobSpec{Caller: caller("bob", true), Endpoint: public, Queue: "fast"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Input = f.rows(t, `[{"x":1}]`)
			j, err := f.jobs.Submit(ctx, tt.spec)
			if e := httperr.From(err); err != nil && (e.Status != tt.status || string(e.Code) != tt.typ) || err == nil && tt.status != 0 {
				t.Fatalf("Submit = %+v, %v; want %d %s", j, err, tt.status, tt.typ)
			}
			if err == nil && tt.spec.Queue == "fast" && j.Queue != "fast" {
				t.Errorf("job on queue %q, want fast", j.Queue)
			}
			// The scoring address answers the same caller the same.
			if e := tt.spec.Endpoint; e != nil && e.Group == "secure" && e.Path == "demo" {
				r := httptest.NewRequest("POST", "/secure/api/v1/services/demo/double", strings.NewReader(`{"data":[{"x":1}]}`))
				r.Header.Set("Content-Type", "application/json")
				if tt.spec.Caller.Request != nil {
					r.Header["Authorization"] = tt.spec.Caller.Request.Header["Authorization"]
				}
				w := httptest.NewRecorder()
				f.h.ServeHTTP(w, r)
				want := tt.status
				if want == 0 {
					want = http.StatusOK
				}
				if w.Code != want {
					t.Errorf("scoring address: %d, job: %d", w.Code, want)
				}
			}
		})
	}
}

// TestJobsOwnership replays a token holder reading, listing and stopping
// another user's jobs: each job has its submitter as owner, another user
// gets "not found" for it (as for a job that does not exist, so IDs cannot
// be probed) and lists only their own, an administrator sees every job and
// filters by owner, and a job without an owner is an administrator's only.
func TestJobsOwnership(t *testing.T) {
	ctx := context.Background()
	f := newJobsFixture(t)
	ann := scoring.Caller{Subject: "ann"}
	bob := scoring.Caller{Subject: "bob"}
	demo := &process.EndpointRef{Group: registry.DefaultGroup, Path: "demo", Alias: "double"}
	annJob := f.submit(t, scoring.JobSpec{Caller: ann, Endpoint: demo, Input: f.rows(t, `[{"x":1}]`)})
	if annJob.Owner != "ann" {
		t.Fatalf("job owner %q, want ann", annJob.Owner)
	}
	f.wait(t, annJob.ID, jobs.StateFinished)
	f.now.Advance(time.Second) // newest first
	bobJob := f.submit(t, scoring.JobSpec{Caller: bob, Endpoint: &process.EndpointRef{Group: registry.DefaultGroup, Path: "demo", Alias: "block"},
		Input: f.rows(t, `[{"x":1}]`)})
	<-f.procs.started

	for _, c := range []struct {
		name   string
		caller scoring.Caller
	}{{"another user", bob}, {"no subject", scoring.Caller{}}} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := f.jobs.Job(ctx, c.caller, annJob.ID); !errors.Is(err, registry.ErrNotFound) {
				t.Errorf("Job: %v, want not found", err)
			}
			if _, err := f.jobs.Result(ctx, c.caller, annJob.ID); !errors.Is(err, registry.ErrNotFound) {
				t.Errorf("Result: %v, want not found", err)
			}
			list, total, err := f.jobs.List(ctx, c.caller, jobs.Filter{Owner: "ann"})
			if err != nil || total != 0 || len(list) != 0 {
				t.Errorf("List(owner ann) = %d jobs, %v; want none", total, err)
			}
		})
	}
	if _, err := f.jobs.Stop(ctx, ann, bobJob.ID); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("ann stops bob's job: %v, want not found", err)
	}
	if j, _ := f.jobs.Job(ctx, bob, bobJob.ID); j.State != jobs.StateRunning {
		t.Errorf("bob's job after ann's stop: %s", j.State)
	}
	ids := func(jobs []jobs.Job) []string {
		var out []string
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		caller scoring.Caller
		filter jobs.Filter
		want   []string
	}{
		{"ann's own", ann, jobs.Filter{}, []string{annJob.ID}},
		{"bob's own", bob, jobs.Filter{}, []string{bobJob.ID}},
		{"administrator, all", asAdmin, jobs.Filter{}, []string{bobJob.ID, annJob.ID}},
		{"administrator, ann's", asAdmin, jobs.Filter{Owner: "ann"}, []string{annJob.ID}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := f.jobs.List(ctx, tc.caller, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
				t.Errorf("listed (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := f.jobs.Result(ctx, ann, annJob.ID); err != nil {
		t.Errorf("ann reads her result: %v", err)
	}
	if _, err := f.jobs.Stop(ctx, bob, bobJob.ID); err != nil {
		t.Errorf("bob stops his job: %v", err)
	}
	// A job stored without an owner (written before jobs had owners) is
	// an administrator's only.
	legacy := f.submit(t, scoring.JobSpec{Caller: scoring.Caller{Admin: true}, Process: "double", Input: f.rows(t, `[{"x":1}]`)})
	if _, err := f.jobs.Job(ctx, ann, legacy.ID); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("ann reads a job without an owner: %v", err)
	}
	if _, err := f.jobs.Job(ctx, asAdmin, legacy.ID); err != nil {
		t.Errorf("administrator reads a job without an owner: %v", err)
	}
}

// TestJobsQuotas replays filling the job store: an owner past the active
// jobs quota gets 429 with Retry-After, a result past the owner's bytes
// ends its job ERROR unstored and further submissions get 429, the store's
// total gives 507 to everyone, administrators included, and another owner
// is unaffected by the first one's quotas.
func TestJobsQuotas(t *testing.T) {
	ctx := context.Background()
	ann, bob, cyd := scoring.Caller{Subject: "ann"}, scoring.Caller{Subject: "bob"}, scoring.Caller{Subject: "cyd"}
	double := &process.EndpointRef{Group: registry.DefaultGroup, Path: "demo", Alias: "double"}
	block := &process.EndpointRef{Group: registry.DefaultGroup, Path: "demo", Alias: "block"}
	refused := func(t *testing.T, f *jobsFixture, c scoring.Caller, status int, typ string) *problem.Error {
		t.Helper()
		_, err := f.jobs.Submit(ctx, scoring.JobSpec{Caller: c, Endpoint: double, Input: f.rows(t, `[{"x":1}]`)})
		e := httperr.From(err)
		if err == nil || e.Status != status || string(e.Code) != typ {
			t.Fatalf("%s submits: %v, want %d %s", c.Subject, err, status, typ)
		}
		return e
	}

	t.Run("active jobs", func(t *testing.T) {
		f := newJobsFixtureWith(t, nil, func(c *scoring.JobsConfig) { c.MaxActiveJobsPerOwner = 2 })
		var held []jobs.Job
		for range 2 {
			held = append(held, f.submit(t, scoring.JobSpec{Caller: ann, Endpoint: block, Input: f.rows(t, `[{"x":1}]`)}))
		}
		e := refused(t, f, ann, http.StatusTooManyRequests, string(problem.JobQuotaExceeded))
		if e.RetryAfter <= 0 {
			t.Errorf("429 without Retry-After")
		}
		f.submit(t, scoring.JobSpec{Caller: bob, Endpoint: double, Input: f.rows(t, `[{"x":1}]`)})
		f.submit(t, scoring.JobSpec{Caller: asAdmin, Endpoint: double, Input: f.rows(t, `[{"x":1}]`)})
		close(f.procs.release)
		for _, j := range held {
			f.wait(t, j.ID, jobs.StateFinished)
		}
		f.submit(t, scoring.JobSpec{Caller: ann, Endpoint: double, Input: f.rows(t, `[{"x":1}]`)})
	})

	// n is the size of one result of these tests.
	probe := newJobsFixture(t)
	j := probe.submit(t, scoring.JobSpec{Caller: ann, Endpoint: double, Input: probe.rows(t, `[{"x":1}]`)})
	probe.wait(t, j.ID, jobs.StateFinished)
	res, err := probe.jobs.Result(ctx, ann, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(res))

	t.Run("result bytes", func(t *testing.T) {
		f := newJobsFixtureWith(t, nil, func(c *scoring.JobsConfig) {
			c.MaxOwnerResultBytes, c.MaxResultBytes = 2*n, 4*n
		})
		first := f.submit(t, scoring.JobSpec{Caller: ann, Endpoint: double, Input: f.rows(t, `[{"x":1}]`)})
		f.wait(t, first.ID, jobs.StateFinished)
		// Both fit when submitted; only one result fits when they end.
		a := f.submit(t, scoring.JobSpec{Caller: ann, Endpoint: block, Input: f.rows(t, `[{"x":1}]`)})
		b := f.submit(t, scoring.JobSpec{Caller: ann, Endpoint: block, Input: f.rows(t, `[{"x":1}]`)})
		close(f.procs.release)
		ends := map[jobs.State]int{}
		for _, id := range []string{a.ID, b.ID} {
			var got jobs.Job
			for got = f.wait1(t, id); !got.State.Final(); got = f.wait1(t, id) {
			}
			ends[got.State]++
			if got.State == jobs.StateError {
				if got.Error == nil || got.Error.Type != string(problem.JobQuotaExceeded) {
					t.Errorf("refused result's job error %+v, want type %s", got.Error, problem.JobQuotaExceeded)
				}
				if _, err := f.jobs.Result(ctx, ann, id); err == nil {
					t.Errorf("a refused result is readable")
				}
			}
		}
		if ends[jobs.StateFinished] != 1 || ends[jobs.StateError] != 1 {
			t.Fatalf("ends %v, want one FINISHED and one ERROR", ends)
		}
		refused(t, f, ann, http.StatusTooManyRequests, string(problem.JobQuotaExceeded))
		// Another owner is unaffected by ann's quota, up to the total.
		for _, c := range []scoring.Caller{bob, cyd} {
			j := f.submit(t, scoring.JobSpec{Caller: c, Endpoint: double, Input: f.rows(t, `[{"x":1}]`)})
			f.wait(t, j.ID, jobs.StateFinished)
		}
		for _, c := range []scoring.Caller{bob, ann, asAdmin} {
			refused(t, f, c, http.StatusInsufficientStorage, string(problem.StorageFull))
		}
	})
}

// wait1 reads the job id as an administrator.
func (f *jobsFixture) wait1(t *testing.T, id string) jobs.Job {
	t.Helper()
	time.Sleep(time.Millisecond)
	j, err := f.jobs.Job(context.Background(), asAdmin, id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestJobsBodyLimit checks that a job's body is bounded below a scoring
// request's unless configured otherwise.
func TestJobsBodyLimit(t *testing.T) {
	tests := []struct {
		name string
		set  int64
		want int64
	}{
		{"default", 0, scoring.DefaultMaxJobBodyBytes},
		{"configured", 1 << 20, 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newJobsFixtureWith(t, nil, func(c *scoring.JobsConfig) { c.Limits.MaxBodyBytes = tt.set })
			if got := f.jobs.Limits().MaxBodyBytes; got != tt.want {
				t.Errorf("MaxBodyBytes = %d, want %d", got, tt.want)
			}
		})
	}
	if scoring.DefaultMaxJobBodyBytes >= scoring.DefaultMaxBodyBytes {
		t.Errorf("a job's default body limit %d is not below a scoring request's %d", scoring.DefaultMaxJobBodyBytes, scoring.DefaultMaxBodyBytes)
	}
}
