package accounts_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/tokens/accounts"
	"golang.org/x/crypto/bcrypt"
)

func openAccountFile(t *testing.T, dir string) *accounts.FileStore {
	t.Helper()
	s, err := accounts.OpenFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestFileStoreKeepsUsersAndTokens(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	c := newClock()
	s := openAccountFile(t, dir)
	cfg := accounts.Config{Store: s, BcryptCost: bcrypt.MinCost, Now: c.Now}
	a, err := accounts.OpenCheap(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateUser(ctx, accounts.NewUser{Name: "alice", Password: goodPassword, Admin: true, Groups: []string{"analysts"}}); err != nil {
		t.Fatal(err)
	}
	// No groups read the same before and after a restart, however given.
	if _, err := a.CreateUser(ctx, accounts.NewUser{Name: "bob", Password: goodPassword, Groups: []string{}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.CreateAPIToken(ctx, accounts.NewAPIToken{Name: "any group", Owner: "bob", WebAPIGroups: []string{}}); err != nil {
		t.Fatal(err)
	}
	tok, secret, err := a.CreateAPIToken(ctx, accounts.NewAPIToken{Name: "ci", Owner: "alice", WebAPIGroups: []string{"risk"}, ExpiresAt: t0.Add(48 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(5 * time.Second)
	if _, _, err := a.VerifyAPIToken(ctx, secret); err != nil {
		t.Fatal(err)
	}
	wantUsers, wantTokens := a.Users(), a.APITokens()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for name, mode := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "accounts.json"): 0o600} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s has mode %04o, want %04o", name, fi.Mode().Perm(), mode)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "accounts.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), goodPassword) || strings.Contains(string(raw), secret) {
		t.Error("the accounts file holds a password or a token secret")
	}

	cfg.Store = openAccountFile(t, dir)
	b, err := accounts.OpenCheap(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := b.Users(); !cmp.Equal(got, wantUsers) {
		t.Errorf("after reopening the users are %+v, want %+v", got, wantUsers)
	}
	if got := b.APITokens(); !cmp.Equal(got, wantTokens) {
		t.Errorf("after reopening the tokens are %+v, want %+v", got, wantTokens)
	}
	if got, _ := b.APIToken(tok.ID); !got.LastUsedAt.Equal(t0.Add(5 * time.Second)) {
		t.Errorf("after reopening the token was last used at %v, want %v", got.LastUsedAt, t0.Add(5*time.Second))
	}
	if _, err := b.Authenticate(ctx, "alice", goodPassword); err != nil {
		t.Errorf("alice's password does not work after reopening: %v", err)
	}
	if p, groups, err := b.VerifyAPIToken(ctx, secret); err != nil || p.Subject != "alice" || !cmp.Equal(groups, []string{"risk"}) {
		t.Errorf("the token verifies after reopening as %+v, %v, %v", p, groups, err)
	}
}

func TestFileStoreRefusesBadFiles(t *testing.T) {
	h := string(hash(t, goodPassword))
	good := `{"format":1,"seq":1,"users":[{"name":"alice","passwordHash":"` + h +
		`","admin":false,"groups":[],"credentialVersion":"cv","revision":1,"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}],"apiTokens":[]}`
	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		phrase        string
	}{
		{"not JSON", "{", 0o600, "unexpected end"},
		{"empty", "", 0o600, "unexpected end"},
		{"no format", `{"seq":1}`, 0o600, "no format version"},
		{"newer format", `{"format":2,"seq":1,"whatever":true}`, 0o600, "format version 2 is not supported"},
		{"unknown field", strings.Replace(good, `"seq":1`, `"seq":1,"extra":1`, 1), 0o600, "unknown field"},
		{"not a bcrypt hash", strings.Replace(good, h, "plain", 1), 0o600, "not bcrypt"},
		{"user twice", strings.Replace(good, `}],"apiTokens"`, `},`+good[strings.Index(good, `{"name"`):strings.Index(good, `],"apiTokens"`)]+`],"apiTokens"`, 1), 0o600, "appears twice"},
		{"readable by others", good, 0o644, "chmod 600"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "accounts.json")
			if err := os.WriteFile(path, []byte(tc.content), tc.mode); err != nil {
				t.Fatal(err)
			}
			s, err := accounts.OpenFileStore(dir)
			if err == nil {
				s.Close()
				t.Fatal("OpenFileStore accepted the file")
			}
			if !strings.Contains(err.Error(), tc.phrase) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s and say %q", err, path, tc.phrase)
			}
			if b, _ := os.ReadFile(path); string(b) != tc.content {
				t.Error("the refused file was changed")
			}
		})
	}
	t.Run("good", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "accounts.json"), []byte(good), 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := openAccountFile(t, dir).Load(context.Background())
		if err != nil || st.Seq != 1 || len(st.Users) != 1 {
			t.Errorf("a good file loads as %+v, %v", st, err)
		}
	})
}

func TestFileStoreLocksItsDirectory(t *testing.T) {
	dir := t.TempDir()
	s := openAccountFile(t, dir)
	if other, err := accounts.OpenFileStore(dir); !errors.Is(err, accounts.ErrStoreLocked) {
		if other != nil {
			other.Close()
		}
		t.Fatalf("a second open of a directory in use: %v, want ErrStoreLocked", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	openAccountFile(t, dir)
}

func TestFileStoreRemovesLeftovers(t *testing.T) {
	dir := t.TempDir()
	leftover := filepath.Join(dir, "accounts.json.tmp-123")
	if err := os.WriteFile(leftover, []byte("half a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	openAccountFile(t, dir)
	if _, err := os.Stat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a crashed writer's temporary file is still there: %v", err)
	}
}
