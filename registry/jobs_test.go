package registry_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry"
)

// Every pair of states: only the changes of a job's life are allowed.
func TestJobTransitions(t *testing.T) {
	allowed := map[[2]registry.JobState]bool{
		{registry.JobPending, registry.JobRunning}:  true,
		{registry.JobPending, registry.JobError}:    true,
		{registry.JobPending, registry.JobStopped}:  true,
		{registry.JobRunning, registry.JobFinished}: true,
		{registry.JobRunning, registry.JobError}:    true,
		{registry.JobRunning, registry.JobStopped}:  true,
		{registry.JobRunning, registry.JobTimedOut}: true,
	}
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, from := range registry.JobStates() {
		for _, to := range registry.JobStates() {
			t.Run(string(from)+"→"+string(to), func(t *testing.T) {
				want := allowed[[2]registry.JobState{from, to}]
				if got := registry.CanTransition(from, to); got != want {
					t.Fatalf("CanTransition = %v, want %v", got, want)
				}
				j := registry.Job{ID: "j", State: from}
				jerr := &registry.JobErrorInfo{Type: "x", Title: "X", Message: "x."}
				next, err := j.Transition(to, now, jerr)
				if !want {
					wantMsg := fmt.Sprintf(`registry: job "j" cannot go from %s to %s`, from, to)
					if !errors.Is(err, registry.ErrJobTransition) || err.Error() != wantMsg {
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
				if (to == registry.JobRunning) != !next.StartedAt.IsZero() {
					t.Errorf("StartedAt %v after going to %s", next.StartedAt, to)
				}
				if to.Final() != !next.FinishedAt.IsZero() {
					t.Errorf("FinishedAt %v after going to %s", next.FinishedAt, to)
				}
				if wantErr := to.Final() && to != registry.JobFinished; wantErr != (next.Error != nil) {
					t.Errorf("Error %v after going to %s", next.Error, to)
				}
			})
		}
	}
}

type jobStoreKind struct {
	name string
	open func(t *testing.T, dir string, opts registry.StoreOptions) registry.JobStore
}

func jobStoreKinds() []jobStoreKind {
	return []jobStoreKind{
		{"MemJobStore", func(t *testing.T, _ string, opts registry.StoreOptions) registry.JobStore {
			s := registry.NewMemJobStore(opts)
			t.Cleanup(func() { s.Close() })
			return s
		}},
		{"FileJobStore", func(t *testing.T, dir string, opts registry.StoreOptions) registry.JobStore {
			return openFileJobStore(t, dir, opts)
		}},
	}
}

func openFileJobStore(t *testing.T, dir string, opts registry.StoreOptions) *registry.FileJobStore {
	t.Helper()
	s, err := registry.OpenFileJobStore(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustCreate(t *testing.T, s registry.JobStore, id, queue string) registry.Job {
	t.Helper()
	j, err := s.CreateJob(context.Background(), registry.Job{ID: id, Queue: queue, Process: "iris", Rows: 1})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func mustUpdate(t *testing.T, s registry.JobStore, id string, to registry.JobState, result []byte) registry.Job {
	t.Helper()
	var jerr *registry.JobErrorInfo
	if to != registry.JobFinished && to.Final() {
		jerr = &registry.JobErrorInfo{Type: "failed", Title: "Failed", Message: "it failed."}
	}
	j, err := s.UpdateJob(context.Background(), id, to, jerr, result)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func ids(jobs []registry.Job) []string {
	out := []string{}
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return out
}

func TestJobStores(t *testing.T) {
	ctx := context.Background()
	for _, k := range jobStoreKinds() {
		t.Run(k.name, func(t *testing.T) {
			tests := []struct {
				name string
				run  func(t *testing.T, s registry.JobStore, clk *clock)
			}{
				{"create stamps a pending job", func(t *testing.T, s registry.JobStore, clk *clock) {
					j, err := s.CreateJob(ctx, registry.Job{ID: "a", State: registry.JobFinished, Queue: "DEFAULT", Process: "iris",
						Endpoint: &registry.EndpointRef{Group: "DEFAULT", Path: "p", Alias: "x"}})
					if err != nil {
						t.Fatal(err)
					}
					want := registry.Job{ID: "a", State: registry.JobPending, Queue: "DEFAULT", Process: "iris",
						Endpoint: &registry.EndpointRef{Group: "DEFAULT", Path: "p", Alias: "x"}, CreatedAt: clk.Now()}
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
				{"an id is used once", func(t *testing.T, s registry.JobStore, _ *clock) {
					mustCreate(t, s, "a", "DEFAULT")
					if _, err := s.CreateJob(ctx, registry.Job{ID: "a", Queue: "DEFAULT", Process: "iris"}); !errors.Is(err, registry.ErrExists) {
						t.Errorf("second create: %v, want ErrExists", err)
					}
				}},
				{"invalid fields are refused", func(t *testing.T, s registry.JobStore, _ *clock) {
					for _, j := range []registry.Job{{ID: "../x", Queue: "DEFAULT", Process: "iris"}, {ID: "a", Queue: "", Process: "iris"}, {ID: "a", Queue: "DEFAULT"}} {
						if _, err := s.CreateJob(ctx, j); !errors.Is(err, registry.ErrInvalid) {
							t.Errorf("create %+v: %v, want ErrInvalid", j, err)
						}
					}
				}},
				{"unknown jobs are not found", func(t *testing.T, s registry.JobStore, _ *clock) {
					if _, err := s.Job(ctx, "nope"); !errors.Is(err, registry.ErrNotFound) {
						t.Errorf("Job: %v", err)
					}
					if _, err := s.UpdateJob(ctx, "nope", registry.JobRunning, nil, nil); !errors.Is(err, registry.ErrNotFound) {
						t.Errorf("UpdateJob: %v", err)
					}
					if _, err := s.JobResult(ctx, "nope"); !errors.Is(err, registry.ErrNotFound) {
						t.Errorf("JobResult: %v", err)
					}
				}},
				{"updates stamp times and keep the result", func(t *testing.T, s registry.JobStore, clk *clock) {
					mustCreate(t, s, "a", "DEFAULT")
					started := clk.Advance(time.Second)
					mustUpdate(t, s, "a", registry.JobRunning, nil)
					if _, err := s.JobResult(ctx, "a"); !errors.Is(err, registry.ErrNotFound) {
						t.Errorf("result of a running job: %v", err)
					}
					finished := clk.Advance(time.Second)
					j := mustUpdate(t, s, "a", registry.JobFinished, []byte(`{"data":[]}`))
					if !j.StartedAt.Equal(started) || !j.FinishedAt.Equal(finished) || j.State != registry.JobFinished {
						t.Errorf("job %+v", j)
					}
					res, err := s.JobResult(ctx, "a")
					if err != nil || string(res) != `{"data":[]}` {
						t.Errorf("result %q, %v", res, err)
					}
					if _, err := s.UpdateJob(ctx, "a", registry.JobStopped, nil, nil); !errors.Is(err, registry.ErrJobTransition) {
						t.Errorf("stopping a finished job: %v, want ErrJobTransition", err)
					}
				}},
				{"list is newest first, filtered and paged", func(t *testing.T, s registry.JobStore, clk *clock) {
					for _, id := range []string{"j1", "j2", "j3", "j4"} {
						q := "DEFAULT"
						if id == "j2" {
							q = "batch"
						}
						mustCreate(t, s, id, q)
						clk.Advance(time.Second)
					}
					mustUpdate(t, s, "j3", registry.JobRunning, nil)
					for _, tt := range []struct {
						f     registry.JobFilter
						want  []string
						total int
					}{
						{registry.JobFilter{}, []string{"j4", "j3", "j2", "j1"}, 4},
						{registry.JobFilter{Queue: "batch"}, []string{"j2"}, 1},
						{registry.JobFilter{State: registry.JobRunning}, []string{"j3"}, 1},
						{registry.JobFilter{State: registry.JobPending, Queue: "DEFAULT"}, []string{"j4", "j1"}, 2},
						{registry.JobFilter{Offset: 1, Limit: 2}, []string{"j3", "j2"}, 4},
						{registry.JobFilter{Offset: 9}, []string{}, 4},
					} {
						got, total, err := s.Jobs(ctx, tt.f)
						if err != nil {
							t.Fatal(err)
						}
						if d := cmp.Diff(tt.want, ids(got)); d != "" || total != tt.total {
							t.Errorf("%+v: total %d (want %d), ids (-want +got):\n%s", tt.f, total, tt.total, d)
						}
					}
				}},
				{"retention removes old and surplus ended jobs only", func(t *testing.T, s registry.JobStore, clk *clock) {
					for _, id := range []string{"old", "mid", "new", "run"} {
						mustCreate(t, s, id, "DEFAULT")
						mustUpdate(t, s, id, registry.JobRunning, nil)
						if id != "run" {
							mustUpdate(t, s, id, registry.JobFinished, []byte(`{"data":[]}`))
						}
						clk.Advance(time.Hour)
					}
					n, err := s.DeleteJobs(ctx, registry.JobRetention{Before: clk.Now().Add(-3 * time.Hour)})
					if err != nil || n != 1 {
						t.Fatalf("by age: removed %d, %v; want 1", n, err)
					}
					n, err = s.DeleteJobs(ctx, registry.JobRetention{MaxEnded: 1})
					if err != nil || n != 1 {
						t.Fatalf("by count: removed %d, %v; want 1", n, err)
					}
					got, _, _ := s.Jobs(ctx, registry.JobFilter{})
					if d := cmp.Diff([]string{"run", "new"}, ids(got)); d != "" {
						t.Errorf("left (-want +got):\n%s", d)
					}
					if _, err := s.JobResult(ctx, "mid"); !errors.Is(err, registry.ErrNotFound) {
						t.Errorf("result of a removed job: %v", err)
					}
				}},
				{"closed stores refuse", func(t *testing.T, s registry.JobStore, _ *clock) {
					s.Close()
					if _, err := s.CreateJob(ctx, registry.Job{ID: "a", Queue: "DEFAULT", Process: "iris"}); !errors.Is(err, registry.ErrClosed) {
						t.Errorf("create on a closed store: %v", err)
					}
				}},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					clk := newClock()
					tt.run(t, k.open(t, t.TempDir(), registry.StoreOptions{Now: clk.Now}), clk)
				})
			}
		})
	}
}

// A restart ends the jobs it interrupted as ERROR, keeps the others with
// their results, and cleans up what a crash left.
func TestFileJobStoreReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clk := newClock()
	s, err := registry.OpenFileJobStore(dir, registry.StoreOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "pending", "DEFAULT")
	mustCreate(t, s, "running", "DEFAULT")
	mustUpdate(t, s, "running", registry.JobRunning, nil)
	mustCreate(t, s, "done", "DEFAULT")
	mustUpdate(t, s, "done", registry.JobRunning, nil)
	mustUpdate(t, s, "done", registry.JobFinished, []byte(`{"data":[{"a":1}]}`))
	if _, err := registry.OpenFileJobStore(dir, registry.StoreOptions{}); !errors.Is(err, registry.ErrLocked) {
		t.Errorf("second open: %v, want ErrLocked", err)
	}
	s.Close()
	// What a crash can leave: a temporary file, a result without its job.
	for _, name := range []string{".tmp-123", "ghost.result.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	restarted := clk.Advance(time.Minute)
	s2 := openFileJobStore(t, dir, registry.StoreOptions{Now: clk.Now})
	interrupted := registry.InterruptedJobError()
	for _, id := range []string{"pending", "running"} {
		j, err := s2.Job(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != registry.JobError || !j.FinishedAt.Equal(restarted) || j.Error == nil || *j.Error != interrupted {
			t.Errorf("%s after restart: %+v", id, j)
		}
	}
	j, err := s2.Job(ctx, "done")
	if err != nil || j.State != registry.JobFinished {
		t.Errorf("done after restart: %+v, %v", j, err)
	}
	if res, err := s2.JobResult(ctx, "done"); err != nil || string(res) != `{"data":[{"a":1}]}` {
		t.Errorf("result after restart: %q, %v", res, err)
	}
	for _, name := range []string{".tmp-123", "ghost.result.json"} {
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
	if _, err := registry.OpenFileJobStore(dir, registry.StoreOptions{}); err == nil {
		t.Fatal("opened a store with a job in an unknown state")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.job.json")); err != nil {
		t.Errorf("the bad file was not kept: %v", err)
	}
}

func ExampleCanTransition() {
	for _, to := range []registry.JobState{registry.JobRunning, registry.JobFinished} {
		fmt.Printf("PENDING → %s: %v\n", to, registry.CanTransition(registry.JobPending, to))
	}
	// Output:
	// PENDING → RUNNING: true
	// PENDING → FINISHED: false
}

// TestFileJobStoreGolden pins the job file format: a change to it needs a
// new format version, and every job file written in format 1 must keep
// opening.
func TestFileJobStoreGolden(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	dir := t.TempDir()
	s := openFileJobStore(t, dir, registry.StoreOptions{Now: clk.Now})
	_, err := s.CreateJob(ctx, registry.Job{ID: "ended", Queue: "batch", Process: "fraud-gbm", Rows: 3,
		Endpoint: &registry.EndpointRef{Group: "fraud", Path: "cards", Alias: "score"}})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	mustUpdate(t, s, "ended", registry.JobRunning, nil)
	clk.Advance(time.Second)
	jerr := &registry.JobErrorInfo{Type: "timeout", Title: "Timed out", Message: "the process <did not> finish in time"}
	if _, err := s.UpdateJob(ctx, "ended", registry.JobTimedOut, jerr, nil); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "waiting", "DEFAULT")
	for _, id := range []string{"ended", "waiting"} {
		golden := filepath.Join("testdata", id+".job.v1.json")
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
	before, _, err := s.Jobs(ctx, registry.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened, the waiting job was interrupted; the ended one is as it was.
	re := openFileJobStore(t, dir, registry.StoreOptions{Now: clk.Now})
	got, err := re.Job(ctx, "ended")
	if err != nil {
		t.Fatal(err)
	}
	var want registry.Job
	for _, j := range before {
		if j.ID == "ended" {
			want = j
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reopened job (-before +after):\n%s", diff)
	}
}
