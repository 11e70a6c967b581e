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
	"strings"
	"time"
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

// ErrLocked reports a FileStore directory that another open FileStore holds,
// in this process or in another one.
var ErrLocked = errors.New("registry: store directory is in use by another process")

// FileStore is a durable [Store]. It keeps every record in one JSON file,
// registry.json, in its directory, and commits a write by writing the whole
// new state to a temporary file, flushing it to stable storage, renaming it
// over registry.json and flushing the directory. Only then does the write
// return and the new state become visible, so an acknowledged write survives
// a crash or power loss, and a crash at any point leaves exactly the state
// before a write or exactly the state after it, never a mix.
//
// A write that fails before the rename changes nothing. One that fails
// flushing the directory after the rename returns an error and leaves the
// store's state as it was, but the new file may be what the next
// [OpenFileStore] finds.
//
// One FileStore at a time may have a directory open: another OpenFileStore
// of it, in any process, fails with [ErrLocked] until this one is closed or
// its process exits. FileStore needs flock(2) for that and is available on
// Linux, macOS, the BSDs and illumos.
//
// A FileStore is safe for concurrent use; writes are serialised.
type FileStore struct {
	core
	dir  string
	path string
	fs   fileSystem
	lock io.Closer
}

var _ Store = (*FileStore)(nil)

// OpenFileStore opens the store kept in dir, creating dir (mode 0700) when
// it does not exist. A directory without a state file starts a new store,
// holding what [NewMemStore] would, and writes it at once. A state file that
// cannot be read, is not a state file of a known format version, or breaks a
// rule of the store is an error naming it; it is never replaced.
func OpenFileStore(dir string, opts StoreOptions) (*FileStore, error) {
	return openFileStore(dir, opts, osFS{})
}

func openFileStore(dir string, opts StoreOptions, fsys fileSystem) (*FileStore, error) {
	if dir == "" {
		return nil, errors.New("registry: OpenFileStore needs a directory")
	}
	lock, err := lockDir(dir, lockFileName, "store")
	if err != nil {
		return nil, err
	}
	s := &FileStore{dir: dir, path: filepath.Join(dir, stateFileName), fs: fsys, lock: lock}
	s.opts = opts
	if err := s.load(); err != nil {
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
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("registry: create %s directory: %w", what, err)
	}
	lock, err := lockFile(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("registry: open %s %s: %w", what, dir, err)
	}
	return lock, nil
}

// load sets s.state from the state file, or writes a new one when there is
// none. It runs holding the directory lock, so any temporary file present
// belongs to a writer that crashed.
func (s *FileStore) load() error {
	if err := s.removeTemps(); err != nil {
		return err
	}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		st := NewState(s.opts.now())
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
	if err := syncPath(s.path); err != nil {
		return fmt.Errorf("registry: sync %s: %w", s.path, err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return fmt.Errorf("registry: sync directory %s: %w", s.dir, err)
	}
	s.state = st
	return nil
}

func (s *FileStore) removeTemps() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("registry: read store directory: %w", err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("registry: remove leftover file: %w", err)
		}
	}
	return nil
}

// commit makes st the state on disk. It runs under core's lock (or before
// the store is shared), so commits never interleave.
func (s *FileStore) commit(st *State) error {
	b, err := encodeState(st)
	if err != nil {
		return fmt.Errorf("registry: encode state: %w", err)
	}
	return writeAtomic(s.fs, s.dir, s.path, tempPrefix, b)
}

