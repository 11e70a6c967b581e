package registry_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func fixedNow(t time.Time) registry.StoreOptions {
	return registry.StoreOptions{Now: func() time.Time { return t }}
}

func TestOpenFileStoreCreatesStore(t *testing.T) {
	now := time.Date(2025, 6, 1, 8, 30, 0, 0, time.UTC)
	dir := filepath.Join(t.TempDir(), "var", "scorehub")
	s := openFileStore(t, dir, fixedNow(now))

	if diff := cmp.Diff(dump(registry.NewState(now)), dump(mustState(t, s))); diff != "" {
		t.Errorf("new store (-want +got):\n%s", diff)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Errorf("directory mode %v, want 0700", perm)
	}
	path := filepath.Join(dir, "registry.json")
	info, err = os.Stat(path)
	if err != nil {
		t.Fatalf("state file not written at once: %v", err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("state file mode %v, want 0600", perm)
	}
	b, _ := os.ReadFile(path)
	if !bytes.HasPrefix(b, []byte("{\n\t\"format\": 2,")) {
		t.Errorf("state file does not start with its format version:\n%s", b)
	}
}

// TestFileStoreGolden pins the state file format: a change to it needs a new
// format version, and every file written in an older format must keep
// opening. The records written first are those of the format 1 golden file,
// which must open as they are.
func TestFileStoreGolden(t *testing.T) {
	ctx := context.Background()
	golden := filepath.Join("testdata", "registry.v2.json")
	clk := newClock()
	dir := t.TempDir()
	s := newModelWriter(t, openFileStore(t, dir, registry.StoreOptions{Now: clk.Now}))
	clk.Advance(time.Minute)
	must[registry.Group](t)(s.PutGroup(ctx, registry.Group{Name: "fraud", Description: "Card fraud <& models>",
		Auth: registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"analysts", "ops"}}}))
	must[registry.Queue](t)(s.PutQueue(ctx, registry.Queue{Name: "batch", MaxConcurrent: 2, MaxWaiting: 0}))
	clk.Advance(time.Minute)
	must[registry.Deployment](t)(s.PutDeployment(ctx, registry.Deployment{Group: "fraud", Path: "cards", Description: "Scoring for cards", Enabled: true,
		Endpoints: []registry.Endpoint{
			{Alias: "score", Process: "fraud-gbm", Timeout: 1500 * time.Millisecond, Description: "Gradient boosting"},
			{Alias: "bulk", Process: "fraud-gbm", Queue: "batch"},
		}}))
	must[registry.Deployment](t)(s.PutDeployment(ctx, registry.Deployment{Group: "DEFAULT", Path: "empty"}))
	v1 := mustState(t, s.writer)
	v1File, err := os.ReadFile(filepath.Join("testdata", "registry.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	old := t.TempDir()
	if err := os.WriteFile(filepath.Join(old, "registry.json"), v1File, 0o600); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(dump(v1), dump(mustState(t, openFileStore(t, old, registry.StoreOptions{})))); diff != "" {
		t.Errorf("format 1 golden file opens as (-want +got):\n%s", diff)
	}

	clk.Advance(time.Minute)
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{
		Label: "churn", Classes: []string{"no", "yes"}, Features: []string{"age", "income"}, Description: "First <try>"}, nil)))
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV2, process.ModelMetadata{}, nil)))
	must[registry.ModelAlias](t)(s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "production", Version: 2}))
	must[registry.Deployment](t)(s.PutDeployment(ctx, registry.Deployment{Group: "DEFAULT", Path: "churn", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "prod", Model: "churn@production"}, {Alias: "first", Model: "churn@1", Queue: "batch"}}}))
	want := mustState(t, s.writer)

	got, err := os.ReadFile(filepath.Join(dir, "registry.json"))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantFile, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(wantFile), string(got)); diff != "" {
		t.Errorf("state file differs from %s (-golden +written):\n%s", golden, diff)
	}

	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "registry.json"), wantFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(other, "models"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, art := range [][]byte{churnV1, churnV2} {
		if err := os.WriteFile(filepath.Join(other, "models", sha(art)), art, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	re := openFileStore(t, other, registry.StoreOptions{})
	if diff := cmp.Diff(dump(want), dump(mustState(t, re))); diff != "" {
		t.Errorf("golden file opens as (-want +got):\n%s", diff)
	}
}

func TestFileStoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	// A clock in another zone with nanoseconds: stored times are UTC and
	// must come back to the nanosecond.
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	clk := testutil.NewClock(time.Date(2025, 2, 3, 4, 5, 6, 123456789, zone))
	opts := registry.StoreOptions{Now: clk.Now}
	dir := t.TempDir()
	s := newWriter(t, openFileStore(t, dir, opts))

	must[registry.Queue](t)(s.PutQueue(ctx, registry.Queue{Name: "gpu", MaxConcurrent: 1, MaxWaiting: 0}))
	g := must[registry.Group](t)(s.PutGroup(ctx, registry.Group{Name: "Risk_2", Description: "ünïcödé \"quoted\"\n",
		Auth: registry.AuthPolicy{Mode: registry.TokenRequired}}))
	clk.Advance(90 * time.Second)
	g.Auth.Groups = []string{"risk-team"}
	must[registry.Group](t)(s.PutGroup(ctx, g))
	d := must[registry.Deployment](t)(s.PutDeployment(ctx, registry.Deployment{Group: "Risk_2", Path: "v1.0", Enabled: false,
		Endpoints: []registry.Endpoint{
			{Alias: "a", Process: "p", Queue: "gpu", Timeout: time.Hour + time.Nanosecond},
			{Alias: "b", Process: "p", Queue: registry.DefaultQueue},
		}}))
	clk.Advance(time.Millisecond)
	d.Enabled = true
	must[registry.Deployment](t)(s.PutDeployment(ctx, d))
	must[registry.Queue](t)(s.PutQueue(ctx, registry.Queue{Name: "tmp", MaxConcurrent: 1}))
	if err := s.DeleteQueue(ctx, "tmp", 1); err != nil {
		t.Fatal(err)
	}
	before := mustState(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	re := newWriter(t, openFileStore(t, dir, opts))
	after := mustState(t, re)
	if diff := cmp.Diff(dump(before), dump(after)); diff != "" {
		t.Fatalf("reopened state (-before +after):\n%s", diff)
	}
	gotD, _ := after.Deployment("Risk_2", "v1.0")
	if loc := gotD.UpdatedAt.Location(); loc != time.UTC {
		t.Errorf("times come back in %v, want UTC", loc)
	}

	// Revisions and Seq carry on from where they were.
	gotD = must[registry.Deployment](t)(re.PutDeployment(ctx, gotD))
	if gotD.Revision != 3 {
		t.Errorf("deployment revision after reopen and update = %d, want 3", gotD.Revision)
	}
	if seq := mustState(t, re).Seq(); seq != before.Seq()+1 {
		t.Errorf("Seq after reopen and one write = %d, want %d", seq, before.Seq()+1)
	}
}

// validV1 is a hand-written format 1 state file; the cases below break it.
const validV1 = `{
	"format": 1,
	"seq": 4,
	"groups": [
		{"name": "DEFAULT", "auth": {"mode": "public"}, "revision": 1, "createdAt": "2025-01-01T00:00:00Z", "updatedAt": "2025-01-01T00:00:00Z"},
		{"name": "fraud", "auth": {"mode": "token", "groups": ["analysts"]}, "revision": 2, "createdAt": "2025-01-01T00:00:00Z", "updatedAt": "2025-01-02T00:00:00Z"}
	],
	"deployments": [
		{"group": "fraud", "path": "cards", "enabled": true, "endpoints": [{"alias": "score", "process": "gbm", "timeoutNs": 2000000000}], "revision": 1, "createdAt": "2025-01-01T00:00:00Z", "updatedAt": "2025-01-01T00:00:00Z"}
	],
	"queues": [
		{"name": "DEFAULT", "maxConcurrent": 16, "maxWaiting": 1000, "revision": 1, "createdAt": "2025-01-01T00:00:00Z", "updatedAt": "2025-01-01T00:00:00Z"}
	]
}
`

func TestOpenFileStoreReadsHandWrittenFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "registry.json"), []byte(validV1), 0o600); err != nil {
		t.Fatal(err)
	}
	st := mustState(t, openFileStore(t, dir, registry.StoreOptions{}))
	d, ok := st.Deployment("fraud", "cards")
	g, _ := st.Group("fraud")
	if !ok || st.Seq() != 4 || d.Endpoints[0].Timeout != 2*time.Second || g.Revision != 2 || g.Auth.Groups[0] != "analysts" {
		t.Errorf("hand-written file read as seq %d, deployment %+v, group %+v", st.Seq(), d, g)
	}
}

