package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/atomicfile"
	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/registry/process"
)

var (
	errInjected = errors.New("injected fault")
	errCrashed  = errors.New("process crashed")
)

// faultFS is the real file system with one operation of commit made to fail.
// With crash set, the process "dies" at that operation: whatever part of it
// took effect stays on disk, and no later operation (cleanup included)
// happens at all, as if the process had been killed there.
type faultFS struct {
	mu     sync.Mutex
	op     string // "create", "write", "sync", "close", "rename" or "syncdir"; "" fails nothing
	skip   int    // how many times op succeeds before it fails
	effect bool   // the failing operation takes effect (a write, half of it) first
	crash  bool
	dead   bool
	log    []string
}

func (f *faultFS) arm(op string, effect, crash bool) { f.armNth(op, 0, effect, crash) }

// armNth is arm for the operation after skip successful ones.
func (f *faultFS) armNth(op string, skip int, effect, crash bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.op, f.skip, f.effect, f.crash = op, skip, effect, crash
}

func (f *faultFS) record(op string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, op)
}

func (f *faultFS) ops() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// hit records op and reports what to do: dead means do nothing and fail;
// fail means fail, after the operation's effect when effect is set.
func (f *faultFS) hit(op string) (dead, fail, effect bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, op)
	if f.dead {
		return true, true, false, errCrashed
	}
	if f.op != op {
		return false, false, true, nil
	}
	if f.skip > 0 {
		f.skip--
		return false, false, true, nil
	}
	f.op = ""
	if f.crash {
		f.dead = true
		return false, true, f.effect, errCrashed
	}
	return false, true, f.effect, errInjected
}

