package durability

import (
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
)

// Shape of TestCrashDurability.
const (
	crashRounds  = 20
	crashWriters = 4
	crashSlots   = 3 // deployments per writer's group
	// crashAcksBeforeKill is how many writes each round acknowledges
	// before the kill may come, so that every round kills a busy server.
	crashAcksBeforeKill = 8
)

// TestCrashDurability kills the server with SIGKILL in the middle of a
// stream of management writes, model uploads and alias moves, and job
// submissions, restarts it on the same data directory and checks what a
// client was promised: the store opens cleanly, every write answered 2xx
// is there with the content it was answered with (or a later acknowledged
// one), every acknowledged model version is listed with its artifact
// byte-identical, a write in flight at the kill is there whole or not at
// all, every acknowledged job is there and ended (FINISHED with its
// result, or ERROR interrupted), and no temporary file is left behind.
// State accumulates over the rounds in one directory.
//
// It runs over each store: the files of the data directory, and a
// PostgreSQL database (-store; a server of the test's own, skipped without
// one unless SCOREHUB_REQUIRE_ALL_TESTS=1), where every restart is the
// same replica (-replica), which ends its previous life's jobs at start.
//
// SCOREHUB_CRASH_SEED=n repeats a run's choice of writes and kill delays
// (the timing of the kill relative to the writes is the machine's).
func TestCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills the server 20 times per store")
	}
	t.Run("file", func(t *testing.T) { crashDurability(t, nil) })
	t.Run("postgres", func(t *testing.T) {
		pg := pgtest.New(t)
		crashDurability(t, []string{"-store", pg.NewDB(t), "-replica", "crash-test"})
	})
}

// crashDurability is TestCrashDurability over the store storeArgs name,
// nil for the data directory's files.
func crashDurability(t *testing.T, storeArgs []string) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SCOREHUB_CRASH_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SCOREHUB_CRASH_SEED=%q: %v", s, err)
		}
		seed = n
	}
	t.Logf("seed %d (SCOREHUB_CRASH_SEED=%d repeats the choices)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	dir := t.TempDir()
	writers := make([]*crashWriter, crashWriters)
	for i := range writers {
		writers[i] = newCrashWriter(i, rand.New(rand.NewPCG(seed, uint64(i)+1)))
	}
	models := newModelWriter(t, rand.New(rand.NewPCG(seed, crashWriters+1)))
	var list []string // every job acknowledged 201, over all rounds
	inFlight := 0

	for round := range crashRounds {
		srv := crashStart(t, dir, storeArgs)
		c := newCrashClient(srv.Base)
		c.token = c.adminToken(t)
		crashCheck(t, round, dir, c, writers, models, list)
		if t.Failed() {
			crashKill(t, srv)
			t.FailNow()
		}

		var acked atomic.Int64
		var wg sync.WaitGroup
		for _, w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.run(t, c, &acked, time.Time{})
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			models.run(t, c, &acked)
		}()
		delay := time.Duration(rng.IntN(250)) * time.Millisecond
		// Too few writes are reported just below.
		testutil.Poll(time.Minute, func() bool { return acked.Load() >= crashWriters*crashAcksBeforeKill || srv.Exited() })
		if acked.Load() < crashWriters*crashAcksBeforeKill {
			t.Errorf("round %d: only %d writes acknowledged in a minute", round, acked.Load())
		}
		time.Sleep(delay)
		crashKill(t, srv)
		wg.Wait()
		c.close()

		n := 0
		for _, w := range writers {
			if w.pending != nil {
				n++
			}
			list = append(list, w.jobs...)
			w.jobs = nil
		}
		if models.pending != nil {
			n++
		}
		inFlight += n
		t.Logf("round %d: killed %v after %d acknowledged writes, %d in flight", round, delay, acked.Load(), n)
		if t.Failed() {
			t.FailNow()
		}
	}

	// The last restart, then a clean stop, and the stores open in-process.
	srv := crashStart(t, dir, storeArgs)
	c := newCrashClient(srv.Base)
	c.token = c.adminToken(t)
	crashCheck(t, crashRounds, dir, c, writers, models, list)
	c.close()
	if err := srv.Stop(); err != nil {
		t.Error(err)
	}
	if errs := crashLogErrors(srv); len(errs) > 0 {
		t.Errorf("the server logged errors:\n%s", strings.Join(errs, "\n"))
	}
	if storeArgs == nil {
		store, err := registry.OpenFileStore(dir, registry.StoreOptions{})
		if err != nil {
			t.Fatalf("the store does not open after the last run: %v", err)
		}
		store.Close()
		jobStore, err := jobs.OpenFileStore(filepath.Join(dir, "jobs"), registry.StoreOptions{})
		if err != nil {
			t.Fatalf("the job store does not open after the last run: %v", err)
		}
		jobStore.Close()
	}

	if inFlight == 0 {
		t.Errorf("no round killed the server with a write in flight: the test proved nothing")
	}
	if len(models.versions) == 0 || !models.alias.Exists {
		t.Errorf("%d model versions and no alias acknowledged: the uploads proved nothing", len(models.versions))
	}
	t.Logf("model %s: %d versions, alias %s at version %d after %d moves", crashModel, len(models.versions), crashModelAlias, models.alias.Version, models.alias.Revision)
	t.Logf("%d rounds, %d writes in flight at a kill, %d jobs acknowledged", crashRounds, inFlight, len(list))
}