func TestOpenFileStoreRefusesBadFiles(t *testing.T) {
	edit := func(old, new string) string {
		if !strings.Contains(validV1, old) {
			panic("test case edits text not in validV1: " + old)
		}
		return strings.Replace(validV1, old, new, 1)
	}
	tests := []struct {
		name    string
		content string
		want    string // in the error, besides the path
	}{
		{"empty", "", "unexpected end of JSON input"},
		{"truncated", validV1[:len(validV1)/2], "unexpected end of JSON input"},
		{"not JSON", "format=1\n", "invalid character"},
		{"trailing garbage", validV1 + "}", "invalid character"},
		{"two documents", validV1 + validV1, "invalid character"},
		{"no format version", edit(`"format": 1,`, ""), "no format version"},
		{"newer format version", edit(`"format": 1,`, `"format": 3,`), "format version 3 is not supported"},
		{"models in format 1", edit(`"queues": [`, `"models": [], "queues": [`), "format version 1 has no models"},
		{"format as text", edit(`"format": 1,`, `"format": "1",`), "cannot unmarshal string"},
		{"unknown field", edit(`"seq": 4,`, `"seq": 4, "owner": "x",`), `unknown field "owner"`},
		{"wrong type", edit(`"maxConcurrent": 16`, `"maxConcurrent": "16"`), "cannot unmarshal string"},
		{"bad time", edit(`"updatedAt": "2025-01-02T00:00:00Z"`, `"updatedAt": "yesterday"`), "cannot parse"},
		{"no DEFAULT group", edit(`{"name": "DEFAULT", "auth": {"mode": "public"}, "revision": 1, "createdAt": "2025-01-01T00:00:00Z", "updatedAt": "2025-01-01T00:00:00Z"},`, ""), `built-in group "DEFAULT" is missing`},
		{"deployment in no group", edit(`"group": "fraud"`, `"group": "risk"`), `no group "risk"`},
		{"endpoint on no queue", edit(`"process": "gbm"`, `"process": "gbm", "queue": "gpu"`), `no queue "gpu"`},
		{"group twice", edit(`"name": "fraud"`, `"name": "DEFAULT"`), `group "DEFAULT" appears twice`},
		{"queue twice", edit(`"maxWaiting": 1000, "revision": 1, "createdAt": "2025-01-01T00:00:00Z", "updatedAt": "2025-01-01T00:00:00Z"}`,
			`"maxWaiting": 1000, "revision": 1, "createdAt": "2025-01-01T00:00:00Z", "updatedAt": "2025-01-01T00:00:00Z"}, {"name": "DEFAULT", "maxConcurrent": 1, "maxWaiting": 0, "revision": 1}`),
			`queue "DEFAULT" appears twice`},
		{"deployment twice", edit(`"deployments": [`, `"deployments": [{"group": "fraud", "path": "cards", "endpoints": [], "revision": 1},`), "deployment fraud/cards appears twice"},
		{"invalid name", edit(`"path": "cards"`, `"path": ".."`), `/path: must be a name`},
		{"revision 0", edit(`"revision": 2`, `"revision": 0`), "revision 0 is out of range"},
		{"revision missing", edit(`"revision": 2, `, ""), "revision 0 is out of range"},
		{"invalid queue", edit(`"maxConcurrent": 16`, `"maxConcurrent": 0`), "/maxConcurrent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "registry.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := registry.OpenFileStore(dir, registry.StoreOptions{})
			if err == nil {
				s.Close()
				t.Fatal("OpenFileStore succeeded")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want one naming %s and saying %q", err, path, tt.want)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.content {
				t.Errorf("the refused file was changed to:\n%s", b)
			}
			// The failed open let go of the directory.
			if err := os.WriteFile(path, []byte(validV1), 0o600); err != nil {
				t.Fatal(err)
			}
			openFileStore(t, dir, registry.StoreOptions{})
		})
	}
}