// writeAtomic replaces the file at path, in dir, with b: it writes b to a
// temporary file named tempPrefix+random, flushes it to stable storage,
// renames it over path and flushes dir. A crash at any point leaves the old
// file or the new one, never a mix; a temporary file left behind is the
// caller's to remove at its next open.
func writeAtomic(fsys fileSystem, dir, path, tempPrefix string, b []byte) error {
	f, err := fsys.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("registry: write %s: %w", path, err)
	}
	tmp := f.Name()
	if err := writeSynced(f, b); err != nil {
		// Best effort: a temporary file left behind is removed at the next open.
		_ = fsys.Remove(tmp)
		return fmt.Errorf("registry: write %s: %w", tmp, err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		_ = fsys.Remove(tmp)
		return fmt.Errorf("registry: replace %s: %w", path, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("registry: sync directory %s: %w", dir, err)
	}
	return nil
}

// writeSynced writes b to f, flushes it to stable storage and closes it.
func writeSynced(f tempFile, b []byte) error {
	_, err := f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncPath flushes the file or directory at path to stable storage; for a
// directory, that is its entries, so a rename within it survives a power
// loss.
func syncPath(path string) error {
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

// Dir returns the directory the store keeps its files in.
func (s *FileStore) Dir() string { return s.dir }

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

// fileSystem is what commit writes through. Tests replace it to fail, or to
// stop as a crash would, at each step.
type fileSystem interface {
	CreateTemp(dir, pattern string) (tempFile, error)
	Rename(oldpath, newpath string) error
	SyncDir(dir string) error
	Remove(name string) error
}

// tempFile is the part of *os.File that commit uses.
type tempFile interface {
	Name() string
	Write(b []byte) (int, error)
	Sync() error
	Close() error
}

type osFS struct{}

func (osFS) CreateTemp(dir, pattern string) (tempFile, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (osFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
func (osFS) SyncDir(dir string) error             { return syncPath(dir) }
func (osFS) Remove(name string) error             { return os.Remove(name) }

// The state file's records. They are separate from the domain types so that
// the file format changes only when fileFormat does, whatever becomes of the
// domain types' JSON tags.
type (
	fileState struct {
		Format      int              `json:"format"`
		Seq         uint64           `json:"seq"`
		Groups      []fileGroup      `json:"groups"`
		Deployments []fileDeployment `json:"deployments"`
		Queues      []fileQueue      `json:"queues"`
	}
	fileGroup struct {
		Name        string    `json:"name"`
		Description string    `json:"description,omitempty"`
		Auth        fileAuth  `json:"auth"`
		Revision    uint64    `json:"revision"`
		CreatedAt   time.Time `json:"createdAt"`
		UpdatedAt   time.Time `json:"updatedAt"`
	}
	fileAuth struct {
		Mode   string   `json:"mode"`
		Groups []string `json:"groups,omitempty"`
	}
	fileDeployment struct {
		Group       string         `json:"group"`
		Path        string         `json:"path"`
		Description string         `json:"description,omitempty"`
		Enabled     bool           `json:"enabled"`
		Endpoints   []fileEndpoint `json:"endpoints"`
		Revision    uint64         `json:"revision"`
		CreatedAt   time.Time      `json:"createdAt"`
		UpdatedAt   time.Time      `json:"updatedAt"`
	}
	fileEndpoint struct {
		Alias       string `json:"alias"`
		Process     string `json:"process"`
		Queue       string `json:"queue,omitempty"`
		TimeoutNs   int64  `json:"timeoutNs,omitempty"`
		Description string `json:"description,omitempty"`
	}
	fileQueue struct {
		Name          string    `json:"name"`
		MaxConcurrent int       `json:"maxConcurrent"`
		MaxWaiting    int       `json:"maxWaiting"`
		Revision      uint64    `json:"revision"`
		CreatedAt     time.Time `json:"createdAt"`
		UpdatedAt     time.Time `json:"updatedAt"`
	}
)

func encodeState(st *State) ([]byte, error) {
	f := fileState{Format: fileFormat, Seq: st.Seq()}
	groups, deployments, queues := st.Groups(), st.Deployments(), st.Queues()
	f.Groups = make([]fileGroup, len(groups))
	for i, g := range groups {
		f.Groups[i] = fileGroup{
			Name: g.Name, Description: g.Description,
			Auth:     fileAuth{Mode: string(g.Auth.Mode), Groups: g.Auth.Groups},
			Revision: g.Revision, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt,
		}
	}
	f.Deployments = make([]fileDeployment, len(deployments))
	for i, d := range deployments {
		eps := make([]fileEndpoint, len(d.Endpoints))
		for j, e := range d.Endpoints {
			eps[j] = fileEndpoint{Alias: e.Alias, Process: e.Process, Queue: e.Queue, TimeoutNs: int64(e.Timeout), Description: e.Description}
		}
		f.Deployments[i] = fileDeployment{
			Group: d.Group, Path: d.Path, Description: d.Description, Enabled: d.Enabled, Endpoints: eps,
			Revision: d.Revision, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
		}
	}
	f.Queues = make([]fileQueue, len(queues))
	for i, q := range queues {
		f.Queues[i] = fileQueue(q)
	}
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
	groups := make([]Group, len(f.Groups))
	for i, g := range f.Groups {
		groups[i] = Group{
			Name: g.Name, Description: g.Description,
			Auth:     AuthPolicy{Mode: AuthMode(g.Auth.Mode), Groups: g.Auth.Groups},
			Revision: g.Revision, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt,
		}
	}
	deployments := make([]Deployment, len(f.Deployments))
	for i, d := range f.Deployments {
		eps := make([]Endpoint, len(d.Endpoints))
		for j, e := range d.Endpoints {
			eps[j] = Endpoint{Alias: e.Alias, Process: e.Process, Queue: e.Queue, Timeout: time.Duration(e.TimeoutNs), Description: e.Description}
		}
		deployments[i] = Deployment{
			Group: d.Group, Path: d.Path, Description: d.Description, Enabled: d.Enabled, Endpoints: eps,
			Revision: d.Revision, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
		}
	}
	queues := make([]Queue, len(f.Queues))
	for i, q := range f.Queues {
		queues[i] = Queue(q)
	}
	return BuildState(f.Seq, groups, deployments, queues)
}
