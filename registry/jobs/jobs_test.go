package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
)

// Every pair of states: only the changes of a job's life are allowed.
func TestJobTransitions(t *testing.T) {
	allowed := map[[2]jobs.State]bool{
		{jobs.StatePending, jobs.StateRunning}:  true,
		{jobs.StatePending, jobs.StateError}:    true,
		{jobs.StatePending, jobs.StateStopped}:  true,
		{jobs.StateRunning, jobs.StateFinished}: true,
		{jobs.StateRunning, jobs.StateError}:    true,
		{jobs.StateRunning, jobs.StateStopped}:  true,
		{jobs.StateRunning, jobs.StateTimedOut}: true,
	}
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, from := range jobs.States() {
		for _, to := range jobs.States() {
			t.Run(string(from)+"→"+string(to), func(t *testing.T) {
				want := allowed[[2]jobs.State{from, to}]
				j := jobs.Job{ID: "j", State: from}
				jerr := &jobs.ErrorInfo{Type: "x", Title: "X", Message: "x."}
				next, err := j.Transition(to, now, jerr)
				if !want {
					wantMsg := fmt.Sprintf(`registry: job "j" cannot go from %s to %s`, from, to)
					if !errors.Is(err, jobs.ErrTransition) || err.Error() != wantMsg {
						t.Fatalf("Transition error %v, want ErrJobTransition saying %q", err, wantMsg)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if next.State != to {
					t.Errorf("state %s, want %s", next.State, to)
				}
				if (to == jobs.StateRunning) != !next.StartedAt.IsZero() {
					t.Errorf("StartedAt %v after going to %s", next.StartedAt, to)
				}
				if to.Final() != !next.FinishedAt.IsZero() {
					t.Errorf("FinishedAt %v after going to %s", next.FinishedAt, to)
				}
				if wantErr := to.Final() && to != jobs.StateFinished; wantErr != (next.Error != nil) {
					t.Errorf("Error %v after going to %s", next.Error, to)
				}
			})
		}
	}
}

func TestJobStoreConformance(t *testing.T) {
	t.Run("MemJobStore", func(t *testing.T) {
		registrytest.RunJobStore(t, registrytest.JobOpener{Open: func(t *testing.T) jobs.Store {
			s := jobs.NewMemStore(registry.StoreOptions{})
			t.Cleanup(func() { s.Close() })
			return s
		}})
	})
	t.Run("FileJobStore", func(t *testing.T) {
		var mu sync.Mutex
		dirs := make(map[jobs.Store]string)
		registrytest.RunJobStore(t, registrytest.JobOpener{
			Open: func(t *testing.T) jobs.Store {
				dir := t.TempDir()
				s := openFileJobStore(t, dir, registry.StoreOptions{})
				mu.Lock()
				dirs[s] = dir
				mu.Unlock()
				return s
			},
			Reopen: func(t *testing.T, s jobs.Store) jobs.Store {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				dir := dirs[s]
				mu.Unlock()
				return openFileJobStore(t, dir, registry.StoreOptions{})
			},
		})
	})
}

type jobStoreKind struct {
	name string
	open func(t *testing.T, dir string, opts registry.StoreOptions) jobs.Store
}

func jobStoreKinds() []jobStoreKind {
	return []jobStoreKind{
		{"MemJobStore", func(t *testing.T, _ string, opts registry.StoreOptions) jobs.Store {
			s := jobs.NewMemStore(opts)
			t.Cleanup(func() { s.Close() })
			return s
		}},
		{"FileJobStore", func(t *testing.T, dir string, opts registry.StoreOptions) jobs.Store {
			return openFileJobStore(t, dir, opts)
		}},
	}
}

func openFileJobStore(t *testing.T, dir string, opts registry.StoreOptions) *jobs.FileStore {
	t.Helper()
	s, err := jobs.OpenFileStore(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newJobRegistry(t *testing.T, s jobs.Store) *jobs.Registry {
	t.Helper()
	r, err := jobs.NewRegistry(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustCreate(t *testing.T, r *jobs.Registry, id, queue string) jobs.Job {
	t.Helper()
	j, err := r.Create(context.Background(), jobs.Job{ID: id, Queue: queue, Process: "iris", Rows: 1})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func mustUpdate(t *testing.T, r *jobs.Registry, id string, to jobs.State, result []byte) jobs.Job {
	t.Helper()
	var jerr *jobs.ErrorInfo
	if to != jobs.StateFinished && to.Final() {
		jerr = &jobs.ErrorInfo{Type: "failed", Title: "Failed", Message: "it failed."}
	}
	j, err := r.Update(context.Background(), id, to, jerr, result)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func ids(jobs []jobs.Job) []string {
	out := []string{}
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return out
}

// interrupted is the Error a restart gives the jobs it ends.
var interrupted = jobs.ErrorInfo{Type: "interrupted", Title: "Job interrupted", Message: "the server stopped before the job finished"}

// The rules of a job write, over every job store of the package.
func TestJobRegistry(t *testing.T) {
	ctx := context.Background()
	for _, k := range jobStoreKinds() {
		t.Run(k.name, func(t *testing.T) {
			tests := []struct {
				name string
				run  func(t *testing.T, s jobs.Store, r *jobs.Registry, clk *testutil.Clock)
			}{
				{"create stamps a pending job", func(t *testing.T, s jobs.Store, r *jobs.Registry, clk *testutil.Clock) {
					j, err := r.Create(ctx, jobs.Job{ID: "a", State: jobs.StateFinished, Queue: "DEFAULT", Process: "iris",
						Endpoint: &process.EndpointRef{Group: "DEFAULT", Path: "p", Alias: "x"}})
					if err != nil {
						t.Fatal(err)
					}
					want := jobs.Job{ID: "a", Revision: 1, State: jobs.StatePending, Queue: "DEFAULT", Process: "iris",
						Endpoint: &process.EndpointRef{Group: "DEFAULT", Path: "p", Alias: "x"}, CreatedAt: clk.Now()}
					if d := cmp.Diff(want, j); d != "" {
						t.Errorf("created (-want +got):\n%s", d)
					}
					got, err := s.Job(ctx, "a")
					if err != nil {
						t.Fatal(err)
					}
					if d := cmp.Diff(want, got); d != "" {
						t.Errorf("read back (-want +got):\n%s", d)
					}
				}},
				{"a job may run a model version", func(t *testing.T, _ jobs.Store, r *jobs.Registry, _ *testutil.Clock) {
					if _, err := r.Create(ctx, jobs.Job{ID: "m", Queue: "DEFAULT", Process: "churn@3"}); err != nil {
						t.Errorf("a job running churn@3: %v", err)
					}
				}},
				{"an id is used once", func(t *testing.T, _ jobs.Store, r *jobs.Registry, _ *testutil.Clock) {
					mustCreate(t, r, "a", "DEFAULT")
					if _, err := r.Create(ctx, jobs.Job{ID: "a", Queue: "DEFAULT", Process: "iris"}); !errors.Is(err, registry.ErrExists) {
						t.Errorf("second create: %v, want ErrExists", err)
					}
				}},
				{"invalid fields are refused", func(t *testing.T, s jobs.Store, r *jobs.Registry, _ *testutil.Clock) {
					for _, j := range []jobs.Job{{ID: "../x", Queue: "DEFAULT", Process: "iris"}, {ID: "a", Queue: "", Process: "iris"}, {ID: "a", Queue: "DEFAULT"},
						{ID: "a", Queue: "DEFAULT", Process: "churn@production"}} { // a model job names the version it ran
						if _, err := r.Create(ctx, j); !errors.Is(err, registry.ErrInvalid) {
							t.Errorf("create %+v: %v, want ErrInvalid", j, err)
						}
					}
					if _, n, _ := s.Jobs(ctx, jobs.Filter{}); n != 0 {
						t.Errorf("%d invalid jobs stored", n)
					}
				}},
				{"unknown jobs are not found", func(t *testing.T, _ jobs.Store, r *jobs.Registry, _ *testutil.Clock) {
					if _, err := r.Update(ctx, "nope", jobs.StateRunning, nil, nil); !errors.Is(err, registry.ErrNotFound) {
						t.Errorf("Update: %v", err)
					}
				}},
				{"updates stamp times and keep the result", func(t *testing.T, s jobs.Store, r *jobs.Registry, clk *testutil.Clock) {
					mustCreate(t, r, "a", "DEFAULT")
					started := clk.Advance(time.Second)
					mustUpdate(t, r, "a", jobs.StateRunning, nil)
					if _, err := s.JobResult(ctx, "a"); !errors.Is(err, registry.ErrNotFound) {
						t.Errorf("result of a running job: %v", err)
					}
					finished := clk.Advance(time.Second)
					j := mustUpdate(t, r, "a", jobs.StateFinished, []byte(`{"data":[]}`))
					if !j.StartedAt.Equal(started) || !j.FinishedAt.Equal(finished) || j.State != jobs.StateFinished {
						t.Errorf("job %+v", j)
					}
					if got, err := s.Job(ctx, "a"); err != nil || !cmp.Equal(got, j) {
						t.Errorf("stored %+v, %v; want %+v", got, err, j)
					}
					res, err := s.JobResult(ctx, "a")
					if err != nil || string(res) != `{"data":[]}` {
						t.Errorf("result %q, %v", res, err)
					}
					if _, err := r.Update(ctx, "a", jobs.StateStopped, nil, nil); !errors.Is(err, jobs.ErrTransition) {
						t.Errorf("stopping a finished job: %v, want ErrJobTransition", err)
					}
				}},
				{"only a finished job has a result", func(t *testing.T, s jobs.Store, r *jobs.Registry, _ *testutil.Clock) {
					mustCreate(t, r, "failed", "DEFAULT")
					mustUpdate(t, r, "failed", jobs.StateRunning, nil)
					mustUpdate(t, r, "failed", jobs.StateError, []byte(`{"data":[]}`))
					if _, err := s.JobResult(ctx, "failed"); !errors.Is(err, registry.ErrNotFound) {
						t.Errorf("result of a failed job: %v, want ErrNotFound", err)
					}
					mustCreate(t, r, "empty", "DEFAULT")
					mustUpdate(t, r, "empty", jobs.StateRunning, nil)
					mustUpdate(t, r, "empty", jobs.StateFinished, nil)
					if res, err := s.JobResult(ctx, "empty"); err != nil || len(res) != 0 {
						t.Errorf("result of a job finished without one: %q, %v; want empty", res, err)
					}
				}},
				{"retention removes old and surplus ended jobs only", func(t *testing.T, s jobs.Store, r *jobs.Registry, clk *testutil.Clock) {
					for _, id := range []string{"old", "mid", "new", "run"} {
						mustCreate(t, r, id, "DEFAULT")
						mustUpdate(t, r, id, jobs.StateRunning, nil)
						if id != "run" {
							mustUpdate(t, r, id, jobs.StateFinished, []byte(`{"data":[]}`))
						}
						clk.Advance(time.Hour)
					}
					n, err := r.Delete(ctx, jobs.Retention{Before: clk.Now().Add(-3 * time.Hour)})
					if err != nil || n != 1 {
						t.Fatalf("by age: removed %d, %v; want 1", n, err)
					}
					n, err = r.Delete(ctx, jobs.Retention{MaxEnded: 1})
					if err != nil || n != 1 {
						t.Fatalf("by count: removed %d, %v; want 1", n, err)
					}
					got, _, _ := s.Jobs(ctx, jobs.Filter{})
					if d := cmp.Diff([]string{"run", "new"}, ids(got)); d != "" {
						t.Errorf("left (-want +got):\n%s", d)
					}
					if _, err := s.JobResult(ctx, "mid"); !errors.Is(err, registry.ErrNotFound) {
						t.Errorf("result of a removed job: %v", err)
					}
				}},
				{"a new registry ends the jobs that had not ended", func(t *testing.T, s jobs.Store, r *jobs.Registry, clk *testutil.Clock) {
					mustCreate(t, r, "pending", "DEFAULT")
					mustCreate(t, r, "running", "DEFAULT")
					mustUpdate(t, r, "running", jobs.StateRunning, nil)
					mustCreate(t, r, "done", "DEFAULT")
					mustUpdate(t, r, "done", jobs.StateRunning, nil)
					done := mustUpdate(t, r, "done", jobs.StateFinished, nil)
					restarted := clk.Advance(time.Minute)
					newJobRegistry(t, s)
					for _, id := range []string{"pending", "running"} {
						j, err := s.Job(ctx, id)
						if err != nil {
							t.Fatal(err)
						}
						if j.State != jobs.StateError || !j.FinishedAt.Equal(restarted) || j.Error == nil || *j.Error != interrupted {
							t.Errorf("%s after restart: %+v", id, j)
						}
					}
					if j, err := s.Job(ctx, "done"); err != nil || !cmp.Equal(j, done) {
						t.Errorf("done after restart: %+v, %v; want %+v", j, err, done)
					}
				}},
				{"closed stores refuse", func(t *testing.T, s jobs.Store, r *jobs.Registry, _ *testutil.Clock) {
					s.Close()
					if _, err := r.Create(ctx, jobs.Job{ID: "a", Queue: "DEFAULT", Process: "iris"}); !errors.Is(err, registry.ErrClosed) {
						t.Errorf("create on a closed store: %v", err)
					}
					if _, err := jobs.NewRegistry(ctx, s); !errors.Is(err, registry.ErrClosed) {
						t.Errorf("NewJobRegistry on a closed store: %v", err)
					}
				}},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					clk := newClock()
					s := k.open(t, t.TempDir(), registry.StoreOptions{Now: clk.Now})
					tt.run(t, s, newJobRegistry(t, s), clk)
				})
			}
		})
	}
}

// A racing writer that moves a job between a Registry's read and its
// write makes the registry decide afresh, on the state the writer left.
func TestJobRegistryDecidesAfreshOnStale(t *testing.T) {
	ctx := context.Background()
	s := &racingJobStore{Store: jobs.NewMemStore(registry.StoreOptions{})}
	r := newJobRegistry(t, s)
	mustCreate(t, r, "a", "DEFAULT")
	mustUpdate(t, r, "a", jobs.StateRunning, nil)
	// Between the registry's read and its write, another writer stops
	// the job: finishing it is then no longer allowed.
	s.race = func() {
		stopped, _ := s.Store.Job(ctx, "a")
		stopped.State = jobs.StateStopped
		stopped.Revision++
		if err := s.Store.UpdateJob(ctx, stopped.Revision-1, stopped, nil); err != nil {
			t.Error(err)
		}
	}
	if _, err := r.Update(ctx, "a", jobs.StateFinished, nil, []byte(`{}`)); !errors.Is(err, jobs.ErrTransition) {
		t.Errorf("finishing a job stopped meanwhile: %v, want ErrJobTransition", err)
	}
	if j, _ := s.Job(ctx, "a"); j.State != jobs.StateStopped {
		t.Errorf("job is %s, want STOPPED", j.State)
	}
	if _, err := s.JobResult(ctx, "a"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("a stopped job got a result: %v", err)
	}
}

// racingJobStore runs race once, before the first update it is given.
type racingJobStore struct {
	jobs.Store
	race func()
}

func (s *racingJobStore) UpdateJob(ctx context.Context, base uint64, j jobs.Job, result []byte) error {
	if race := s.race; race != nil {
		s.race = nil
		race()
	}
	return s.Store.UpdateJob(ctx, base, j, result)
}

// A restart ends the jobs it interrupted as ERROR, keeps the others with
// their results, and cleans up what a crash left.
func TestFileJobStoreReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clk := newClock()
	s, err := jobs.OpenFileStore(dir, registry.StoreOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	r := newJobRegistry(t, s)
	mustCreate(t, r, "pending", "DEFAULT")
	mustCreate(t, r, "running", "DEFAULT")
	mustUpdate(t, r, "running", jobs.StateRunning, nil)
	mustCreate(t, r, "done", "DEFAULT")
	mustUpdate(t, r, "done", jobs.StateRunning, nil)
	mustUpdate(t, r, "done", jobs.StateFinished, []byte(`{"data":[{"a":1}]}`))
	if _, err := jobs.OpenFileStore(dir, registry.StoreOptions{}); !errors.Is(err, registry.ErrLocked) {
		t.Errorf("second open: %v, want ErrLocked", err)
	}
	s.Close()
	// What a crash can leave: a temporary file, a result without its job,
	// a result written for a job the crash kept from being marked FINISHED.
	for _, name := range []string{".tmp-123", "ghost.result.json", "running.result.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	restarted := clk.Advance(time.Minute)
	s2 := openFileJobStore(t, dir, registry.StoreOptions{Now: clk.Now})
	newJobRegistry(t, s2)
	for _, id := range []string{"pending", "running"} {
		j, err := s2.Job(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != jobs.StateError || !j.FinishedAt.Equal(restarted) || j.Error == nil || *j.Error != interrupted {
			t.Errorf("%s after restart: %+v", id, j)
		}
	}
	j, err := s2.Job(ctx, "done")
	if err != nil || j.State != jobs.StateFinished {
		t.Errorf("done after restart: %+v, %v", j, err)
	}
	if res, err := s2.JobResult(ctx, "done"); err != nil || string(res) != `{"data":[{"a":1}]}` {
		t.Errorf("result after restart: %q, %v", res, err)
	}
	for _, name := range []string{".tmp-123", "ghost.result.json", "running.result.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was not removed: %v", name, err)
		}
	}
}

func TestFileJobStoreRefusesCorruptFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.job.json"), []byte(`{"format":1,"id":"x","state":"DONE"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.OpenFileStore(dir, registry.StoreOptions{}); err == nil {
		t.Fatal("opened a store with a job in an unknown state")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.job.json")); err != nil {
		t.Errorf("the bad file was not kept: %v", err)
	}
}

func ExampleJob_Transition() {
	j := jobs.Job{ID: "j", State: jobs.StatePending}
	for _, to := range []jobs.State{jobs.StateRunning, jobs.StateFinished} {
		_, err := j.Transition(to, time.Now(), nil)
		fmt.Printf("PENDING → %s: %v\n", to, err == nil)
	}
	// Output:
	// PENDING → RUNNING: true
	// PENDING → FINISHED: false
}

// TestFileJobStoreGolden pins the job file format: a change to it needs a
// new format version, and every job file written in an earlier format must
// keep opening (TestFileJobStoreOpensFormat1 to 3).
func TestFileJobStoreGolden(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	dir := t.TempDir()
	s := openFileJobStore(t, dir, registry.StoreOptions{Now: clk.Now})
	r := newJobRegistry(t, s)
	_, err := r.Create(ctx, jobs.Job{ID: "ended", Owner: "ann", Queue: "batch", Process: "fraud-gbm", Rows: 3,
		Endpoint: &process.EndpointRef{Group: "fraud", Path: "cards", Alias: "score"}})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	mustUpdate(t, r, "ended", jobs.StateRunning, nil)
	clk.Advance(time.Second)
	jerr := &jobs.ErrorInfo{Type: "timeout", Title: "Timed out", Message: "the process <did not> finish in time"}
	if _, err := r.Update(ctx, "ended", jobs.StateTimedOut, jerr, nil); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, r, "waiting", "DEFAULT")
	mustCreate(t, r, "finished", "DEFAULT")
	mustUpdate(t, r, "finished", jobs.StateRunning, nil)
	if _, err := r.Update(ctx, "finished", jobs.StateFinished, nil, []byte(`{"data":[]}`)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ended", "waiting", "finished"} {
		golden := filepath.Join("testdata", id+".job.v4.json")
		got, err := os.ReadFile(filepath.Join(dir, id+".job.json"))
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("job file differs from %s (-golden +written):\n%s", golden, diff)
		}
	}
	before, _, err := s.Jobs(ctx, jobs.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened, the waiting job was interrupted; the ended one is as it was.
	re := openFileJobStore(t, dir, registry.StoreOptions{Now: clk.Now})
	newJobRegistry(t, re)
	got, err := re.Job(ctx, "ended")
	if err != nil {
		t.Fatal(err)
	}
	var want jobs.Job
	for _, j := range before {
		if j.ID == "ended" {
			want = j
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reopened job (-before +after):\n%s", diff)
	}
}

// openOldJobFiles opens a file job store holding the jobs "ended" and
// "waiting" as a build of the given job file format wrote them
// (testdata/<id>.job.v<format>.json).
func openOldJobFiles(t *testing.T, format int) jobs.Store {
	t.Helper()
	dir := t.TempDir()
	for _, id := range []string{"ended", "waiting"} {
		b, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("%s.job.v%d.json", id, format)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id+".job.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return openFileJobStore(t, dir, registry.StoreOptions{})
}

// TestFileJobStoreOpensFormat1 opens job files written before jobs had
// owners: they open, with no owner, which leaves them to administrators.
func TestFileJobStoreOpensFormat1(t *testing.T) {
	ctx := context.Background()
	s := openOldJobFiles(t, 1)
	list, total, err := s.Jobs(ctx, jobs.Filter{})
	if err != nil || total != 2 {
		t.Fatalf("Jobs = %d jobs, %v; want the 2 of format 1", total, err)
	}
	for _, j := range list {
		if j.Owner != "" {
			t.Errorf("job %s of format 1 has owner %q", j.ID, j.Owner)
		}
	}
	if _, n, _ := s.Jobs(ctx, jobs.Filter{Owner: "ann"}); n != 0 {
		t.Errorf("%d format-1 jobs listed as ann's", n)
	}
}

// TestFileJobStoreOpensFormat2 opens job files written before results
// were counted: they open with their owners and no ResultBytes.
func TestFileJobStoreOpensFormat2(t *testing.T) {
	ctx := context.Background()
	s := openOldJobFiles(t, 2)
	list, total, err := s.Jobs(ctx, jobs.Filter{})
	if err != nil || total != 2 {
		t.Fatalf("Jobs = %d jobs, %v; want the 2 of format 2", total, err)
	}
	for _, j := range list {
		if j.ResultBytes != 0 {
			t.Errorf("job %s of format 2 has ResultBytes %d", j.ID, j.ResultBytes)
		}
	}
	if _, n, _ := s.Jobs(ctx, jobs.Filter{Owner: "ann"}); n != 1 {
		t.Errorf("%d format-2 jobs listed as ann's, want 1", n)
	}
}

// TestFileJobStoreOpensFormat3 opens job files written before jobs had
// revisions and leases: they open at revision 0, and change from there.
func TestFileJobStoreOpensFormat3(t *testing.T) {
	ctx := context.Background()
	s := openOldJobFiles(t, 3)
	got, err := s.Job(ctx, "waiting")
	if err != nil || got.Revision != 0 || got.Replica != "" || !got.LeaseExpires.IsZero() {
		t.Fatalf("format-3 job: %+v, %v; want revision 0 and no lease", got, err)
	}
	// Opened by a Registry, the waiting job was interrupted: a write
	// at revision 0.
	r := newJobRegistry(t, s)
	if got, err = s.Job(ctx, "waiting"); err != nil || got.State != jobs.StateError || got.Revision != 1 {
		t.Errorf("format-3 job after the restart: %+v, %v; want ERROR at revision 1", got, err)
	}
	if _, err := r.Create(ctx, jobs.Job{ID: "new", Queue: "DEFAULT", Process: "iris"}); err != nil {
		t.Error(err)
	}
}

func ExampleRegistry() {
	ctx := context.Background()
	store := jobs.NewMemStore(registry.StoreOptions{})
	defer store.Close()
	jobRegistry, err := jobs.NewRegistry(ctx, store)
	if err != nil {
		panic(err)
	}
	j, _ := jobRegistry.Create(ctx, jobs.Job{ID: "j1", Queue: registry.DefaultQueue, Process: "iris", Rows: 3})
	fmt.Println(j.State)
	j, _ = jobRegistry.Update(ctx, "j1", jobs.StateRunning, nil, nil)
	fmt.Println(j.State)
	j, _ = jobRegistry.Update(ctx, "j1", jobs.StateFinished, nil, []byte(`{"data":[]}`))
	fmt.Println(j.State)
	_, err = jobRegistry.Update(ctx, "j1", jobs.StateStopped, nil, nil)
	fmt.Println(errors.Is(err, jobs.ErrTransition))
	res, _ := store.JobResult(ctx, "j1")
	fmt.Println(string(res))
	// Output:
	// PENDING
	// RUNNING
	// FINISHED
	// true
	// {"data":[]}
}

// TestJobRegistryFinishQuota fills the results of one owner and of the
// store: a result past a quota ends its job ERROR and is not stored, and
// another owner's results still fit their own quota.
func TestJobRegistryFinishQuota(t *testing.T) {
	ctx := context.Background()
	result := []byte(`0123456789`) // 10 bytes
	q := jobs.ResultQuota{Owner: 25, Total: 45}
	tests := []struct {
		owner     string
		wantState jobs.State
		wantType  string
	}{
		{"ann", jobs.StateFinished, ""},
		{"ann", jobs.StateFinished, ""},
		{"ann", jobs.StateError, "job_quota_exceeded"}, // 30 > 25
		{"bob", jobs.StateFinished, ""},
		{"bob", jobs.StateFinished, ""},          // 40 in all
		{"cyd", jobs.StateError, "storage_full"}, // 50 > 45
	}
	s := jobs.NewMemStore(registry.StoreOptions{})
	t.Cleanup(func() { s.Close() })
	r := newJobRegistry(t, s)
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%d %s", i, tt.owner), func(t *testing.T) {
			id := fmt.Sprintf("j%d", i)
			if _, err := r.Create(ctx, jobs.Job{ID: id, Owner: tt.owner, Queue: "DEFAULT", Process: "iris"}); err != nil {
				t.Fatal(err)
			}
			mustUpdate(t, r, id, jobs.StateRunning, nil)
			j, err := r.Finish(ctx, id, result, q)
			if err != nil {
				t.Fatal(err)
			}
			if j.State != tt.wantState || (j.Error != nil) != (tt.wantType != "") || j.Error != nil && j.Error.Type != tt.wantType {
				t.Fatalf("Finish = %s %+v, want %s %q", j.State, j.Error, tt.wantState, tt.wantType)
			}
			res, err := s.JobResult(ctx, id)
			if tt.wantState == jobs.StateFinished && (err != nil || string(res) != string(result)) {
				t.Errorf("result = %q, %v; want it stored", res, err)
			}
			if tt.wantState != jobs.StateFinished && len(res) != 0 {
				t.Errorf("refused result stored: %q", res)
			}
		})
	}
	ann, total, err := r.ResultBytes(ctx, "ann")
	if err != nil || ann != 20 || total != 40 {
		t.Errorf("ResultBytes(ann) = %d, %d, %v; want 20, 40", ann, total, err)
	}
}
