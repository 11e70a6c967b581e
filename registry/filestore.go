package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/scorehub/scorehub/internal/atomicfile"
	"github.com/scorehub/scorehub/internal/image"
)

// Names inside a FileStore's directory.
const (
	stateFileName = "registry.json"
	lockFileName  = "registry.lock"
	// tempPrefix starts the name of a state file being written. One left
	// behind by a crash was never renamed into place, so open removes it.
	tempPrefix = stateFileName + ".tmp-"
	// modelsDirName is the directory of model artifacts, each a file
	// named by its SHA-256.
	modelsDirName = "models"
	// artifactTempPrefix starts the name of an artifact being written.
	artifactTempPrefix = ".tmp-"
)

// fileFormat is the version of the state file this build writes. A change
// that an older build would misread gets a new number. Format 2 added
// models; this build reads format 1 files too.
const fileFormat = 2

// ErrLocked reports a FileStore or jobs.FileStore directory that another open
// store holds, in this process or in another one.
var ErrLocked = errors.New("registry: store directory is in use by another process")

// FileStore is a durable [Store] and [ArtifactStore]. It keeps every record in one JSON file,
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
// Model artifacts are files in the directory's models/ subdirectory, each
// named by its SHA-256 and written the same way, before the commit that
// adds a version referencing it; an artifact no version references is
// deleted after the commit that dropped the last reference. A crash
// between an artifact's write and its commit leaves an artifact no version
// references, which the next OpenFileStore removes, as it removes
// artifacts half written.
//
// One FileStore at a time may have a directory open: another OpenFileStore
// of it, in any process, fails with [ErrLocked] until this one is closed or
// its process exits. FileStore needs flock(2) for that and is available on
// Linux, macOS, the BSDs and illumos.
//
// A FileStore is safe for concurrent use; commits are serialised.
type FileStore struct {
	records
	dir    string
	models string // the artifacts' directory
	fs     atomicfile.FS
}

var (
	_ Store         = (*FileStore)(nil)
	_ ArtifactStore = (*FileStore)(nil)
)

// OpenFileStore opens the store kept in dir, creating dir (mode 0700) when
// it does not exist. A directory without a state file starts a new store,
// holding what [NewMemStore] would, and writes it at once. A state file that
// cannot be read, is not a state file of a known format version, or breaks a
// rule of the records is an error naming it; it is never replaced. So is a
// model version whose artifact is missing or of the wrong size: the store
// never serves a version it cannot load.
func OpenFileStore(dir string, opts StoreOptions) (*FileStore, error) {
	return openFileStore(dir, opts, atomicfile.OS{})
}

func openFileStore(dir string, opts StoreOptions, fsys atomicfile.FS) (*FileStore, error) {
	if dir == "" {
		return nil, errors.New("registry: OpenFileStore needs a directory")
	}
	s := &FileStore{records: records{opts: opts}, dir: dir, models: filepath.Join(dir, modelsDirName), fs: fsys}
	f, err := image.OpenFile(image.FileConfig[State]{
		MemConfig:  imageConfig(s.hasArtifact),
		Path:       filepath.Join(dir, stateFileName),
		TempPrefix: tempPrefix,
		Lock:       lockFileName,
		Locked:     ErrLocked,
		Empty:      func() *State { return NewState(opts.now()) },
		WriteEmpty: true,
		Encode:     encodeState,
		Decode:     decodeState,
		FS:         fsys,
		Prefix:     "registry",
		What:       "store file",
	})
	if err != nil {
		return nil, err
	}
	s.img = f
	if err := f.Locked(context.Background(), s.checkArtifacts); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func (s *FileStore) hasArtifact(sum string) bool {
	_, err := os.Stat(s.artifactPath(sum))
	return err == nil
}

// checkArtifacts fails when a version of st has no artifact of its size,
// and removes what crashed writers left in the artifacts' directory:
// temporary files, and artifacts no version references.
func (s *FileStore) checkArtifacts(st *State) error {
	for _, m := range st.Models() {
		for _, v := range m.Versions {
			fi, err := os.Stat(s.artifactPath(v.SHA256))
			if err != nil {
				return fmt.Errorf("registry: model %s version %d: artifact %s: %w", m.Name, v.Version, v.SHA256, err)
			}
			if fi.Size() != v.Size {
				return fmt.Errorf("registry: model %s version %d: artifact %s has %d bytes, want %d", m.Name, v.Version, v.SHA256, fi.Size(), v.Size)
			}
		}
	}
	entries, err := os.ReadDir(s.models)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("registry: read %s: %w", s.models, err)
	}
	removed := false
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, artifactTempPrefix) && !(validSHA256(name) && !st.referenced(name)) {
			continue
		}
		if err := os.Remove(filepath.Join(s.models, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("registry: remove leftover artifact: %w", err)
		}
		removed = true
	}
	if removed {
		if err := s.fs.SyncDir(s.models); err != nil {
			return fmt.Errorf("registry: sync directory %s: %w", s.models, err)
		}
	}
	return nil
}

