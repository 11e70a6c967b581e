package scoring_test

import (
	"context"
	"testing"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/scoring"
)

// sharedLease is how long the claims of the replicas of these tests last,
// and leaseCheck how often they tend them.
const (
	sharedLease = time.Minute
	leaseCheck  = 20 * time.Millisecond
)

// newReplicas returns a fixture whose runner is replica "a" of a shared
// store, and a second runner, replica "b", over the same store.
func newReplicas(t *testing.T) (*jobsFixture, *scoring.Jobs) {
	t.Helper()
	f := newJobsFixtureWith(t, nil, func(c *scoring.JobsConfig) {
		c.Replica, c.Lease, c.LeaseCheck = "a", sharedLease, leaseCheck
	})
	b, err := scoring.NewJobs(scoring.JobsConfig{Registry: f.reg, Queues: f.h.Queues(), Store: f.store, Now: f.now.Now,
		Replica: "b", Lease: sharedLease, LeaseCheck: leaseCheck})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return f, b
}

func TestJobsAcrossReplicas(t *testing.T) {
	ctx := context.Background()

	inBubble(t, "a job is read and stopped through another replica", func(t *testing.T) {
		f, b := newReplicas(t)
		j := f.submit(t, scoring.JobSpec{Caller: asAdmin, Process: "sleep", Input: f.rows(t, `[{"x":1}]`)})
		running := f.wait(t, j.ID, jobs.StateRunning)
		if running.Replica != "a" || running.LeaseExpires.IsZero() {
			t.Errorf("running job %+v; want it claimed by a, with a lease", running)
		}
		seen, err := b.Job(ctx, asAdmin, j.ID)
		if err != nil || seen.State != jobs.StateRunning {
			t.Fatalf("b reads %+v, %v", seen, err)
		}
		asked := time.Now()
		stop, err := b.Stop(ctx, asAdmin, j.ID)
		if err != nil || !stop.StopRequested {
			t.Fatalf("b's Stop: %+v, %v; want the stop requested", stop, err)
		}
		stopped := f.wait(t, j.ID, jobs.StateStopped)
		// Within a lease check, as JobsConfig promises, and the 5 ms wait
		// polls at.
		if took := time.Since(asked); took > leaseCheck+5*time.Millisecond {
			t.Errorf("the stop took %s to reach a, want at most %s", took, leaseCheck)
		}
		if stopped.Error == nil || stopped.Error.Type != "stopped" {
			t.Errorf("stopped job %+v", stopped)
		}
		if _, err := b.Stop(ctx, asAdmin, j.ID); err == nil {
			t.Error("stopping an ended job through b succeeded")
		}
	})

	inBubble(t, "a job whose replica stopped renewing is ended by the others", func(t *testing.T) {
		f, _ := newReplicas(t)
		// A job of a replica that died: its lease runs out a minute on.
		ghost := jobs.Job{ID: "ghost", Revision: 1, State: jobs.StateRunning, Queue: registry.DefaultQueue,
			Process: "sleep", CreatedAt: f.now.Now(), StartedAt: f.now.Now(), Replica: "c", LeaseExpires: f.now.Now().Add(sharedLease)}
		if err := f.store.CreateJob(ctx, ghost); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * leaseCheck)
		if got, _ := f.store.Job(ctx, "ghost"); got.State != jobs.StateRunning {
			t.Fatalf("a job whose lease holds: %s, want RUNNING", got.State)
		}
		f.now.Advance(sharedLease)
		ended := f.wait(t, "ghost", jobs.StateError)
		if ended.Error == nil || ended.Error.Type != "interrupted" {
			t.Errorf("lapsed job %+v; want ERROR interrupted", ended)
		}
	})

	inBubble(t, "a replica lets go of a job another ended", func(t *testing.T) {
		f, _ := newReplicas(t)
		j := f.submit(t, scoring.JobSpec{Caller: asAdmin, Process: "sleep", Input: f.rows(t, `[{"x":1}]`)})
		running := f.wait(t, j.ID, jobs.StateRunning)
		ended := running
		ended.Revision, ended.State, ended.FinishedAt = running.Revision+1, jobs.StateError, f.now.Now()
		ended.Error = &jobs.ErrorInfo{Type: "interrupted", Title: "Job interrupted", Message: "ended elsewhere"}
		if err := f.store.UpdateJob(ctx, running.Revision, ended, nil); err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if err := f.jobs.Shutdown(sctx); err != nil {
			t.Errorf("a's Shutdown: %v; want its job let go of", err)
		}
		if got, _ := f.store.Job(ctx, j.ID); got.State != jobs.StateError || got.Error.Message != "ended elsewhere" {
			t.Errorf("job after a let go: %+v; want it as the other replica ended it", got)
		}
	})

	t.Run("a replica's configuration is checked", func(t *testing.T) {
		f := newJobsFixture(t)
		for name, c := range map[string]scoring.JobsConfig{
			"lease without replica": {Lease: time.Second},
			"check too slow":        {Replica: "a", Lease: time.Second, LeaseCheck: time.Second},
			"bad replica name":      {Replica: "a b"},
		} {
			c.Registry, c.Queues, c.Store = f.reg, f.h.Queues(), jobs.NewMemStore(registry.StoreOptions{})
			if _, err := scoring.NewJobs(c); err == nil {
				t.Errorf("%s: NewJobs succeeded", name)
			}
		}
	})
}
