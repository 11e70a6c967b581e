package scoring_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// TestJobsRestrictedCaller: a caller restricted to some web API groups is
// never an administrator, whatever its Admin says: it runs no catalog
// process, no job on another queue and no job naming an endpoint of
// another group, and sees only its own jobs on its groups.
func TestJobsRestrictedCaller(t *testing.T) {
	ctx := context.Background()
	f := newJobsFixture(t)
	double := &process.EndpointRef{Group: registry.DefaultGroup, Path: "demo", Alias: "double"}
	elsewhere := scoring.Caller{Subject: "admin", Admin: true, WebAPIGroups: []string{"other"}}
	here := scoring.Caller{Subject: "admin", Admin: true, WebAPIGroups: []string{registry.DefaultGroup}}
	for _, c := range []struct {
		name string
		spec scoring.JobSpec
	}{
		{"a catalog process", scoring.JobSpec{Caller: here, Process: "double"}},
		{"another group's endpoint", scoring.JobSpec{Caller: elsewhere, Endpoint: double}},
		{"another queue", scoring.JobSpec{Caller: here, Endpoint: double, Queue: "other"}},
	} {
		c.spec.Input = f.rows(t, `[{"x":1}]`)
		_, err := f.jobs.Submit(ctx, c.spec)
		if e := httperr.From(err); err == nil || e.Status != 403 {
			t.Errorf("%s: %v, want 403", c.name, err)
		}
	}
	own := f.submit(t, scoring.JobSpec{Caller: here, Endpoint: double, Input: f.rows(t, `[{"x":1}]`)})
	other := f.submit(t, scoring.JobSpec{Caller: scoring.Caller{Subject: "bob"}, Endpoint: double, Input: f.rows(t, `[{"x":1}]`)})
	if _, err := f.jobs.Job(ctx, here, own.ID); err != nil {
		t.Errorf("the restricted caller reads its job: %v", err)
	}
	for _, c := range []struct {
		name   string
		caller scoring.Caller
		id     string
	}{{"another user's job", here, other.ID}, {"its owner's job on another group", elsewhere, own.ID}} {
		if _, err := f.jobs.Job(ctx, c.caller, c.id); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("%s: %v, want not found", c.name, err)
		}
		if _, err := f.jobs.Stop(ctx, c.caller, c.id); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("stop %s: %v, want not found", c.name, err)
		}
	}
	if list, total, err := f.jobs.List(ctx, here, jobs.Filter{}); err != nil || total != 0 || len(list) != 0 {
		t.Errorf("a restricted caller lists %d jobs, %v; want none", total, err)
	}
}

// TestJobsOfAnEarlierAccount: a caller whose account was made after a job
// of its name (Caller.Since) does not see it, and StopOwner stops the jobs
// of a name that have not ended.
func TestJobsOfAnEarlierAccount(t *testing.T) {
	ctx := context.Background()
	f := newJobsFixture(t)
	old := scoring.Caller{Subject: "ann"}
	done := f.submit(t, scoring.JobSpec{Caller: old, Endpoint: &process.EndpointRef{Group: registry.DefaultGroup, Path: "demo", Alias: "double"},
		Input: f.rows(t, `[{"x":1}]`)})
	f.wait(t, done.ID, jobs.StateFinished)
	running := f.submit(t, scoring.JobSpec{Caller: old, Endpoint: &process.EndpointRef{Group: registry.DefaultGroup, Path: "demo", Alias: "block"},
		Input: f.rows(t, `[{"x":1}]`)})
	<-f.procs.started

	n, err := f.jobs.StopOwner(ctx, "ann")
	if err != nil || n != 1 {
		t.Fatalf("StopOwner = %d, %v; want the one running job", n, err)
	}
	close(f.procs.release) // it ends STOPPED once its process returns
	f.wait(t, running.ID, jobs.StateStopped)

	renewed := scoring.Caller{Subject: "ann", Since: f.now.Advance(time.Second)}
	for _, id := range []string{done.ID, running.ID} {
		if _, err := f.jobs.Job(ctx, renewed, id); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("the new ann reads a job of the old one: %v, want not found", err)
		}
	}
	if _, err := f.jobs.Result(ctx, renewed, done.ID); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("the new ann reads a result of the old one: %v, want not found", err)
	}
	if _, total, err := f.jobs.List(ctx, renewed, jobs.Filter{}); err != nil || total != 0 {
		t.Errorf("the new ann lists %d jobs, %v; want none", total, err)
	}
	if _, total, _ := f.jobs.List(ctx, old, jobs.Filter{}); total != 2 {
		t.Errorf("a caller without Since lists %d jobs of its name, want 2", total)
	}
}