// artifactPath is where the artifact sum is kept; sum must be valid.
func (s *FileStore) artifactPath(sum string) string { return filepath.Join(s.models, sum) }

// PutArtifact implements [ArtifactStore]. The artifact is on stable
// storage when it returns.
func (s *FileStore) PutArtifact(ctx context.Context, sum string, data []byte) error {
	if err := s.artifactCall(ctx); err != nil {
		return err
	}
	if err := checkArtifactSum(sum, data); err != nil {
		return err
	}
	if err := os.Mkdir(s.models, 0o700); err == nil {
		// A new directory's entry must be durable before files in it are.
		if err := s.fs.SyncDir(s.dir); err != nil {
			return fmt.Errorf("registry: sync directory %s: %w", s.dir, err)
		}
	} else if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("registry: create %s: %w", s.models, err)
	}
	if err := atomicfile.Write(s.fs, s.artifactPath(sum), artifactTempPrefix, data); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	return nil
}

// Artifact implements [ArtifactStore]. An artifact whose content is not
// its SHA-256 any more (damaged on disk) is an error, never returned.
func (s *FileStore) Artifact(ctx context.Context, sum string) ([]byte, error) {
	if err := s.artifactCall(ctx); err != nil {
		return nil, err
	}
	if !validSHA256(sum) {
		return nil, errorf(ErrNotFound, "no model artifact has SHA-256 %q", sum)
	}
	b, err := os.ReadFile(s.artifactPath(sum))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errorf(ErrNotFound, "no model artifact has SHA-256 %s", sum)
	}
	if err != nil {
		return nil, fmt.Errorf("registry: read artifact: %w", err)
	}
	if err := checkArtifactSum(sum, b); err != nil {
		return nil, fmt.Errorf("%w: the file %s is damaged", err, s.artifactPath(sum))
	}
	return b, nil
}

// DeleteArtifact implements [ArtifactStore].
func (s *FileStore) DeleteArtifact(ctx context.Context, sum string) error {
	if !validSHA256(sum) {
		return s.artifactCall(ctx)
	}
	// Under the commit lock, which the commit's check of artifacts takes
	// too: no commit can add a reference between the check and the
	// removal.
	return s.img.Locked(ctx, func(cur *State) error {
		if cur.referenced(sum) {
			return nil
		}
		err := os.Remove(s.artifactPath(sum))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("registry: delete artifact: %w", err)
		}
		if err := s.fs.SyncDir(s.models); err != nil {
			return fmt.Errorf("registry: sync directory %s: %w", s.models, err)
		}
		return nil
	})
}

// fileState is the state file: its format version and the records, in the
// JSON form of the record types, which is format 2 (format 1 had no
// models).
type fileState struct {
	Format      int          `json:"format"`
	Seq         uint64       `json:"seq"`
	Groups      []Group      `json:"groups"`
	Deployments []Deployment `json:"deployments"`
	Queues      []Queue      `json:"queues"`
	Models      []Model      `json:"models"`
}

func encodeState(st *State) ([]byte, error) {
	return image.EncodeJSON(fileState{Format: fileFormat, Seq: st.Seq(), Groups: st.Groups(), Deployments: st.Deployments(),
		Queues: st.Queues(), Models: st.Models()})
}

func decodeState(b []byte) (*State, error) {
	var f fileState
	format, err := image.DecodeJSON(b, &f, 1, fileFormat)
	if err != nil {
		return nil, err
	}
	if format == 1 && f.Models != nil {
		return nil, errors.New("format version 1 has no models")
	}
	return BuildStateWithModels(f.Seq, f.Groups, f.Deployments, f.Queues, f.Models)
}