func TestOpenFileStoreErrors(t *testing.T) {
	t.Run("no directory", func(t *testing.T) {
		if _, err := registry.OpenFileStore("", registry.StoreOptions{}); err == nil {
			t.Error(`OpenFileStore("") succeeded`)
		}
	})
	t.Run("directory is a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "plain")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := registry.OpenFileStore(file, registry.StoreOptions{})
		if err == nil || !strings.Contains(err.Error(), file) {
			t.Errorf("error = %v, want one naming %s", err, file)
		}
	})
	t.Run("state file unreadable", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "registry.json")
		// A directory in its place cannot be read, even by root.
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		_, err := registry.OpenFileStore(dir, registry.StoreOptions{})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("error = %v, want one naming %s", err, path)
		}
		if info, err := os.Stat(path); err != nil || !info.IsDir() {
			t.Error("the unreadable state file was replaced")
		}
	})
}

func TestOpenFileStoreRemovesLeftovers(t *testing.T) {
	dir := t.TempDir()
	s := newWriter(t, openFileStore(t, dir, registry.StoreOptions{}))
	must[registry.Group](t)(s.PutGroup(context.Background(), registry.Group{Name: "kept"}))
	want := mustState(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// What a writer that crashed between creating and renaming leaves.
	for name, content := range map[string]string{
		"registry.json.tmp-123": `{"format": 1, "seq": 99, "gro`,
		"registry.json.tmp-456": "",
		"notes.txt":             "not the store's",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	re := openFileStore(t, dir, registry.StoreOptions{})
	if diff := cmp.Diff(dump(want), dump(mustState(t, re))); diff != "" {
		t.Errorf("state after reopen (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"notes.txt", "registry.json", "registry.lock"}, names); diff != "" {
		t.Errorf("directory after reopen (-want +got):\n%s", diff)
	}
}

func TestFileStoreIsExclusive(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := newWriter(t, openFileStore(t, dir, registry.StoreOptions{}))

	_, err := registry.OpenFileStore(dir, registry.StoreOptions{})
	if !errors.Is(err, registry.ErrLocked) {
		t.Fatalf("second open error = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "in use by another process") {
		t.Errorf("error %q does not name the directory and say it is in use", err)
	}
	if _, err := s.PutGroup(ctx, registry.Group{Name: "g"}); err != nil {
		t.Errorf("the first store stopped working: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	re := openFileStore(t, dir, registry.StoreOptions{})
	if _, ok := mustState(t, re).Group("g"); !ok {
		t.Error("the write of the first store is not in the second")
	}
}

const helperEnv = "SCOREHUB_REGISTRY_WRITER_DIR"

// TestFileStoreWriterProcess is not a test of its own: run by
// TestFileStoreSurvivesKill as a separate process, it writes to the store in
// $SCOREHUB_REGISTRY_WRITER_DIR and prints the name of every queue it has
// been told is stored, until it is killed.
func TestFileStoreWriterProcess(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("runs only as the writer process of TestFileStoreSurvivesKill")
	}
	store, err := registry.OpenFileStore(dir, registry.StoreOptions{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	s, err := registry.New(context.Background(), process.NewCatalog(), store)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for i := range 100000 {
		name := fmt.Sprintf("q%d", i)
		if _, err := s.PutQueue(context.Background(), registry.Queue{Name: name, MaxConcurrent: 1}); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		if _, err := fmt.Println("stored", name); err != nil {
			os.Exit(1) // the parent is gone
		}
	}
	os.Exit(0)
}

// TestFileStoreSurvivesKill kills a process in the middle of its writes and
// checks every write it acknowledged is in the store it leaves.
func TestFileStoreSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	child := testutil.StartChild(t, "TestFileStoreWriterProcess", helperEnv+"="+dir)

	var acked []string
	lines := child.Lines
	for len(acked) < 25 && lines.Scan() {
		name, ok := strings.CutPrefix(lines.Text(), "stored ")
		if !ok {
			t.Fatalf("writer process: %s", lines.Text())
		}
		acked = append(acked, name)
		if len(acked) == 5 {
			if _, err := registry.OpenFileStore(dir, registry.StoreOptions{}); !errors.Is(err, registry.ErrLocked) {
				t.Errorf("open while another process holds the store: %v, want ErrLocked", err)
			}
		}
	}
	if len(acked) < 25 {
		t.Fatalf("writer process stopped after %d writes: %v", len(acked), lines.Err())
	}
	child.Kill(t)

	s := openFileStore(t, dir, registry.StoreOptions{})
	st := mustState(t, s)
	var missing []string
	for _, name := range acked {
		if _, ok := st.Queue(name); !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("acknowledged writes lost: %v", missing)
	}
	// Every queue is one write; the store holds a prefix of them, nothing torn.
	if n := len(st.Queues()) - 1; uint64(n) != st.Seq() {
		t.Errorf("%d queues at seq %d after the kill", n, st.Seq())
	}
	names := make([]string, 0, len(st.Queues()))
	for _, q := range st.Queues() {
		names = append(names, q.Name)
	}
	for i := range int(st.Seq()) {
		if !slices.Contains(names, fmt.Sprintf("q%d", i)) {
			t.Errorf("queue q%d missing from a store at seq %d", i, st.Seq())
		}
	}
}

// BenchmarkFileStorePut measures one durable write: encode, write, two
// fsyncs and a rename, on the file system of the test's temporary directory.
func BenchmarkFileStorePut(b *testing.B) {
	ctx := context.Background()
	store, err := registry.OpenFileStore(b.TempDir(), registry.StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	s := newWriter(b, store)
	for i := range 50 {
		eps := []registry.Endpoint{{Alias: "score", Process: "gbm"}}
		if _, err := s.PutDeployment(ctx, deployment("DEFAULT", fmt.Sprintf("path-%d", i), eps...)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.PutQueue(ctx, registry.Queue{Name: "bench", MaxConcurrent: 1, Revision: registry.AnyRevision}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOpenFileStoreChecksArtifacts checks a store never opens with a
// version it cannot serve, and removes artifacts no version references.
func TestOpenFileStoreChecksArtifacts(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (dir, path string) {
		t.Helper()
		dir = t.TempDir()
		st := openFileStore(t, dir, registry.StoreOptions{})
		s := newModelWriter(t, st)
		must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{}, nil)))
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		return dir, filepath.Join(dir, "models", sha(churnV1))
	}
	refused := []struct {
		name   string
		damage func(path string) error
		want   string
	}{
		{"missing artifact", os.Remove, "model churn version 1: artifact " + sha(churnV1)},
		{"truncated artifact", func(p string) error { return os.Truncate(p, 3) }, fmt.Sprintf("has 3 bytes, want %d", len(churnV1))},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			dir, path := setup(t)
			if err := tt.damage(path); err != nil {
				t.Fatal(err)
			}
			s, err := registry.OpenFileStore(dir, registry.StoreOptions{})
			if err == nil {
				s.Close()
				t.Fatal("OpenFileStore succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want one saying %q", err, tt.want)
			}
		})
	}

	t.Run("damaged artifact", func(t *testing.T) {
		dir, path := setup(t)
		b := bytes.Clone(churnV1)
		b[len(b)-2] ^= 1
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		st := openFileStore(t, dir, registry.StoreOptions{})
		if _, err := st.Artifact(ctx, sha(churnV1)); err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Errorf("Artifact of a damaged file: %v", err)
		}
		s := newModelWriter(t, st)
		if _, err := s.Snapshot().EndpointProcess(registry.Endpoint{Alias: "a", Model: "churn@1"}); !errors.Is(err, registry.ErrUnavailable) {
			t.Errorf("a damaged version resolves: %v, want ErrUnavailable", err)
		}
	})

	t.Run("leftovers removed", func(t *testing.T) {
		dir, _ := setup(t)
		orphan := filepath.Join(dir, "models", sha(churnV2))
		for _, p := range []string{orphan, filepath.Join(dir, "models", ".tmp-123"), filepath.Join(dir, "models", "notes.txt")} {
			if err := os.WriteFile(p, churnV2, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		openFileStore(t, dir, registry.StoreOptions{})
		entries, err := os.ReadDir(filepath.Join(dir, "models"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if diff := cmp.Diff([]string{sha(churnV1), "notes.txt"}, names); diff != "" {
			t.Errorf("models/ after open (-want +got):\n%s", diff)
		}
	})

	t.Run("bad names are not paths", func(t *testing.T) {
		dir, _ := setup(t)
		st := openFileStore(t, dir, registry.StoreOptions{})
		if _, err := st.Artifact(ctx, "../registry.json"); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("Artifact(../registry.json): %v, want ErrNotFound", err)
		}
		if err := st.PutArtifact(ctx, sha(churnV2), churnV1); err == nil {
			t.Error("PutArtifact under another content's SHA-256 succeeded")
		}
	})
}