func (f *faultFS) CreateTemp(dir, pattern string) (atomicfile.File, error) {
	dead, fail, effect, err := f.hit("create")
	if dead || (fail && !effect) {
		return nil, err
	}
	file, oerr := os.CreateTemp(dir, pattern)
	if oerr != nil {
		return nil, oerr
	}
	if fail {
		file.Close()
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

func (f *faultFS) Rename(oldpath, newpath string) error {
	dead, fail, effect, err := f.hit("rename")
	if dead || (fail && !effect) {
		return err
	}
	if rerr := os.Rename(oldpath, newpath); rerr != nil {
		return rerr
	}
	return err
}

func (f *faultFS) SyncDir(dir string) error {
	dead, fail, _, err := f.hit("syncdir")
	if dead || fail {
		return err
	}
	return atomicfile.SyncDir(dir)
}

func (f *faultFS) Remove(name string) error {
	f.record("remove")
	f.mu.Lock()
	dead := f.dead
	f.mu.Unlock()
	if dead {
		return errCrashed
	}
	return os.Remove(name)
}

type faultFile struct {
	*os.File
	fs *faultFS
}

func (f *faultFile) Write(b []byte) (int, error) {
	dead, fail, _, err := f.fs.hit("write")
	if dead {
		return 0, err
	}
	if fail {
		n, _ := f.File.Write(b[:len(b)/2])
		return n, err
	}
	return f.File.Write(b)
}

func (f *faultFile) Sync() error {
	dead, fail, _, err := f.fs.hit("sync")
	if dead || fail {
		return err
	}
	return f.File.Sync()
}

func (f *faultFile) Close() error {
	// The descriptor is released in every case: closing it changes nothing
	// on disk, and a dead process loses its descriptors too.
	dead, fail, _, err := f.fs.hit("close")
	cerr := f.File.Close()
	if dead || fail {
		return err
	}
	return cerr
}

type stateDump struct {
	Seq         uint64
	Groups      []Group
	Deployments []Deployment
	Queues      []Queue
	Models      []Model
}

func dumpOf(st *State) stateDump {
	return stateDump{st.Seq(), st.Groups(), st.Deployments(), st.Queues(), st.Models()}
}

// diskState decodes the state file in dir as the next open would.
func diskState(t *testing.T, dir string) *State {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, stateFileName))
	if err != nil {
		t.Fatal(err)
	}
	st, err := decodeState(b)
	if err != nil {
		t.Fatalf("state file does not decode: %v\n%s", err, b)
	}
	return st
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// over returns a Registry over s stamping records at now.
func over(t *testing.T, s Store, now time.Time) *Registry {
	t.Helper()
	r, err := New(context.Background(), process.NewCatalog(), s)
	if err != nil {
		t.Fatal(err)
	}
	r.now = func() time.Time { return now }
	return r
}

// abandon drops s as a killed process would: nothing is flushed or cleaned
// up; only the kernel's release of its lock happens.
func abandon(t *testing.T, s *FileStore) {
	t.Helper()
	if err := s.img.(*image.File[State]).Abandon(); err != nil {
		t.Fatal(err)
	}
}

func TestFileStoreCommitFaults(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	opts := StoreOptions{Now: func() time.Time { return now }}
	ctx := context.Background()
	write := Group{Name: "fraud", Description: "written when the fault hits", Auth: AuthPolicy{Mode: TokenRequired, Groups: []string{"analysts"}}}

	tests := []struct {
		name   string
		op     string
		effect bool
		crash  bool
		landed bool // the new state is the one on disk afterwards
	}{
		{name: "create fails", op: "create"},
		{name: "write fails half way", op: "write", effect: true},
		{name: "sync fails", op: "sync"},
		{name: "close fails", op: "close"},
		{name: "rename fails", op: "rename"},
		{name: "directory sync fails", op: "syncdir", landed: true},

		{name: "crash in create", op: "create", crash: true},
		{name: "crash after create", op: "create", effect: true, crash: true},
		{name: "crash half way through write", op: "write", effect: true, crash: true},
		{name: "crash before sync", op: "sync", crash: true},
		{name: "crash before close", op: "close", crash: true},
		{name: "crash before rename", op: "rename", crash: true},
		{name: "crash after rename", op: "rename", effect: true, crash: true, landed: true},
		{name: "crash before directory sync", op: "syncdir", crash: true, landed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ffs := &faultFS{}
			s, err := openFileStore(dir, opts, ffs)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := over(t, s, now)
			if _, err := r.PutQueue(ctx, Queue{Name: "batch", MaxConcurrent: 2, MaxWaiting: 10}); err != nil {
				t.Fatal(err)
			}
			before, err := s.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			after, _, err := before.withGroup(write, now)
			if err != nil {
				t.Fatal(err)
			}
			published := r.Snapshot()

			ffs.arm(tt.op, tt.effect, tt.crash)
			_, err = r.PutGroup(ctx, write)
			want := errInjected
			if tt.crash {
				want = errCrashed
			}
			if !errors.Is(err, want) {
				t.Fatalf("PutGroup error = %v, want %v", err, want)
			}
			if cur, _ := s.Load(ctx); cur != before {
				t.Errorf("state changed by a failed write:\n%s", cmp.Diff(dumpOf(before), dumpOf(cur)))
			}
			if r.Snapshot() != published {
				t.Error("a failed write published a snapshot")
			}
			wantDisk := before
			if tt.landed {
				wantDisk = after
			}

			if tt.crash {
				abandon(t, s)
				re, err := OpenFileStore(dir, opts)
				if err != nil {
					t.Fatalf("reopen after crash: %v", err)
				}
				defer re.Close()
				got, _ := re.Load(ctx)
				if diff := cmp.Diff(dumpOf(wantDisk), dumpOf(got)); diff != "" {
					t.Errorf("reopened state (-want +got):\n%s", diff)
				}
				if left := tempFiles(t, dir); len(left) > 0 {
					t.Errorf("temporary files left after reopen: %v", left)
				}
				if _, err := over(t, re, now).PutGroup(ctx, Group{Name: "after"}); err != nil {
					t.Errorf("write after recovery: %v", err)
				}
				return
			}

			if diff := cmp.Diff(dumpOf(wantDisk), dumpOf(diskState(t, dir))); diff != "" {
				t.Errorf("state on disk after the failed write (-want +got):\n%s", diff)
			}
			if left := tempFiles(t, dir); len(left) > 0 {
				t.Errorf("temporary files left by a failed write: %v", left)
			}
			// The store carries on from its unchanged state.
			if _, err := r.PutGroup(ctx, Group{Name: "after"}); err != nil {
				t.Fatalf("write after a failed one: %v", err)
			}
			final, _ := s.Load(ctx)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			re, err := OpenFileStore(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer re.Close()
			got, _ := re.Load(ctx)
			if diff := cmp.Diff(dumpOf(final), dumpOf(got)); diff != "" {
				t.Errorf("reopened state (-want +got):\n%s", diff)
			}
			if _, ok := got.Group(write.Name); ok {
				t.Errorf("group %q of the failed write is in the store", write.Name)
			}
		})
	}
}

// TestFileStoreCommitOrder checks the steps that make a write durable run in
// the one safe order, and that the Registry publishes the new state only
// once it is on disk.
func TestFileStoreCommitOrder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ffs := &faultFS{}
	s, err := openFileStore(dir, StoreOptions{}, ffs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if diff := cmp.Diff([]string{"create", "write", "sync", "close", "rename", "syncdir"}, ffs.ops()); diff != "" {
		t.Errorf("steps writing a new store (-want +got):\n%s", diff)
	}
	ffs.log = nil

	// A store that records when its commits return: the Registry publishes
	// after that, never before.
	r := over(t, &observed{Store: s, ffs: ffs}, time.Now())
	out, err := r.PutQueue(ctx, Queue{Name: "batch", MaxConcurrent: 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"create", "write", "sync", "close", "rename", "syncdir", "committed"}, ffs.ops()); diff != "" {
		t.Errorf("steps of one write (-want +got):\n%s", diff)
	}
	if onDisk := diskState(t, dir).Seq(); onDisk != r.Snapshot().State().Seq() {
		t.Errorf("published seq %d, on disk %d", r.Snapshot().State().Seq(), onDisk)
	}
	if out.Revision != 1 {
		t.Errorf("revision = %d, want 1", out.Revision)
	}
}

// observed is a Store that logs to ffs when a commit returns.
type observed struct {
	Store
	ffs *faultFS
}

func (o *observed) Commit(ctx context.Context, base uint64, next *State) error {
	err := o.Store.Commit(ctx, base, next)
	o.ffs.record("committed")
	return err
}

// crashFormat is a model format for the crash tests: any file starting
// "crash-test-model" is a model answering one constant column.
type crashFormat struct{}

func (crashFormat) Name() string { return "crash" }
func (crashFormat) Detect(b []byte) bool {
	return strings.HasPrefix(string(b), "crash-test-model")
}
func (crashFormat) Load(b []byte, meta process.ModelMetadata) (*process.LoadedModel, error) {
	return &process.LoadedModel{
		Schema: process.ModelSchema{Task: process.Regression, Label: meta.LabelOrDefault(), Outputs: []process.ColumnSpec{{Name: "prediction(" + meta.LabelOrDefault() + ")", Kind: process.Number}}},
		Process: process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
			return process.NewTable(in.Table.Rows(), process.NumberColumn("prediction(label)", make([]float64, in.Table.Rows()), nil))
		}),
	}, nil
}

