package accounts

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/scorehub/scorehub/internal/atomicfile"
)

// renameFailFS is the real file system whose renames fail while fail is
// set: a commit that stops before its new file replaces the old one, as a
// crash there would leave it.
type renameFailFS struct {
	atomicfile.OS
	fail atomic.Bool
}

var errRename = errors.New("rename failed")

func (f *renameFailFS) Rename(oldpath, newpath string) error {
	if f.fail.Load() {
		return errRename
	}
	return f.OS.Rename(oldpath, newpath)
}

func TestFileAccountStoreFailedCommitKeepsTheOldState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fsys := &renameFailFS{}
	s, err := openFileStore(dir, fsys)
	if err != nil {
		t.Fatal(err)
	}
	h, err := bcrypt.GenerateFromPassword([]byte("correct horse battery"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	user := func(name string) StoredUser {
		return StoredUser{Name: name, PasswordHash: h, CredentialVersion: "cv", Revision: 1}
	}
	first := &State{Seq: 1, Users: []StoredUser{user("alice")}}
	first.Change = &Change{User: &first.Users[0]}
	if err := s.Commit(ctx, 0, first); err != nil {
		t.Fatal(err)
	}
	fsys.fail.Store(true)
	second := first.withUser(user("bob"))
	second.Seq, second.Change = 2, &Change{User: &second.Users[1]}
	if err := s.Commit(ctx, 1, second); !errors.Is(err, errRename) {
		t.Fatalf("commit whose rename fails: %v, want the rename's error", err)
	}
	if st, _ := s.Load(ctx); st.Seq != 1 || len(st.Users) != 1 {
		t.Errorf("after a failed commit the store holds seq %d with %d users, want seq 1 with alice", st.Seq, len(st.Users))
	}
	s.Close()

	re, err := OpenFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if st, _ := re.Load(ctx); st.Seq != 1 || len(st.Users) != 1 || st.Users[0].Name != "alice" {
		t.Errorf("reopened after a failed commit the store holds %+v, want seq 1 with alice", st)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), accountTempPrefix) {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestAPITokenFormat(t *testing.T) {
	secret, err := newAPITokenSecret(strings.NewReader(strings.Repeat("\xff\x00\x3e\xf7", 64)))
	if err != nil {
		t.Fatal(err)
	}
	// Bytes at or above 248 are skipped so that every character is
	// equally likely; the rest are taken modulo 62.
	if want := APITokenPrefix + strings.Repeat("0", 1) + strings.Repeat("0z0", 14); secret[:len(want)] != want {
		t.Errorf("secret %s does not start %s", secret, want)
	}
	if !apiTokenWellFormed(secret) {
		t.Fatalf("a new secret %s is not well formed", secret)
	}
	// Every change of one character is caught by the check or the
	// alphabet.
	for i := len(APITokenPrefix); i < len(secret); i++ {
		for _, c := range []byte(base62 + "-_+/=") {
			if c == secret[i] {
				continue
			}
			mutated := secret[:i] + string(c) + secret[i+1:]
			if apiTokenWellFormed(mutated) {
				t.Fatalf("changing character %d to %q leaves a well-formed token", i, c)
			}
		}
	}
}
