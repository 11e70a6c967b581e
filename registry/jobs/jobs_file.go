package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/scorehub/scorehub/internal/atomicfile"
	"github.com/scorehub/scorehub/registry"
)

// Names inside a FileStore's directory.
const (
	jobLockFileName  = "jobs.lock"
	jobFileSuffix    = ".job.json"
	jobResultSuffix  = ".result.json"
	jobTempPrefix    = ".tmp-"
	jobFileFormat    = 4 // 1 to 3 are read too: 1 lacks Job.Owner, 2 Job.ResultBytes, 3 Job.Revision and the lease
	maxJobFileLength = 1 << 20
)

// FileStore is a durable [Store]. It keeps each job in its own JSON
// file, <id>.job.json, and the result of a finished job beside it in
// <id>.result.json, both written as [registry.FileStore] writes its state: to a
// temporary file, flushed, renamed into place, the directory flushed. A
// result is made durable before its job is marked FINISHED, so a FINISHED
// job always has its result, and a result whose job file does not say
// FINISHED is what a crash left between the two writes: opening removes it.
//
// The jobs a crash interrupted are still PENDING or RUNNING when the store
// is opened again; the [Registry] over it ends them.
//
// One FileStore at a time may have a directory open, as with FileStore.
// A FileStore is safe for concurrent use; writes are serialised.
type FileStore struct {
	jobCore
	dir  string
	fs   atomicfile.FS
	lock io.Closer
}

var _ Store = (*FileStore)(nil)

// OpenFileStore opens the job store kept in dir, creating dir (mode
// 0700) when it does not exist. A job file that cannot be read is an error
// naming it; it is never replaced.
func OpenFileStore(dir string, opts registry.StoreOptions) (*FileStore, error) {
	return openFileJobStore(dir, opts, atomicfile.OS{})
}

func openFileJobStore(dir string, opts registry.StoreOptions, fsys atomicfile.FS) (*FileStore, error) {
	if dir == "" {
		return nil, errors.New("registry: OpenFileJobStore needs a directory")
	}
	lock, err := lockDir(dir, jobLockFileName, "job store")
	if err != nil {
		return nil, err
	}
	s := &FileStore{dir: dir, fs: fsys, lock: lock}
	s.init(opts)
	s.persist = s.write
	s.remove = s.delete
	if err := s.load(); err != nil {
		lock.Close()
		return nil, err
	}
	return s, nil
}

// lockDir creates dir (mode 0700) when it does not exist and takes the
// lock file name in it, so that one store at a time has dir open. what
// names the store in errors.
func lockDir(dir, name, what string) (io.Closer, error) {
	lock, err := atomicfile.LockDir(dir, name)
	if errors.Is(err, atomicfile.ErrLocked) {
		err = registry.ErrLocked
	}
	if err != nil {
		return nil, fmt.Errorf("registry: open %s %s: %w", what, dir, err)
	}
	return lock, nil
}

// load reads every job and removes what a crashed writer left behind.
func (s *FileStore) load() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("registry: read job store directory: %w", err)
	}
	var resultFiles []string
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(s.dir, name)
		switch {
		case strings.HasPrefix(name, jobTempPrefix):
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("registry: remove leftover file: %w", err)
			}
		case strings.HasSuffix(name, jobResultSuffix):
			resultFiles = append(resultFiles, strings.TrimSuffix(name, jobResultSuffix))
		case strings.HasSuffix(name, jobFileSuffix):
			j, err := readJobFile(path)
			if err != nil {
				return fmt.Errorf("registry: %s is not a valid job file: %w", path, err)
			}
			if j.ID+jobFileSuffix != name {
				return fmt.Errorf("registry: %s holds job %q", path, j.ID)
			}
			s.jobs[j.ID] = j
		}
	}
	for _, id := range resultFiles {
		if j, ok := s.jobs[id]; ok && j.State == StateFinished {
			s.results[id] = nil
			continue
		}
		// A result whose job never became FINISHED: the crash came between
		// the two writes, or after the job's file was removed.
		if err := os.Remove(filepath.Join(s.dir, id+jobResultSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("registry: remove leftover result: %w", err)
		}
	}
	return nil
}

// write makes j durable, and result, when non-nil, before it.
func (s *FileStore) write(j *Job, result []byte) error {
	if result != nil {
		if err := atomicfile.Write(s.fs, filepath.Join(s.dir, j.ID+jobResultSuffix), jobTempPrefix, result); err != nil {
			return fmt.Errorf("registry: %w", err)
		}
	}
	b, err := encodeJob(j)
	if err != nil {
		return fmt.Errorf("registry: encode job %q: %w", j.ID, err)
	}
	if err := atomicfile.Write(s.fs, filepath.Join(s.dir, j.ID+jobFileSuffix), jobTempPrefix, b); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	return nil
}

// delete removes a job's files, the job's first so that a crash between
// the two leaves a result open removes.
func (s *FileStore) delete(id string, hasResult bool) error {
	names := []string{id + jobFileSuffix}
	if hasResult {
		names = append(names, id+jobResultSuffix)
	}
	for _, name := range names {
		if err := s.fs.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("registry: remove job %q: %w", id, err)
		}
	}
	return nil
}

// JobResult implements [Store].
func (s *FileStore) JobResult(ctx context.Context, id string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if _, ok := s.results[id]; !ok {
		return nil, errorf(registry.ErrNotFound, "job %q has no stored result", id)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, id+jobResultSuffix))
	if err != nil {
		return nil, fmt.Errorf("registry: read result of job %q: %w", id, err)
	}
	return b, nil
}

// Close implements [Store]. It waits for a write in progress, then
// releases the directory. Closing a closed store does nothing.
func (s *FileStore) Close() error {
	if !s.close() {
		return nil
	}
	if err := s.lock.Close(); err != nil {
		return fmt.Errorf("registry: release job store %s: %w", s.dir, err)
	}
	return nil
}

// fileJob is a job file: its format version and the job, in the JSON form
// of [Job], which is format 4. Format 3 is the same without "revision"
// and the lease members (its jobs are at revision 0), format 2 without
// "resultBytes" either (its results count as empty against a
// [ResultQuota]), format 1 without "owner" either.
type fileJob struct {
	Format int `json:"format"`
	Job
}

func encodeJob(j *Job) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "\t")
	if err := enc.Encode(fileJob{Format: jobFileFormat, Job: *j}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func readJobFile(path string) (*Job, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) > maxJobFileLength {
		return nil, fmt.Errorf("larger than %d bytes", maxJobFileLength)
	}
	var f fileJob
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if f.Format < 1 || f.Format > jobFileFormat {
		return nil, fmt.Errorf("format version %d is not supported (this build reads %d)", f.Format, jobFileFormat)
	}
	j := &f.Job
	if !j.State.Valid() {
		return nil, fmt.Errorf("unknown state %q", j.State)
	}
	if err := j.validate(); err != nil {
		return nil, err
	}
	return j, nil
}
