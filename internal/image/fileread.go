package image

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"

	"github.com/scorehub/scorehub/internal/atomicfile"
)

// load reads the state file, or starts from the empty state when there is
// none. With the directory lock held, any temporary file present belongs
// to a writer that crashed.
func (f *File[T]) load() (*T, error) {
	if f.lock != nil {
		if err := atomicfile.RemoveTemps(f.dir, f.cfg.TempPrefix); err != nil {
			return nil, fmt.Errorf("%s: %w", f.cfg.Prefix, err)
		}
	}
	file, err := os.Open(f.cfg.Path)
	if errors.Is(err, fs.ErrNotExist) {
		st := f.cfg.Empty()
		if f.cfg.WriteEmpty {
			if err := f.write(st); err != nil {
				return nil, err
			}
		}
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: read %s: %w", f.cfg.Prefix, f.cfg.What, err)
	}
	defer file.Close()
	b, err := f.read(file)
	if err != nil {
		return nil, err
	}
	st, err := f.cfg.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %s is not a valid %s: %w", f.cfg.Prefix, f.cfg.Path, f.cfg.What, err)
	}
	if f.lock != nil {
		// The last writer may have crashed after its rename but before its
		// directory flush: make what was read durable before anyone relies
		// on it.
		if err := file.Sync(); err != nil {
			return nil, fmt.Errorf("%s: sync %s: %w", f.cfg.Prefix, f.cfg.Path, err)
		}
		if err := f.fs.SyncDir(f.dir); err != nil {
			return nil, fmt.Errorf("%s: sync directory %s: %w", f.cfg.Prefix, f.dir, err)
		}
	}
	return st, nil
}

// read returns the content of the state file, refusing what is no regular
// file, is open to others when it must not be, or is too large.
func (f *File[T]) read(file *os.File) ([]byte, error) {
	p, what, path := f.cfg.Prefix, f.cfg.What, f.cfg.Path
	fi, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s: %w", p, what, path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %s %s is not a regular file", p, what, path)
	}
	if perm := fi.Mode().Perm(); f.cfg.Secret != "" && perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("%s: %s %s holds %s but has mode %04o, open to group or others; run chmod 600 %s",
			p, what, path, f.cfg.Secret, perm, path)
	}
	r := io.Reader(file)
	if f.cfg.MaxSize > 0 {
		r = io.LimitReader(file, f.cfg.MaxSize+1)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: read %s %s: %w", p, what, path, err)
	}
	if f.cfg.MaxSize > 0 && int64(len(b)) > f.cfg.MaxSize {
		return nil, fmt.Errorf("%s: %s %s is larger than %d bytes", p, what, path, f.cfg.MaxSize)
	}
	return b, nil
}
