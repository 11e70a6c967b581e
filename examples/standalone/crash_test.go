package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry"
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
// stream of management writes and job submissions, restarts it on the same
// data directory and checks what a client was promised: the store opens
// cleanly, every write answered 2xx is there with the content it was
// answered with (or a later acknowledged one), a write in flight at the kill
// is there whole or not at all, every acknowledged job is there and ended
// (FINISHED with its result, or ERROR interrupted), and no temporary file
// is left behind. State accumulates over the rounds in one directory.
//
// SCOREHUB_CRASH_SEED=n repeats a run's choice of writes and kill delays
// (the timing of the kill relative to the writes is the machine's).
func TestCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills the server 20 times")
	}
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

	// A build without the race detector: one start-up under it takes
	// seconds, and what is tested here is the files, not the memory model.
	bin := filepath.Join(t.TempDir(), "standalone")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	writers := make([]*crashWriter, crashWriters)
	for i := range writers {
		writers[i] = newCrashWriter(i, rand.New(rand.NewPCG(seed, uint64(i)+1)))
	}
	var jobs []string // every job acknowledged 201, over all rounds
	inFlight := 0

	for round := range crashRounds {
		srv := crashStart(t, bin, dir)
		c := newCrashClient(srv.base)
		c.token = c.adminToken(t)
		crashCheck(t, round, dir, c, writers, jobs)
		if t.Failed() {
			srv.kill(t)
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
		delay := time.Duration(rng.IntN(250)) * time.Millisecond
		busy := time.Now().Add(time.Minute)
		for acked.Load() < crashWriters*crashAcksBeforeKill && !srv.exited() && time.Now().Before(busy) {
			time.Sleep(5 * time.Millisecond)
		}
		if acked.Load() < crashWriters*crashAcksBeforeKill {
			t.Errorf("round %d: only %d writes acknowledged in a minute", round, acked.Load())
		}
		time.Sleep(delay)
		srv.kill(t)
		wg.Wait()
		c.close()

		n := 0
		for _, w := range writers {
			if w.pending != nil {
				n++
			}
			jobs = append(jobs, w.jobs...)
			w.jobs = nil
		}
		inFlight += n
		t.Logf("round %d: killed %v after %d acknowledged writes, %d in flight", round, delay, acked.Load(), n)
		if t.Failed() {
			t.FailNow()
		}
	}

	// The last restart, then a clean stop, and the stores open in-process.
	srv := crashStart(t, bin, dir)
	c := newCrashClient(srv.base)
	c.token = c.adminToken(t)
	crashCheck(t, crashRounds, dir, c, writers, jobs)
	c.close()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.wait(); err != nil {
		t.Errorf("the server exited with %v after SIGTERM, want 0; stderr:\n%s", err, srv.stderr.String())
	}
	if errs := srv.logErrors(); len(errs) > 0 {
		t.Errorf("the server logged errors:\n%s", strings.Join(errs, "\n"))
	}
	store, err := registry.OpenFileStore(dir, registry.StoreOptions{})
	if err != nil {
		t.Fatalf("the store does not open after the last run: %v", err)
	}
	store.Close()
	jobStore, err := registry.OpenFileJobStore(filepath.Join(dir, "jobs"), registry.StoreOptions{})
	if err != nil {
		t.Fatalf("the job store does not open after the last run: %v", err)
	}
	jobStore.Close()

	if inFlight == 0 {
		t.Errorf("no round killed the server with a write in flight: the test proved nothing")
	}
	t.Logf("%d rounds, %d writes in flight at a kill, %d jobs acknowledged", crashRounds, inFlight, len(jobs))
}

