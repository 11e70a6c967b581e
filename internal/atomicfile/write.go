package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// FS is what [Write] goes through. [OS] is the real file system; tests
// substitute one that fails, or stops as a crash would, at any step.
type FS interface {
	CreateTemp(dir, pattern string) (File, error)
	Rename(oldpath, newpath string) error
	SyncDir(dir string) error
	Remove(name string) error
}

// File is the part of *os.File that [Write] uses.
type File interface {
	Name() string
	Write(b []byte) (int, error)
	Sync() error
	Close() error
}

// OS is the operating system's file system. Its zero value is ready to
// use and safe for concurrent use.
type OS struct{}

var _ FS = OS{}

// CreateTemp creates a new file with mode 0600, as [os.CreateTemp] does.
func (OS) CreateTemp(dir, pattern string) (File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Rename is [os.Rename].
func (OS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// SyncDir is [SyncDir].
func (OS) SyncDir(dir string) error { return SyncDir(dir) }

// Remove is [os.Remove].
func (OS) Remove(name string) error { return os.Remove(name) }

// Write replaces the file at path with data through fsys: it writes data
// to a new file named tempPrefix followed by random characters in path's
// directory (mode 0600), flushes it to stable storage, renames it over path
// and flushes the directory. A crash at any step leaves the old file or the
// new one. A step that fails before the rename removes the temporary file
// and leaves path as it was; a failed directory flush after the rename is
// reported although the new file may be what the next reader finds.
func Write(fsys FS, path, tempPrefix string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := fsys.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("atomicfile: write %s: %w", path, err)
	}
	tmp := f.Name()
	if err := writeSynced(f, data); err != nil {
		// Best effort: one left behind is removed by the next RemoveTemps.
		_ = fsys.Remove(tmp)
		return fmt.Errorf("atomicfile: write %s: %w", tmp, err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		_ = fsys.Remove(tmp)
		return fmt.Errorf("atomicfile: replace %s: %w", path, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("atomicfile: sync directory %s: %w", dir, err)
	}
	return nil
}

// writeSynced writes b to f, flushes it to stable storage and closes it.
func writeSynced(f File, b []byte) error {
	_, err := f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Sync flushes the file at path to stable storage. A reader that found a
// file a crashed writer renamed but did not flush calls it, with
// [SyncDir], before relying on what it read.
func Sync(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SyncDir flushes dir's entries to stable storage, so that a rename within
// it survives a power loss. On Windows, where a directory cannot be opened
// for flushing and the file system journals renames itself, it does
// nothing.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	return Sync(dir)
}

// RemoveTemps removes the files in dir whose names start with tempPrefix:
// what writers that crashed before their rename left. Call it only while no
// writer uses dir, for example holding the lock of [LockDir].
func RemoveTemps(dir, tempPrefix string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("atomicfile: read directory: %w", err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("atomicfile: remove leftover file: %w", err)
		}
	}
	return nil
}