// artifactsIntact checks that every version of st has its artifact in s,
// with the content its SHA-256 names, and that the artifacts' directory
// holds nothing else.
func artifactsIntact(t *testing.T, s *FileStore, st *State) {
	t.Helper()
	want := map[string]bool{}
	for _, m := range st.Models() {
		for _, v := range m.Versions {
			want[v.SHA256] = true
			b, err := s.Artifact(context.Background(), v.SHA256)
			if err != nil {
				t.Errorf("model %s version %d: %v", m.Name, v.Version, err)
				continue
			}
			if sum256(b) != v.SHA256 {
				t.Errorf("model %s version %d: artifact damaged", m.Name, v.Version)
			}
		}
	}
	entries, err := os.ReadDir(s.models)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("models/%s is left over", e.Name())
		}
	}
}

// TestFileStoreUploadFaults fails or crashes an upload at every step of
// its two durable writes, the artifact's and then the state file's:
// afterwards the store holds the state before the upload or the one after
// it, every version's artifact is there and intact, and nothing else is.
func TestFileStoreUploadFaults(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	opts := StoreOptions{Now: func() time.Time { return now }}
	ctx := context.Background()
	cat := process.NewCatalog()
	if err := cat.RegisterFormat(crashFormat{}); err != nil {
		t.Fatal(err)
	}
	first := []byte("crash-test-model one")
	upload := []byte("crash-test-model two")

	type step struct {
		op   string
		file int // 0: the artifact, 1: the state file
	}
	var steps []step
	for file := range 2 {
		for _, op := range []string{"create", "write", "sync", "close", "rename", "syncdir"} {
			steps = append(steps, step{op, file})
		}
	}
	for _, st := range steps {
		for _, crash := range []bool{false, true} {
			for _, effect := range []bool{false, true} {
				if effect && st.op != "write" && st.op != "rename" && st.op != "create" {
					continue // only these have an effect before they fail
				}
				what := []string{"artifact", "state file"}[st.file]
				name := fmt.Sprintf("%s %s fails (effect %v, crash %v)", what, st.op, effect, crash)
				t.Run(name, func(t *testing.T) {
					dir := t.TempDir()
					ffs := &faultFS{}
					s, err := openFileStore(dir, opts, ffs)
					if err != nil {
						t.Fatal(err)
					}
					defer s.Close()
					r, err := New(ctx, cat, s)
					if err != nil {
						t.Fatal(err)
					}
					r.now = func() time.Time { return now }
					if _, _, err := r.AddModelVersion(ctx, "m", first, process.ModelMetadata{}, nil); err != nil {
						t.Fatal(err)
					}
					before, _ := s.Load(ctx)
					lm, err := cat.LoadModel(upload, process.ModelMetadata{})
					if err != nil {
						t.Fatal(err)
					}
					after, _, _, err := before.withModelVersion("m", ModelVersion{SHA256: sum256(upload), Size: int64(len(upload)), Schema: lm.Schema}, now)
					if err != nil {
						t.Fatal(err)
					}
					// The state file lands once its rename took effect.
					landed := st.file == 1 && (st.op == "syncdir" || (st.op == "rename" && effect))

					ffs.armNth(st.op, st.file, effect, crash)
					if _, _, err := r.AddModelVersion(ctx, "m", upload, process.ModelMetadata{}, nil); err == nil {
						t.Fatal("the upload succeeded")
					}
					if cur, _ := s.Load(ctx); cur != before {
						t.Errorf("a failed upload changed the state")
					}
					if crash {
						abandon(t, s)
					} else if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					re, err := OpenFileStore(dir, opts)
					if err != nil {
						t.Fatalf("reopen: %v", err)
					}
					defer re.Close()
					got, _ := re.Load(ctx)
					want := before
					if landed {
						want = after
					}
					if diff := cmp.Diff(dumpOf(want), dumpOf(got)); diff != "" {
						t.Errorf("reopened state (-want +got):\n%s", diff)
					}
					artifactsIntact(t, re, got)
					if left := tempFiles(t, dir); len(left) > 0 {
						t.Errorf("temporary files left after reopen: %v", left)
					}
					// The upload goes through on the recovered store.
					r2, err := New(ctx, cat, re)
					if err != nil {
						t.Fatal(err)
					}
					if _, _, err := r2.AddModelVersion(ctx, "m", upload, process.ModelMetadata{}, nil); err != nil {
						t.Fatalf("upload after recovery: %v", err)
					}
					final, _ := re.Load(ctx)
					artifactsIntact(t, re, final)
				})
			}
		}
	}
}