// crashCheck is what every restart must show: the start-up left no
// temporary files, each writer's records are as acknowledged (or, for the
// write in flight at the kill, whole or absent), the model writer's
// versions and alias too, and every job is ended.
func crashCheck(t *testing.T, round int, dir string, c *crashClient, writers []*crashWriter, models *modelWriter, jobs []string) {
	t.Helper()
	for _, d := range []string{dir, filepath.Join(dir, "jobs"), filepath.Join(dir, "models")} {
		entries, err := os.ReadDir(d)
		if os.IsNotExist(err) && d != dir {
			continue // made by the first write of its kind
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp") {
				t.Errorf("round %d: temporary file %s left in %s after start-up", round, e.Name(), d)
			}
		}
	}
	for _, w := range writers {
		w.reconcile(t, round, c)
	}
	models.reconcile(t, round, dir, c)
	crashCheckJobs(t, round, c, jobs)
}

// crashCheckJobs checks that every job acknowledged is there and ended,
// FINISHED with its result or ERROR interrupted, and that no job at all is
// left PENDING or RUNNING by a kill.
func crashCheckJobs(t *testing.T, round int, c *crashClient, acked []string) {
	t.Helper()
	states := map[string]string{}
	for page := 0; ; page++ {
		status, got, err := c.do(http.MethodGet, "/executions/jobs?size=1000&page="+strconv.Itoa(page), "", "", "")
		if err != nil || status != http.StatusOK {
			t.Fatalf("round %d: list jobs: %d %v %v", round, status, got, err)
		}
		content, _ := got["content"].([]any)
		for _, j := range content {
			j, _ := j.(map[string]any)
			id, _ := j["id"].(string)
			state, _ := j["state"].(string)
			states[id] = state
			switch state {
			case string(jobs.StateFinished):
			case string(jobs.StateError):
				if e, _ := j["error"].(map[string]any); e["type"] != "interrupted" {
					t.Errorf("round %d: job %s ended ERROR %v, want only interrupted ones", round, id, e)
				}
			default:
				t.Errorf("round %d: job %s is %s after a restart, want it ended", round, id, state)
			}
		}
		if len(content) < 1000 {
			break
		}
	}
	for _, id := range acked {
		state, ok := states[id]
		if !ok {
			t.Errorf("round %d: job %s was acknowledged 201 but is gone", round, id)
			continue
		}
		if state != string(jobs.StateFinished) {
			continue
		}
		status, got, err := c.do(http.MethodGet, "/executions/jobs/"+id+"/result", "", "", "")
		rows, _ := got["data"].([]any)
		if err != nil || status != http.StatusOK || len(rows) != 1 || rows[0].(map[string]any)["prediction(species)"] != "setosa" {
			t.Errorf("round %d: result of FINISHED job %s: %d %v %v, want its one setosa row", round, id, status, got, err)
		}
	}
}

// crashStart starts the server on dir, over the store storeArgs name, and
// waits until it listens. It runs a build without the race detector: one
// start-up under it takes seconds, and what is tested here is the stores,
// not the memory model.
func crashStart(t *testing.T, dir string, storeArgs []string) *harness.Server {
	t.Helper()
	return harness.Start(t, harness.Options{Dir: dir, Args: append([]string{"-grace", "2s"}, storeArgs...), WithoutRace: true})
}

// crashKill sends SIGKILL, waits for the process and checks that it logged
// no error in its life.
func crashKill(t *testing.T, s *harness.Server) {
	t.Helper()
	s.Kill(t)
	if errs := crashLogErrors(s); len(errs) > 0 {
		t.Errorf("the server logged errors:\n%s", strings.Join(errs, "\n"))
	}
}

// crashLogErrors returns the error records of the server's log, and any
// line that speaks of a damaged store.
func crashLogErrors(s *harness.Server) []string {
	var out []string
	for _, l := range strings.Split(s.Stderr(), "\n") {
		if strings.Contains(l, "level=ERROR") || strings.Contains(l, "not a valid") || strings.Contains(l, "corrupt") {
			out = append(out, l)
		}
	}
	return out
}