// crashCheck is what every restart must show: the start-up left no
// temporary files, each writer's records are as acknowledged (or, for the
// write in flight at the kill, whole or absent), and every job is ended.
func crashCheck(t *testing.T, round int, dir string, c *crashClient, writers []*crashWriter, jobs []string) {
	t.Helper()
	for _, d := range []string{dir, filepath.Join(dir, "jobs")} {
		entries, err := os.ReadDir(d)
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
			j := j.(map[string]any)
			id, state := j["id"].(string), j["state"].(string)
			states[id] = state
			switch state {
			case string(registry.JobFinished):
			case string(registry.JobError):
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
		if state != string(registry.JobFinished) {
			continue
		}
		status, got, err := c.do(http.MethodGet, "/executions/jobs/"+id+"/result", "", "", "")
		rows, _ := got["data"].([]any)
		if err != nil || status != http.StatusOK || len(rows) != 1 || rows[0].(map[string]any)["prediction(species)"] != "setosa" {
			t.Errorf("round %d: result of FINISHED job %s: %d %v %v, want its one setosa row", round, id, status, got, err)
		}
	}
}

// crashServer is one run of the server as a separate process.
type crashServer struct {
	cmd    *exec.Cmd
	base   string
	stderr *lockedBuffer
	read   chan struct{} // closed when stdout is at its end
	done   chan struct{} // closed when the process has exited
	err    error         // cmd.Wait's, once done
}

// crashStart starts the server binary bin on dir and waits until it
// listens.
func crashStart(t *testing.T, bin, dir string) *crashServer {
	t.Helper()
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-data", dir, "-grace", "2s")
	// The server reads SCOREHUB_* settings: none but these may leak in.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SCOREHUB_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SCOREHUB_ADMIN_PASSWORD="+testAdminPassword)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &crashServer{cmd: cmd, stderr: &lockedBuffer{}, read: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 1)
	go func() {
		defer close(s.read)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "scorehub listening on "); ok {
				listening <- a
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() {
		<-s.read
		s.err = cmd.Wait()
		close(s.done)
	}()
	select {
	case s.base = <-listening:
		return s
	case <-s.done:
		t.Fatalf("the server exited before listening (%v); stderr:\n%s", s.err, s.stderr.String())
	case <-time.After(2 * time.Minute):
		s.kill(t)
		t.Fatalf("the server did not listen within 2 minutes; stderr:\n%s", s.stderr.String())
	}
	return nil
}

func (s *crashServer) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL, waits for the process and checks that it logged no
// error in its life.
func (s *crashServer) kill(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil && !s.exited() {
		t.Fatalf("SIGKILL: %v", err)
	}
	err := s.wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the server ended with %v before the kill; stderr:\n%s", err, s.stderr.String())
	}
	if errs := s.logErrors(); len(errs) > 0 {
		t.Errorf("the server logged errors:\n%s", strings.Join(errs, "\n"))
	}
}

// wait waits for the process to exit and returns how it did.
func (s *crashServer) wait() error {
	<-s.done
	return s.err
}

// logErrors returns the error records of the server's log, and any line
// that speaks of a damaged store.
func (s *crashServer) logErrors() []string {
	var out []string
	for _, l := range strings.Split(s.stderr.String(), "\n") {
		if strings.Contains(l, "level=ERROR") || strings.Contains(l, "not a valid") || strings.Contains(l, "corrupt") {
			out = append(out, l)
		}
	}
	return out
}

// crashClient talks to one run of the server. TestSoak uses it too.
type crashClient struct {
	base   string
	token  string
	client *http.Client
	// observe, when not nil, is told of every answer do receives.
	observe func(method, path string, status int, took time.Duration)
}

func newCrashClient(base string) *crashClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &crashClient{base: base, client: &http.Client{Transport: tr, Timeout: time.Minute}}
}

func (c *crashClient) close() { c.client.CloseIdleConnections() }

func (c *crashClient) adminToken(t *testing.T) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.base+"/api/rest/tokenservice", nil)
	req.SetBasicAuth("admin", testAdminPassword)
	res, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got struct{ IDToken string }
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil || res.StatusCode != http.StatusOK || got.IDToken == "" {
		t.Fatalf("token service: %d %v", res.StatusCode, err)
	}
	return got.IDToken
}

// do sends one request and reads the whole answer. err is not nil when no
// complete answer came: the request may or may not have taken effect.
func (c *crashClient) do(method, path, contentType, ifMatch, body string) (int, map[string]any, error) {
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	start := time.Now()
	res, err := c.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, err
	}
	if c.observe != nil {
		c.observe(method, path, res.StatusCode, time.Since(start))
	}
	var got map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &got); err != nil {
			return 0, nil, fmt.Errorf("%s %s answered %d with no JSON: %w", method, path, res.StatusCode, err)
		}
	}
	return res.StatusCode, got, nil
}

// crashRecord is a record as far as the test tells writes apart: a group
// (Enabled always true, no Endpoints) or a deployment.
type crashRecord struct {
	Exists      bool
	Revision    uint64
	Description string
	Enabled     bool
	Endpoints   string
}

