package registrytest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
)

// JobOpener makes the job stores [RunJobStore] runs on.
type JobOpener struct {
	// Open returns a new, empty job store. Closing it at the end of the
	// test (t.Cleanup) is Open's to arrange.
	Open func(t *testing.T) jobs.Store
	// Reopen, for a durable store, closes s and returns a store over what
	// s kept, as the next start of a process would open it. Nil for a
	// store that keeps nothing past Close.
	Reopen func(t *testing.T, s jobs.Store) jobs.Store
}

// RunJobStore runs the conformance suite of [jobs.Store] on stores
// o opens: a store persists what it is given and applies no rule of a
// job's life, which [jobs.Registry] applies above it and its own
// tests check.
func RunJobStore(t *testing.T, o JobOpener) {
	ctx := context.Background()

	t.Run("a job is stored as given", func(t *testing.T) {
		s := o.Open(t)
		// Any state and times: a store stamps and checks nothing.
		j := job("a", jobs.StateRunning, 0)
		j.Endpoint = &process.EndpointRef{Group: "DEFAULT", Path: "p", Alias: "x"}
		j.StartedAt = epoch.Add(time.Second)
		if err := s.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		want := j
		want.Endpoint = &process.EndpointRef{Group: "DEFAULT", Path: "p", Alias: "x"}
		j.Endpoint.Alias = "changed by the caller" // the store keeps its own copy
		got := mustJob(t, s, "a")
		checkJob(t, "read back", got, want)
		got.Endpoint.Alias = "changed by a reader"
		checkJob(t, "read again", mustJob(t, s, "a"), want)
	})

	t.Run("an id is stored once", func(t *testing.T) {
		s := o.Open(t)
		first := job("a", jobs.StatePending, 0)
		mustCreate(t, s, first)
		second := job("a", jobs.StatePending, 1)
		second.Queue = "other"
		if err := s.CreateJob(ctx, second); !errors.Is(err, registry.ErrExists) {
			t.Errorf("second create: %v, want ErrExists", err)
		}
		checkJob(t, "after the refused create", mustJob(t, s, "a"), first)
	})

	t.Run("unknown jobs are not found", func(t *testing.T) {
		s := o.Open(t)
		if _, err := s.Job(ctx, "nope"); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("Job: %v, want ErrNotFound", err)
		}
		if err := s.UpdateJob(ctx, 1, job("nope", jobs.StateRunning, 0), nil); !errors.Is(err, registry.ErrNotFound) && !errors.Is(err, registry.ErrStale) {
			t.Errorf("UpdateJob: %v, want ErrNotFound or ErrStale", err)
		}
		if _, err := s.JobResult(ctx, "nope"); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("JobResult: %v, want ErrNotFound", err)
		}
		if n, err := s.DeleteJobs(ctx, []string{"nope"}); err != nil || n != 0 {
			t.Errorf("DeleteJobs: %d, %v; want 0, nil", n, err)
		}
	})

	t.Run("an update holds only while the revision it names does", func(t *testing.T) {
		s := o.Open(t)
		mustCreate(t, s, job("a", jobs.StatePending, 0))
		running := job("a", jobs.StateRunning, 0)
		running.Revision = 2
		running.StartedAt = epoch.Add(time.Second)
		running.Replica, running.LeaseExpires = "r1", epoch.Add(time.Minute)
		if err := s.UpdateJob(ctx, 1, running, nil); err != nil {
			t.Fatal(err)
		}
		checkJob(t, "after the update", mustJob(t, s, "a"), running)
		// A writer that decided on revision 1, as another replica might have.
		late := job("a", jobs.StateStopped, 0)
		late.Revision = 2
		if err := s.UpdateJob(ctx, 1, late, nil); !errors.Is(err, registry.ErrStale) {
			t.Errorf("update from a revision the job has left: %v, want ErrStale", err)
		}
		checkJob(t, "after the refused update", mustJob(t, s, "a"), running)
		// A change that keeps the state (a renewed lease) is a revision
		// too: a stop request decided before it is refused.
		renewed := running
		renewed.Revision, renewed.LeaseExpires = 3, epoch.Add(2*time.Minute)
		if err := s.UpdateJob(ctx, 2, renewed, nil); err != nil {
			t.Fatal(err)
		}
		stop := running
		stop.Revision, stop.StopRequested = 3, true
		if err := s.UpdateJob(ctx, 2, stop, nil); !errors.Is(err, registry.ErrStale) {
			t.Errorf("update decided before a renewal: %v, want ErrStale", err)
		}
		checkJob(t, "after the renewal", mustJob(t, s, "a"), renewed)
	})

	t.Run("writers racing for one job: one wins", func(t *testing.T) {
		s := o.Open(t)
		mustCreate(t, s, job("a", jobs.StatePending, 0))
		const writers = 8
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				next := job("a", jobs.StateRunning, 0)
				next.Revision = 2
				next.Process = fmt.Sprintf("p%d", i)
				errs[i] = s.UpdateJob(ctx, 1, next, nil)
			})
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Errorf("writers %d and %d both moved the job", won, i)
			case err == nil:
				won = i
			case !errors.Is(err, registry.ErrStale):
				t.Errorf("writer %d: %v, want nil or ErrStale", i, err)
			}
		}
		if won < 0 {
			t.Fatal("no writer moved the job")
		}
		if got := mustJob(t, s, "a").Process; got != fmt.Sprintf("p%d", won) {
			t.Errorf("stored job is writer %s's, want p%d's", got, won)
		}
	})

	t.Run("a result is stored with its job", func(t *testing.T) {
		s := o.Open(t)
		mustCreate(t, s, job("a", jobs.StateRunning, 0))
		if _, err := s.JobResult(ctx, "a"); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("result of a job given none: %v, want ErrNotFound", err)
		}
		for _, res := range [][]byte{[]byte(`{"data":[{"a":1}]}`), {}} {
			id := fmt.Sprintf("r%d", len(res))
			mustCreate(t, s, job(id, jobs.StateRunning, 0))
			if err := s.UpdateJob(ctx, 1, job(id, jobs.StateFinished, 0), res); err != nil {
				t.Fatal(err)
			}
			got, err := s.JobResult(ctx, id)
			if err != nil || string(got) != string(res) {
				t.Errorf("result %q, %v; want %q", got, err, res)
			}
		}
	})

	t.Run("list is newest first, filtered and paged", func(t *testing.T) {
		s := o.Open(t)
		for i, id := range []string{"j1", "j2", "j3", "j4"} {
			j := job(id, jobs.StatePending, i)
			if id == "j2" {
				j.Queue = "batch"
			}
			if id == "j3" {
				j.State = jobs.StateRunning
			}
			if id == "j1" || id == "j3" {
				j.Owner = "ann"
			}
			mustCreate(t, s, j)
		}
		// The same time: the greater ID first.
		mustCreate(t, s, job("j0", jobs.StatePending, 0))
		for _, tt := range []struct {
			f     jobs.Filter
			want  []string
			total int
		}{
			{jobs.Filter{}, []string{"j4", "j3", "j2", "j1", "j0"}, 5},
			{jobs.Filter{Queue: "batch"}, []string{"j2"}, 1},
			{jobs.Filter{State: jobs.StateRunning}, []string{"j3"}, 1},
			{jobs.Filter{State: jobs.StatePending, Queue: "DEFAULT"}, []string{"j4", "j1", "j0"}, 3},
			{jobs.Filter{Offset: 1, Limit: 2}, []string{"j3", "j2"}, 5},
			{jobs.Filter{Offset: 9}, []string{}, 5},
			{jobs.Filter{Owner: "ann"}, []string{"j3", "j1"}, 2},
			{jobs.Filter{Owner: "ann", State: jobs.StatePending}, []string{"j1"}, 1},
			{jobs.Filter{Owner: "bob"}, []string{}, 0},
			{jobs.Filter{CreatedFrom: epoch.Add(2 * time.Second)}, []string{"j4", "j3"}, 2},
			{jobs.Filter{CreatedFrom: epoch.Add(2*time.Second + time.Nanosecond)}, []string{"j4"}, 1},
			{jobs.Filter{Owner: "ann", CreatedFrom: epoch.Add(time.Second)}, []string{"j3"}, 1},
		} {
			t.Run(fmt.Sprintf("%+v", tt.f), func(t *testing.T) {
				got, total, err := s.Jobs(ctx, tt.f)
				if err != nil {
					t.Fatal(err)
				}
				if ids := jobIDs(got); !slices.Equal(ids, tt.want) || total != tt.total {
					t.Errorf("got %v of %d, want %v of %d", ids, total, tt.want, tt.total)
				}
			})
		}
	})

	t.Run("delete removes the set with its results", func(t *testing.T) {
		s := o.Open(t)
		for i, id := range []string{"a", "b", "c"} {
			mustCreate(t, s, job(id, jobs.StateRunning, i))
			if err := s.UpdateJob(ctx, 1, job(id, jobs.StateFinished, i), []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.DeleteJobs(ctx, []string{"a", "c", "nope"})
		if err != nil || n != 2 {
			t.Fatalf("DeleteJobs: %d, %v; want 2, nil", n, err)
		}
		got, _, err := s.Jobs(ctx, jobs.Filter{})
		if err != nil || !slices.Equal(jobIDs(got), []string{"b"}) {
			t.Errorf("left %v, %v; want [b]", jobIDs(got), err)
		}
		if _, err := s.JobResult(ctx, "a"); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("result of a removed job: %v, want ErrNotFound", err)
		}
		// The ID is free again.
		mustCreate(t, s, job("a", jobs.StatePending, 5))
		if _, err := s.JobResult(ctx, "a"); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("result of a new job under a removed job's ID: %v, want ErrNotFound", err)
		}
	})

	t.Run("what was stored loads back", func(t *testing.T) {
		if o.Reopen == nil {
			return // the store keeps nothing past Close
		}
		s := o.Open(t)
		pending := job("pending", jobs.StatePending, 0)
		running := job("running", jobs.StateRunning, 1)
		finished := job("finished", jobs.StateFinished, 2)
		finished.Revision = 2
		finished.FinishedAt = epoch.Add(time.Hour)
		running.Replica, running.LeaseExpires, running.StopRequested = "r1", epoch.Add(time.Minute), true
		failed := job("failed", jobs.StateError, 3)
		failed.Error = &jobs.ErrorInfo{Type: "failed", Title: "Failed", Message: "it <failed>"}
		for _, j := range []jobs.Job{pending, running, failed} {
			mustCreate(t, s, j)
		}
		mustCreate(t, s, job("finished", jobs.StateRunning, 2))
		if err := s.UpdateJob(ctx, 1, finished, []byte(`{"data":[]}`)); err != nil {
			t.Fatal(err)
		}
		before, _, err := s.Jobs(ctx, jobs.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		re := o.Reopen(t, s)
		after, _, err := re.Jobs(ctx, jobs.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(inUTC(before...), inUTC(after...)) {
			t.Errorf("reopened store holds\n%+v\nwant\n%+v", after, before)
		}
		if res, err := re.JobResult(ctx, "finished"); err != nil || string(res) != `{"data":[]}` {
			t.Errorf("result after reopening: %q, %v", res, err)
		}
	})

	t.Run("a done context changes nothing", func(t *testing.T) {
		s := o.Open(t)
		mustCreate(t, s, job("a", jobs.StatePending, 0))
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.CreateJob(cctx, job("b", jobs.StatePending, 0)); !errors.Is(err, context.Canceled) {
			t.Errorf("CreateJob: %v, want context.Canceled", err)
		}
		if err := s.UpdateJob(cctx, 1, job("a", jobs.StateRunning, 0), nil); !errors.Is(err, context.Canceled) {
			t.Errorf("UpdateJob: %v, want context.Canceled", err)
		}
		if _, err := s.DeleteJobs(cctx, []string{"a"}); !errors.Is(err, context.Canceled) {
			t.Errorf("DeleteJobs: %v, want context.Canceled", err)
		}
		got, _, err := s.Jobs(ctx, jobs.Filter{})
		if err != nil || !slices.Equal(jobIDs(got), []string{"a"}) || got[0].State != jobs.StatePending {
			t.Errorf("store holds %+v, %v; want job a PENDING only", got, err)
		}
	})

	t.Run("a closed store refuses every call", func(t *testing.T) {
		s := o.Open(t)
		mustCreate(t, s, job("a", jobs.StatePending, 0))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		calls := map[string]func() error{
			"CreateJob": func() error { return s.CreateJob(ctx, job("b", jobs.StatePending, 0)) },
			"UpdateJob": func() error { return s.UpdateJob(ctx, 1, job("a", jobs.StateRunning, 0), nil) },
			"Job":       func() error { _, err := s.Job(ctx, "a"); return err },
			"Jobs":      func() error { _, _, err := s.Jobs(ctx, jobs.Filter{}); return err },
			"JobResult": func() error { _, err := s.JobResult(ctx, "a"); return err },
			"DeleteJobs": func() error {
				_, err := s.DeleteJobs(ctx, []string{"a"})
				return err
			},
		}
		for name, call := range calls {
			if err := call(); !errors.Is(err, registry.ErrClosed) {
				t.Errorf("%s after Close: %v, want ErrClosed", name, err)
			}
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// job returns a job in state at revision 1, created i seconds after epoch.
func job(id string, state jobs.State, i int) jobs.Job {
	return jobs.Job{ID: id, Revision: 1, State: state, Queue: "DEFAULT", Process: "iris", Rows: 1,
		CreatedAt: epoch.Add(time.Duration(i) * time.Second)}
}

func mustCreate(t *testing.T, s jobs.Store, j jobs.Job) {
	t.Helper()
	if err := s.CreateJob(context.Background(), j); err != nil {
		t.Fatal(err)
	}
}

func mustJob(t *testing.T, s jobs.Store, id string) jobs.Job {
	t.Helper()
	j, err := s.Job(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func checkJob(t *testing.T, what string, got, want jobs.Job) {
	t.Helper()
	if !reflect.DeepEqual(inUTC(got), inUTC(want)) {
		t.Errorf("%s: %+v, want %+v", what, got, want)
	}
}

// inUTC returns jobs with their times in UTC, so that they compare by the
// instants they hold, whatever location a store reads times back in.
func inUTC(list ...jobs.Job) []jobs.Job {
	out := make([]jobs.Job, len(list))
	for i, j := range list {
		j.CreatedAt, j.StartedAt, j.FinishedAt = j.CreatedAt.UTC(), j.StartedAt.UTC(), j.FinishedAt.UTC()
		j.LeaseExpires = j.LeaseExpires.UTC()
		out[i] = j
	}
	return out
}

func jobIDs(jobs []jobs.Job) []string {
	out := []string{}
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return out
}
