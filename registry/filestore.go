package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/scorehub/scorehub/internal/atomicfile"
)

// Names inside a FileStore's directory.
const (
	stateFileName = "registry.json"
	lockFileName  = "registry.lock"
	// tempPrefix starts the name of a state file being written. One left
	// behind by a crash was never renamed into place, so open removes it.
	tempPrefix = stateFileName + ".tmp-"
)

// fileFormat is the version of the state file this build reads and writes.
// A change that an older build would misread gets a new number.
const fileFormat = 1

// ErrLocked reports a FileStore or FileJobStore directory that another open
// store holds, in this process or in another one.
var ErrLocked = errors.New("registry: store directory is in use by another process")

// FileStore is a durable [Store]. It keeps every record in one JSON file,
// registry.json, in its directory, and commits by writing the whole new
// state to a temporary file, flushing it to stable storage, renaming it over
// registry.json and flushing the directory (see package internal/atomicfile).
// Only then does Commit return, so an acknowledged write survives a crash or
// power loss, and a crash at any point leaves exactly the state before a
// write or exactly the state after it, never a mix.
//
// A commit that fails before the rename changes nothing. One that fails
// flushing the directory after the rename returns an error and leaves the
// store's state as it was, but the new file may be what the next
// [OpenFileStore] finds.
//
// One FileStore at a time may have a directory open: another OpenFileStore
// of it, in any process, fails with [ErrLocked] until this one is closed or
// its process exits. FileStore needs flock(2) for that and is available on
// Linux, macOS, the BSDs and illumos.
//
// A FileStore is safe for concurrent use; commits are serialised.
type FileStore struct {
	image
	dir  string
	path string
	fs   atomicfile.FS
	lock io.Closer
}

var _ Store = (*FileStore)(nil)

// OpenFileStore opens the store kept in dir, creating dir (mode 0700) when
// it does not exist. A directory without a state file starts a new store,
// holding what [NewMemStore] would, and writes it at once. A state file that
// cannot be read, is not a state file of a known format version, or breaks a
// rule of the records is an error naming it; it is never replaced.
func OpenFileStore(dir string, opts StoreOptions) (*FileStore, error) {
	return openFileStore(dir, opts, atomicfile.OS{})
}

func openFileStore(dir string, opts StoreOptions, fsys atomicfile.FS) (*FileStore, error) {
	if dir == "" {
		return nil, errors.New("registry: OpenFileStore needs a directory")
	}
	lock, err := lockDir(dir, lockFileName, "store")
	if err != nil {
		return nil, err
	}
	s := &FileStore{dir: dir, path: filepath.Join(dir, stateFileName), fs: fsys, lock: lock}
	s.opts = opts
	if err := s.load(opts); err != nil {
		lock.Close()
		return nil, err
	}
	s.persist = s.commit
	return s, nil
}

// lockDir creates dir (mode 0700) when it does not exist and takes the
// lock file name in it, so that one store at a time has dir open. what
// names the store in errors.
func lockDir(dir, name, what string) (io.Closer, error) {
	lock, err := atomicfile.LockDir(dir, name)
	if errors.Is(err, atomicfile.ErrLocked) {
		err = ErrLocked
	}
	if err != nil {
		return nil, fmt.Errorf("registry: open %s %s: %w", what, dir, err)
	}
	return lock, nil
}

// load sets s.state from the state file, or writes a new one when there is
// none. It runs holding the directory lock, so any temporary file present
// belongs to a writer that crashed.
func (s *FileStore) load(opts StoreOptions) error {
	if err := atomicfile.RemoveTemps(s.dir, tempPrefix); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		st := NewState(opts.now())
		if err := s.commit(st); err != nil {
			return err
		}
		s.state = st
		return nil
	}
	if err != nil {
		return fmt.Errorf("registry: read store file: %w", err)
	}
	st, err := decodeState(b)
	if err != nil {
		return fmt.Errorf("registry: %s is not a valid store file: %w", s.path, err)
	}
	// The last writer may have crashed after its rename but before its
	// directory flush: make what was read durable before anyone relies on it.
	if err := atomicfile.Sync(s.path); err != nil {
		return fmt.Errorf("registry: sync %s: %w", s.path, err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return fmt.Errorf("registry: sync directory %s: %w", s.dir, err)
	}
	s.state = st
	return nil
}

// commit makes st the state on disk. It runs under the image's lock (or
// before the store is shared), so commits never interleave.
func (s *FileStore) commit(st *State) error {
	b, err := encodeState(st)
	if err != nil {
		return fmt.Errorf("registry: encode state: %w", err)
	}
	if err := atomicfile.Write(s.fs, s.path, tempPrefix, b); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	return nil
}

// Close implements [Store]. It waits for a write in progress, then releases
// the directory for the next [OpenFileStore]. Closing a closed store does
// nothing.
func (s *FileStore) Close() error {
	if !s.close() {
		return nil
	}
	if err := s.lock.Close(); err != nil {
		return fmt.Errorf("registry: release store %s: %w", s.dir, err)
	}
	return nil
}

// fileState is the state file: its format version and the records, in the
// JSON form of the record types, which is format 1.
type fileState struct {
	Format      int          `json:"format"`
	Seq         uint64       `json:"seq"`
	Groups      []Group      `json:"groups"`
	Deployments []Deployment `json:"deployments"`
	Queues      []Queue      `json:"queues"`
}

func encodeState(st *State) ([]byte, error) {
	f := fileState{Format: fileFormat, Seq: st.Seq(), Groups: st.Groups(), Deployments: st.Deployments(), Queues: st.Queues()}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the file is for people to read, not for a browser
	enc.SetIndent("", "\t")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeState(b []byte) (*State, error) {
	// The version comes first so that a file of another format is reported
	// as such, not as a field this build does not know.
	var v struct {
		Format *int `json:"format"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	if v.Format == nil {
		return nil, errors.New("no format version")
	}
	if *v.Format != fileFormat {
		return nil, fmt.Errorf("format version %d is not supported (this build reads %d)", *v.Format, fileFormat)
	}
	var f fileState
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	return BuildState(f.Seq, f.Groups, f.Deployments, f.Queues)
}