// crashRecordOf reads a group's or a deployment's JSON.
func crashRecordOf(got map[string]any) crashRecord {
	r := crashRecord{Exists: true, Enabled: true}
	rev, _ := got["revision"].(float64)
	r.Revision = uint64(rev)
	r.Description, _ = got["description"].(string)
	if e, ok := got["enabled"].(bool); ok {
		r.Enabled = e
	}
	eps, _ := got["endpoints"].([]any)
	var s []string
	for _, e := range eps {
		e := e.(map[string]any)
		s = append(s, fmt.Sprintf("%v=%v/%v/%v", e["alias"], e["process"], e["queue"], e["timeoutMs"]))
	}
	r.Endpoints = strings.Join(s, ";")
	return r
}

// crashWrite is one write and the record it leaves when it takes effect.
type crashWrite struct {
	method, path, contentType, ifMatch, body string
	key                                      string // of the record written; "" for a job
	want                                     crashRecord
}

// crashWriter owns one group, crash-w<n>, and its deployments d0…d2, and
// writes them one write at a time, so that it knows what each must hold.
// TestSoak's management writers are crashWriters too.
type crashWriter struct {
	id      int
	rng     *rand.Rand
	group   string
	records map[string]crashRecord // by key: "" for the group, else the deployment path
	pending *crashWrite            // the write no complete answer came for
	jobs    []string               // jobs acknowledged this round
	seq     int
}

func newCrashWriter(id int, rng *rand.Rand) *crashWriter {
	return &crashWriter{id: id, rng: rng, group: "crash-w" + strconv.Itoa(id), records: map[string]crashRecord{}}
}

// path is where the record of key is read and written.
func (w *crashWriter) path(key string) string {
	if key == "" {
		return "/api/v1/webapigroups/" + w.group
	}
	return "/api/v1/deployments/" + w.group + "/" + key
}

// run writes until the server stops answering or, when until is not zero,
// until then.
func (w *crashWriter) run(t *testing.T, c *crashClient, acked *atomic.Int64, until time.Time) {
	for until.IsZero() || time.Now().Before(until) {
		wr := w.next()
		status, got, err := c.do(wr.method, wr.path, wr.contentType, wr.ifMatch, wr.body)
		if err != nil {
			w.pending = &wr
			return
		}
		if status/100 != 2 {
			t.Errorf("writer %d: %s %s answered %d %v, want 2xx", w.id, wr.method, wr.path, status, got)
			continue
		}
		acked.Add(1)
		if wr.key == "" && wr.path == "/executions/jobs" {
			id, _ := got["id"].(string)
			if id == "" {
				t.Errorf("writer %d: job submission answered %d %v without an id", w.id, status, got)
			}
			w.jobs = append(w.jobs, id)
			continue
		}
		have := crashRecord{}
		if status != http.StatusNoContent {
			have = crashRecordOf(got)
		}
		if have != wr.want {
			t.Errorf("writer %d: %s %s answered %+v, want %+v", w.id, wr.method, wr.path, have, wr.want)
		}
		w.records[wr.key] = have
	}
}

