package accounts

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/scorehub/scorehub/internal/atomicfile"
	"github.com/scorehub/scorehub/internal/image"
)

// Names inside a FileStore's directory.
const (
	accountFileName = "accounts.json"
	accountLockName = "accounts.lock"
	// accountTempPrefix starts the name of an accounts file being
	// written. One left behind by a crash was never renamed into place,
	// so open removes it.
	accountTempPrefix = accountFileName + ".tmp-"
)

// accountFileFormat is the version of the accounts file this build reads
// and writes. A change that an older build would misread gets a new
// number.
const accountFileFormat = 1

// ErrStoreLocked reports a FileStore directory that another
// open store holds, in this process or in another one.
var ErrStoreLocked = errors.New("tokens: account store directory is in use by another process")

// FileStore is a durable [Store]. It keeps every user and API
// token in one JSON file, accounts.json (mode 0600: it holds password
// hashes), in its directory, and commits by writing the whole new state to
// a temporary file, flushing it, renaming it over accounts.json and
// flushing the directory (see package internal/atomicfile). Only then does
// Commit return, so an acknowledged write survives a crash or power loss,
// and a crash at any point leaves exactly the state before a commit or
// exactly the state after it.
//
// One FileStore at a time may have a directory open: another
// [OpenFileStore] of it, in any process, fails with
// [ErrStoreLocked] until this one is closed or its process exits
// (flock(2): Linux, macOS, the BSDs and illumos).
//
// A FileStore is safe for concurrent use; commits are serialised.
type FileStore struct{ accountImage }

var _ Store = (*FileStore)(nil)

// OpenFileStore opens the store kept in dir, creating dir (mode
// 0700) and an empty store when they do not exist. A file that cannot be
// read, is open to group or others, is of an unknown format version, or
// holds what no store writes (a malformed name or hash, a name twice) is an
// error naming it; it is never replaced.
func OpenFileStore(dir string) (*FileStore, error) {
	return openFileStore(dir, atomicfile.OS{})
}

func openFileStore(dir string, fsys atomicfile.FS) (*FileStore, error) {
	if dir == "" {
		return nil, errors.New("tokens: accounts.OpenFileStore needs a directory")
	}
	f, err := image.OpenFile(image.FileConfig[State]{
		MemConfig:  accountConfig,
		Path:       filepath.Join(dir, accountFileName),
		TempPrefix: accountTempPrefix,
		Lock:       accountLockName,
		Locked:     ErrStoreLocked,
		Empty:      func() *State { return &State{} },
		WriteEmpty: true,
		Encode:     encodeAccounts,
		Decode:     decodeAccounts,
		Secret:     "password hashes",
		FS:         fsys,
		Prefix:     "tokens",
		What:       "accounts file",
	})
	if err != nil {
		return nil, err
	}
	return &FileStore{accountImage{f}}, nil
}

// accountFile is the accounts file, format 1.
type accountFile struct {
	Format    int              `json:"format"`
	Seq       uint64           `json:"seq"`
	Users     []StoredUser     `json:"users"`
	APITokens []StoredAPIToken `json:"apiTokens"`
}

func encodeAccounts(st *State) ([]byte, error) {
	f := accountFile{Format: accountFileFormat, Seq: st.Seq, Users: st.Users, APITokens: st.APITokens}
	if f.Users == nil {
		f.Users = []StoredUser{}
	}
	if f.APITokens == nil {
		f.APITokens = []StoredAPIToken{}
	}
	return image.EncodeJSON(f)
}

func decodeAccounts(b []byte) (*State, error) {
	var f accountFile
	if _, err := image.DecodeJSON(b, &f, accountFileFormat); err != nil {
		return nil, err
	}
	st := &State{Seq: f.Seq}
	if len(f.Users) > 0 {
		st.Users = f.Users
	}
	if len(f.APITokens) > 0 {
		st.APITokens = f.APITokens
	}
	if err := checkAccountState(st); err != nil {
		return nil, err
	}
	return st, nil
}

// checkAccountState refuses a state that no Book commits: it is
// corrupt, or edited by hand.
func checkAccountState(st *State) error {
	if !slices.IsSortedFunc(st.Users, func(x, y StoredUser) int { return strings.Compare(x.Name, y.Name) }) {
		return errors.New("users are not sorted by name")
	}
	for i, u := range st.Users {
		if err := checkUserName(u.Name); err != nil {
			return fmt.Errorf("user %d: %w", i, err)
		}
		if i > 0 && st.Users[i-1].Name == u.Name {
			return fmt.Errorf("user %q appears twice", u.Name)
		}
		if _, err := bcryptCost(u.PasswordHash); err != nil {
			return fmt.Errorf("user %q: %w", u.Name, err)
		}
		if err := checkGroups("/groups", u.Groups); err != nil {
			return fmt.Errorf("user %q: %w", u.Name, err)
		}
		if u.CredentialVersion == "" || u.Revision == 0 {
			return fmt.Errorf("user %q has no credential version or revision", u.Name)
		}
	}
	if !slices.IsSortedFunc(st.APITokens, func(x, y StoredAPIToken) int { return strings.Compare(x.ID, y.ID) }) {
		return errors.New("API tokens are not sorted by ID")
	}
	hashes := make(map[string]bool, len(st.APITokens))
	for i, t := range st.APITokens {
		if len(t.ID) != apiTokenIDLen {
			return fmt.Errorf("API token %d: ID %q is not %d characters", i, t.ID, apiTokenIDLen)
		}
		if i > 0 && st.APITokens[i-1].ID == t.ID {
			return fmt.Errorf("API token %q appears twice", t.ID)
		}
		if err := checkAPITokenName(t.Name); err != nil {
			return fmt.Errorf("API token %q: %w", t.ID, err)
		}
		if err := checkUserName(t.Owner); err != nil {
			return fmt.Errorf("API token %q: owner: %w", t.ID, err)
		}
		if err := checkGroups("/webApiGroups", t.WebAPIGroups); err != nil {
			return fmt.Errorf("API token %q: %w", t.ID, err)
		}
		if _, err := parseAPITokenHash(t.Hash); err != nil {
			return fmt.Errorf("API token %q: %w", t.ID, err)
		}
		if hashes[t.Hash] {
			return fmt.Errorf("API token %q has the hash of another", t.ID)
		}
		hashes[t.Hash] = true
		if t.CredentialVersion == "" {
			return fmt.Errorf("API token %q has no credential version", t.ID)
		}
	}
	return nil
}
