package atomicfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/atomicfile"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestWrite(t *testing.T) {
	tests := []struct {
		name   string
		before string // the file's content before the write; "" means no file
	}{
		{"creates a missing file", ""},
		{"replaces a file", "old content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			if tt.before != "" {
				if err := os.WriteFile(path, []byte(tt.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := atomicfile.Write(atomicfile.OS{}, path, "state.json.tmp-", []byte("new")); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != "new" {
				t.Errorf("file holds %q (%v), want %q", got, err, "new")
			}
			if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("mode %v is open to group or others", fi.Mode().Perm())
			}
			if diff := cmp.Diff([]string{"state.json"}, names(t, dir)); diff != "" {
				t.Errorf("directory (-want +got):\n%s", diff)
			}
		})
	}
}

// failRename is the OS with every rename failing.
type failRename struct{ atomicfile.OS }

func (failRename) Rename(string, string) error { return errors.New("injected") }

func TestWriteFailureLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(failRename{}, path, "state.json.tmp-", []byte("new")); err == nil {
		t.Fatal("Write succeeded with a failing rename")
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("file holds %q after a failed write, want the old content", got)
	}
	if diff := cmp.Diff([]string{"state.json"}, names(t, dir)); diff != "" {
		t.Errorf("directory after a failed write (-want +got):\n%s", diff)
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"state.json", "state.json.tmp-1", "state.json.tmp-2", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := atomicfile.RemoveTemps(dir, "state.json.tmp-"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"notes.txt", "state.json"}, names(t, dir)); diff != "" {
		t.Errorf("directory (-want +got):\n%s", diff)
	}
}

func TestLockDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first, err := atomicfile.LockDir(dir, "dir.lock")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("directory not created with mode 0700: %v %v", fi, err)
	}
	if _, err := atomicfile.LockDir(dir, "dir.lock"); !errors.Is(err, atomicfile.ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := atomicfile.LockDir(dir, "dir.lock")
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again.Close()
}