// next chooses the next write from the records as acknowledged.
func (w *crashWriter) next() crashWrite {
	w.seq++
	desc := fmt.Sprintf("writer %d write %d ", w.id, w.seq) + strings.Repeat(strconv.Itoa(w.seq%10), w.rng.IntN(3000))
	g := w.records[""]
	if !g.Exists {
		return crashWrite{method: http.MethodPost, path: "/api/v1/webapigroups", contentType: "application/json",
			body: crashJSON(map[string]any{"name": w.group, "description": desc}),
			want: crashRecord{Exists: true, Revision: 1, Description: desc, Enabled: true}}
	}
	deployments := 0
	for k, r := range w.records {
		if k != "" && r.Exists {
			deployments++
		}
	}
	switch n := w.rng.IntN(100); {
	case n < 15:
		return crashWrite{method: http.MethodPut, path: w.path(""), contentType: "application/json", ifMatch: crashETag(g.Revision),
			body: crashJSON(map[string]any{"description": desc}),
			want: crashRecord{Exists: true, Revision: g.Revision + 1, Description: desc, Enabled: true}}
	case n < 20 && deployments == 0:
		return crashWrite{method: http.MethodDelete, path: w.path(""), ifMatch: crashETag(g.Revision)}
	case n < 30:
		return crashWrite{method: http.MethodPost, path: "/executions/jobs", contentType: "application/json",
			key:  "",
			body: `{"process":"iris","data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`}
	}
	key := "d" + strconv.Itoa(w.rng.IntN(crashSlots))
	d := w.records[key]
	enabled := w.rng.IntN(2) == 0
	if !d.Exists {
		eps, want := w.endpoints()
		return crashWrite{method: http.MethodPost, path: "/api/v1/deployments", contentType: "application/json", key: key,
			body: crashJSON(map[string]any{"group": w.group, "path": key, "description": desc, "enabled": enabled, "endpoints": eps}),
			want: crashRecord{Exists: true, Revision: 1, Description: desc, Enabled: enabled, Endpoints: want}}
	}
	switch w.rng.IntN(10) {
	case 0, 1, 2, 3:
		eps, want := w.endpoints()
		return crashWrite{method: http.MethodPut, path: w.path(key), contentType: "application/json", ifMatch: crashETag(d.Revision), key: key,
			body: crashJSON(map[string]any{"description": desc, "enabled": enabled, "endpoints": eps}),
			want: crashRecord{Exists: true, Revision: d.Revision + 1, Description: desc, Enabled: enabled, Endpoints: want}}
	case 4, 5, 6, 7:
		return crashWrite{method: http.MethodPatch, path: w.path(key), contentType: "application/merge-patch+json", ifMatch: crashETag(d.Revision), key: key,
			body: crashJSON(map[string]any{"description": desc, "enabled": enabled}),
			want: crashRecord{Exists: true, Revision: d.Revision + 1, Description: desc, Enabled: enabled, Endpoints: d.Endpoints}}
	default:
		return crashWrite{method: http.MethodDelete, path: w.path(key), ifMatch: crashETag(d.Revision), key: key}
	}
}

// endpoints returns one to three endpoints for a body and as crashRecordOf
// reads them back.
func (w *crashWriter) endpoints() ([]map[string]any, string) {
	var eps []map[string]any
	var s []string
	for i := range 1 + w.rng.IntN(3) {
		timeout := []int{0, 1000, 5000}[w.rng.IntN(3)]
		alias := "a" + strconv.Itoa(i)
		eps = append(eps, map[string]any{"alias": alias, "process": "iris", "timeoutMs": timeout})
		s = append(s, fmt.Sprintf("%s=iris/DEFAULT/%d", alias, timeout))
	}
	return eps, strings.Join(s, ";")
}

// reconcile reads the writer's records from the restarted server: each must
// be as last acknowledged or, for the one write in flight at the kill, as
// that write would leave it. The records then hold what the server has.
func (w *crashWriter) reconcile(t *testing.T, round int, c *crashClient) {
	t.Helper()
	keys := []string{""}
	for i := range crashSlots {
		keys = append(keys, "d"+strconv.Itoa(i))
	}
	for _, key := range keys {
		status, got, err := c.do(http.MethodGet, w.path(key), "", "", "")
		if err != nil || (status != http.StatusOK && status != http.StatusNotFound) {
			t.Fatalf("round %d: GET %s: %d %v %v", round, w.path(key), status, got, err)
		}
		have := crashRecord{}
		if status == http.StatusOK {
			have = crashRecordOf(got)
		}
		want := w.records[key]
		if have == want {
			continue
		}
		if p := w.pending; p != nil && p.key == key && p.path != "/executions/jobs" && have == p.want {
			w.records[key] = have // the write in flight took effect, whole
			continue
		}
		what := "no write to it was in flight"
		if p := w.pending; p != nil && p.key == key && p.path != "/executions/jobs" {
			what = fmt.Sprintf("in flight: %s %s leaving %+v", p.method, p.path, crashShort(p.want))
		}
		t.Errorf("round %d: %s after the kill (-acknowledged +found; %s):\n%s", round, w.path(key), what,
			cmp.Diff(crashShort(want), crashShort(have)))
	}
	w.pending = nil
}

// crashShort shortens a record's description for messages.
func crashShort(r crashRecord) crashRecord {
	if len(r.Description) > 40 {
		r.Description = r.Description[:40] + "…"
	}
	return r
}

func crashETag(rev uint64) string { return `"` + strconv.FormatUint(rev, 10) + `"` }

func crashJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
