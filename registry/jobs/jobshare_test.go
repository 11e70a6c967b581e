package jobs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
)

// sharedJobs returns two replicas, a and b, sharing one job store, with
// leases of a minute measured by clk.
func sharedJobs(t *testing.T, clk *testutil.Clock) (s jobs.Store, a, b *jobs.Registry) {
	t.Helper()
	s = jobs.NewMemStore(registry.StoreOptions{Now: clk.Now})
	t.Cleanup(func() { s.Close() })
	return s, newSharedJobRegistry(t, s, "a", clk), newSharedJobRegistry(t, s, "b", clk)
}

func newSharedJobRegistry(t *testing.T, s jobs.Store, replica string, clk *testutil.Clock) *jobs.Registry {
	t.Helper()
	r, err := jobs.NewSharedRegistry(context.Background(), s, jobs.Lease{Replica: replica, Duration: time.Minute, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// interruptedJob reports whether j was ended as a job its replica
// stopped running: ERROR, of type interrupted.
func interruptedJob(j jobs.Job) bool {
	return j.State == jobs.StateError && j.Error != nil && j.Error.Type == "interrupted"
}

func TestSharedJobRegistry(t *testing.T) {
	ctx := context.Background()

	t.Run("a job belongs to the replica that creates and claims it", func(t *testing.T) {
		clk := newClock()
		_, a, _ := sharedJobs(t, clk)
		j := mustCreate(t, a, "j", "DEFAULT")
		if j.Replica != "a" || !j.LeaseExpires.Equal(clk.Now().Add(time.Minute)) || j.Revision != 1 {
			t.Errorf("created %+v; want replica a, a lease of a minute, revision 1", j)
		}
		clk.Advance(10 * time.Second)
		j = mustUpdate(t, a, "j", jobs.StateRunning, nil)
		if j.Replica != "a" || !j.LeaseExpires.Equal(clk.Now().Add(time.Minute)) || j.Revision != 2 {
			t.Errorf("claimed %+v; want replica a, the lease from the claim, revision 2", j)
		}
	})

	t.Run("a replica starting leaves the others' jobs alone", func(t *testing.T) {
		clk := newClock()
		s, a, _ := sharedJobs(t, clk)
		mustCreate(t, a, "j", "DEFAULT")
		mustUpdate(t, a, "j", jobs.StateRunning, nil)
		newSharedJobRegistry(t, s, "c", clk)
		if got, _ := s.Job(ctx, "j"); got.State != jobs.StateRunning {
			t.Errorf("a's job after c started: %s, want RUNNING", got.State)
		}
		// The unshared registry assumes the store is its own, and ends it.
		newJobRegistry(t, s)
		if got, _ := s.Job(ctx, "j"); !interruptedJob(got) {
			t.Errorf("a's job after an unshared registry started: %+v, want ERROR interrupted", got)
		}
	})

	t.Run("a replica started again ends its previous life's jobs", func(t *testing.T) {
		clk := newClock()
		s, a, _ := sharedJobs(t, clk)
		mustCreate(t, a, "j", "DEFAULT")
		newSharedJobRegistry(t, s, "a", clk)
		if got, _ := s.Job(ctx, "j"); !interruptedJob(got) {
			t.Errorf("job of a's previous life: %+v, want ERROR interrupted", got)
		}
	})

	t.Run("renewed leases hold; lapsed ones are ended by the others", func(t *testing.T) {
		clk := newClock()
		s, a, b := sharedJobs(t, clk)
		mustCreate(t, a, "kept", "DEFAULT")
		mustUpdate(t, a, "kept", jobs.StateRunning, nil)
		mustCreate(t, a, "lost", "DEFAULT")

		// A third in, a renewal changes nothing: two thirds remain.
		clk.Advance(20 * time.Second)
		before, _ := s.Job(ctx, "kept")
		if got, err := a.Renew(ctx, "kept"); err != nil || got.Revision != before.Revision {
			t.Fatalf("early renewal: %+v, %v; want the job unchanged", got, err)
		}
		clk.Advance(time.Second)
		got, err := a.Renew(ctx, "kept")
		if err != nil || !got.LeaseExpires.Equal(clk.Now().Add(time.Minute)) {
			t.Fatalf("renewal: %+v, %v; want a minute from now", got, err)
		}
		// b may neither renew nor take a's job.
		if got, err := b.Renew(ctx, "kept"); err != nil || got.Replica != "a" || got.Revision != before.Revision+1 {
			t.Errorf("b renewing a's job: %+v, %v; want it unchanged", got, err)
		}

		// "lost" was never renewed: a minute after its creation it lapses.
		clk.Advance(38 * time.Second)
		if n, err := b.EndLapsed(ctx); err != nil || n != 0 {
			t.Fatalf("EndLapsed before any lease lapsed: %d, %v", n, err)
		}
		clk.Advance(time.Second)
		if n, err := b.EndLapsed(ctx); err != nil || n != 1 {
			t.Fatalf("EndLapsed: %d, %v; want 1", n, err)
		}
		lost, _ := s.Job(ctx, "lost")
		if !interruptedJob(lost) || !lost.FinishedAt.Equal(clk.Now()) {
			t.Errorf("lapsed job: %+v; want ERROR interrupted, now", lost)
		}
		if kept, _ := s.Job(ctx, "kept"); kept.State != jobs.StateRunning {
			t.Errorf("renewed job: %s, want RUNNING", kept.State)
		}
		// a learns of it when it next renews, and may not end it again.
		if got, err := a.Renew(ctx, "lost"); err != nil || got.State != jobs.StateError {
			t.Errorf("a renewing its ended job: %+v, %v; want it ERROR", got, err)
		}
		if _, err := a.Update(ctx, "lost", jobs.StateStopped, nil, nil); !errors.Is(err, jobs.ErrTransition) {
			t.Errorf("a ending a job b ended: %v, want ErrJobTransition", err)
		}
		// A replica never ends its own jobs as lapsed: it is alive.
		clk.Advance(time.Hour)
		if n, err := a.EndLapsed(ctx); err != nil || n != 0 {
			t.Errorf("a's EndLapsed of its own jobs: %d, %v; want 0", n, err)
		}
	})

	t.Run("a lease renewed between the read and the write holds", func(t *testing.T) {
		clk := newClock()
		mem := jobs.NewMemStore(registry.StoreOptions{Now: clk.Now})
		t.Cleanup(func() { mem.Close() })
		s := &racingJobStore{Store: mem}
		a := newSharedJobRegistry(t, s, "a", clk)
		b := newSharedJobRegistry(t, s, "b", clk)
		mustCreate(t, a, "j", "DEFAULT")
		clk.Advance(time.Minute)
		// b reads the job lapsed; before its write, a renews.
		s.race = func() {
			if _, err := a.Renew(ctx, "j"); err != nil {
				t.Error(err)
			}
		}
		if n, err := b.EndLapsed(ctx); err != nil || n != 0 {
			t.Fatalf("EndLapsed: %d, %v; want 0", n, err)
		}
		if got, _ := s.Job(ctx, "j"); got.State != jobs.StatePending {
			t.Errorf("job renewed while b decided: %s, want PENDING", got.State)
		}
	})

	t.Run("a stop asked through one replica reaches the one running the job", func(t *testing.T) {
		clk := newClock()
		s, a, b := sharedJobs(t, clk)
		mustCreate(t, a, "j", "DEFAULT")
		mustUpdate(t, a, "j", jobs.StateRunning, nil)
		clk.Advance(30 * time.Second)
		// The stop and a renewal race: both are kept.
		s2 := &racingJobStore{Store: s}
		b2 := newSharedJobRegistry(t, s2, "b2", clk)
		s2.race = func() {
			if _, err := a.Renew(ctx, "j"); err != nil {
				t.Error(err)
			}
		}
		if got, err := b2.RequestStop(ctx, "j"); err != nil || !got.StopRequested {
			t.Fatalf("RequestStop: %+v, %v", got, err)
		}
		got, err := a.Renew(ctx, "j")
		if err != nil || !got.StopRequested || !got.LeaseExpires.Equal(clk.Now().Add(time.Minute)) {
			t.Errorf("a's renewal after the stop request: %+v, %v; want the stop and the renewed lease", got, err)
		}
		mustUpdate(t, a, "j", jobs.StateStopped, nil)
		if _, err := b.RequestStop(ctx, "j"); !errors.Is(err, jobs.ErrTransition) {
			t.Errorf("stopping an ended job: %v, want ErrJobTransition", err)
		}
	})

	t.Run("a replica needs a name", func(t *testing.T) {
		s := jobs.NewMemStore(registry.StoreOptions{})
		defer s.Close()
		for _, l := range []jobs.Lease{{}, {Replica: "a/b"}, {Replica: "a", Duration: -time.Second}} {
			if _, err := jobs.NewSharedRegistry(ctx, s, l); err == nil {
				t.Errorf("NewSharedJobRegistry(%+v) succeeded", l)
			}
		}
	})
}
