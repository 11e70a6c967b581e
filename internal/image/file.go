package image

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/scorehub/scorehub/internal/atomicfile"
)

// FileConfig configures [OpenFile].
type FileConfig[T any] struct {
	MemConfig[T]

	// Path is the state file. Required.
	Path string
	// TempPrefix starts the name of a state file being written, in Path's
	// directory. Required.
	TempPrefix string
	// Lock, when set, names the lock file in Path's directory that keeps
	// the store to one process at a time (flock(2)): OpenFile creates the
	// directory (mode 0700) and takes the lock, and fails with Locked,
	// wrapped, while another store holds it. Holding it, OpenFile also
	// removes the temporary files a crashed writer left and flushes what
	// it read, which the last writer may have renamed into place before
	// its process died. Without a lock the file is one process's, opened
	// as it is (a key file on a read-only mount is read and never
	// written unless it changes).
	Lock   string
	Locked error
	// Empty returns the state of a store whose file does not exist.
	// Required.
	Empty func() *T
	// WriteEmpty writes the empty state when the file does not exist,
	// before OpenFile returns; otherwise the first commit writes it,
	// creating its directory (mode 0700).
	WriteEmpty bool
	// Encode and Decode turn a state into the file's content and back.
	// Decode checks everything a commit could not have written.
	Encode func(*T) ([]byte, error)
	Decode func([]byte) (*T, error)
	// Secret, when set, says what the file holds that only the service
	// may read ("password hashes"): a file open to group or others is
	// refused, except on Windows, whose modes say nothing of it.
	Secret string
	// MaxSize, when positive, bounds the file in bytes.
	MaxSize int64
	// FS is where files are written; nil means atomicfile.OS.
	FS atomicfile.FS
	// Prefix and What name the store in errors: "registry" and "store
	// file", for "registry: read store file …".
	Prefix, What string
}

// File is a durable [Store]: a [Mem] whose every state is first written
// whole to one file, by writing a temporary file, flushing it, renaming it
// over the state file and flushing the directory (package
// internal/atomicfile). Only then does Commit return, so an acknowledged
// commit survives a crash or power loss, and a crash at any point leaves
// exactly the state before a commit or exactly the state after it, never a
// mix. A commit that fails before the rename changes nothing; one that
// fails flushing the directory after the rename returns an error and
// leaves the store's state as it was, but the new file may be what the
// next OpenFile finds.
//
// A File is safe for concurrent use; commits are serialised.
type File[T any] struct {
	*Mem[T]
	cfg  FileConfig[T]
	dir  string
	fs   atomicfile.FS
	lock io.Closer // nil without FileConfig.Lock
}

var _ Store[struct{}] = (*File[struct{}])(nil)

// OpenFile opens the store whose state cfg.Path holds, starting from
// cfg.Empty when there is no such file. A file that cannot be read, is
// open to others when it must not be, or does not decode is an error
// naming it; it is never replaced.
func OpenFile[T any](cfg FileConfig[T]) (*File[T], error) {
	f := &File[T]{cfg: cfg, dir: filepath.Dir(cfg.Path), fs: cfg.FS}
	if f.fs == nil {
		f.fs = atomicfile.OS{}
	}
	if cfg.Lock != "" {
		lock, err := atomicfile.LockDir(f.dir, cfg.Lock)
		if errors.Is(err, atomicfile.ErrLocked) {
			err = cfg.Locked
		}
		if err != nil {
			return nil, fmt.Errorf("%s: open %s: %w", cfg.Prefix, f.dir, err)
		}
		f.lock = lock
	}
	st, err := f.load()
	if err != nil {
		if f.lock != nil {
			f.lock.Close()
		}
		return nil, err
	}
	f.Mem = NewMem(st, cfg.MemConfig)
	f.persist = f.write
	return f, nil
}

// write makes st the state on disk. It runs under the image's lock (or
// before the store is shared), so writes never interleave. The first
// write of a store opened without its file creates the file's directory.
func (f *File[T]) write(st *T) error {
	b, err := f.cfg.Encode(st)
	if err != nil {
		return fmt.Errorf("%s: encode %s: %w", f.cfg.Prefix, f.cfg.What, err)
	}
	if f.Mem == nil || f.cfg.Seq(f.state) == 0 {
		if err := os.MkdirAll(f.dir, 0o700); err != nil {
			return fmt.Errorf("%s: create directory %s: %w", f.cfg.Prefix, f.dir, err)
		}
	}
	if err := atomicfile.Write(f.fs, f.cfg.Path, f.cfg.TempPrefix, b); err != nil {
		return fmt.Errorf("%s: %w", f.cfg.Prefix, err)
	}
	return nil
}

// Close implements io.Closer. It waits for a commit in progress, then
// releases the directory for the next [OpenFile]. Closing a closed store
// does nothing.
func (f *File[T]) Close() error {
	if !f.close() || f.lock == nil {
		return nil
	}
	if err := f.lock.Close(); err != nil {
		return fmt.Errorf("%s: release %s: %w", f.cfg.Prefix, f.dir, err)
	}
	return nil
}

// Abandon releases the directory lock and nothing else, as the death of
// the process would; the store is not to be used after it. It is for
// tests of what a crash leaves.
func (f *File[T]) Abandon() error {
	if f.lock == nil {
		return nil
	}
	return f.lock.Close()
}
