package scorehub

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// The built-in admin, and where the data directory keeps its password hash.
const (
	adminName     = "admin"
	adminHashFile = "admin.bcrypt"
)

// loadUsers returns the built-in admin and, when configured, the users of
// an htpasswd file. The name admin always means the built-in admin. With a
// shared store the admin is a stored user every replica shares (see
// ensureSharedAdmin): then there is no built-in admin, and an admin of the
// users file is ignored. In memory, the admin is the one of
// Config.AdminPassword, or none.
func loadUsers(cfg Config, kind storeKind) (*users, error) {
	u := &users{usersFile: cfg.UsersFile, logger: cfg.Logger}
	set := &userSet{}
	switch {
	case kind == inFiles:
		// The stamp is taken before the file is read, so that a change in
		// between is seen at the first check.
		adminFile := filepath.Join(cfg.DataDir, adminHashFile)
		adminStamp := stat(adminFile)
		hash, err := adminHash(cfg.DataDir, cfg.AdminPassword, cfg.Console)
		if err != nil {
			return nil, err
		}
		if adminStamp == nil {
			adminStamp = stat(adminFile) // made just now
		}
		if set.admin, err = newAdmin(hash); err != nil {
			return nil, err
		}
		// A password given at start is the admin's until the next start;
		// the stored hash is the admin's only when no password is given.
		if cfg.AdminPassword == "" {
			u.adminFile, set.adminStamp = adminFile, adminStamp
		}
	case kind != inPostgres && cfg.AdminPassword != "":
		hash, err := accounts.HashPassword(cfg.AdminPassword, 0)
		if err != nil {
			return nil, err
		}
		if set.admin, err = newAdmin(hash); err != nil {
			return nil, err
		}
	}
	if u.usersFile != "" {
		set.usersStamp = stat(u.usersFile)
		var err error
		if set.others, err = accounts.LoadHTPasswd(u.usersFile); err != nil {
			return nil, err
		}
	}
	u.current.Store(set)
	return u, nil
}

// ensureSharedAdmin makes the admin, with a shared store, a stored user
// that every replica shares, so that a token one replica issues for it is
// good on all: a built-in admin would have a password hash, and so a
// credential version, of each replica's own. The password given
// (Config.AdminPassword) becomes the admin's when it is not already;
// without one, the stored admin stays, and a store without one gets one
// with a random password, written once to console. Replicas starting at
// once may race to create it: the loser checks the password as if it had
// found the admin stored. A stored user whose name reads as admin's
// (Admin, ADMIN) keeps the admin from being made: the error names it.
func ensureSharedAdmin(ctx context.Context, book *accounts.Book, password string, console io.Writer) error {
	var refused error
	for range 2 {
		if _, ok := book.User(adminName); ok {
			if password == "" {
				if console != nil {
					fmt.Fprintf(console, "admin password: the one shown when the store was first used (only its bcrypt hash is kept there); "+
						"to replace it, start with a new admin password, or change it over the API (PATCH /api/v1/users/admin)\n")
				}
				return nil
			}
			if book.CheckPassword(ctx, adminName, password) == nil {
				return nil
			}
			_, err := book.UpdateUser(ctx, adminName, 0, accounts.UserUpdate{Password: &password})
			if err != nil {
				return fmt.Errorf("scorehub: set the admin's password in the store: %w", err)
			}
			return nil
		}
		given := password
		if given == "" {
			if console == nil {
				return errors.New("scorehub: the store has no admin: set Config.AdminPassword, or Config.Console for a random one")
			}
			var err error
			if given, err = randomPassword(); err != nil {
				return err
			}
		}
		_, err := book.CreateUser(ctx, accounts.NewUser{Name: adminName, Password: given, Admin: true, Groups: []string{accounts.AdminGroup}})
		switch {
		case err == nil:
			if password == "" {
				fmt.Fprintf(console, "admin password (shown once; only its bcrypt hash is kept in the store): %s\n", given)
			}
			return nil
		case !errors.Is(err, accounts.ErrExists):
			return fmt.Errorf("scorehub: store the admin: %w", err)
		}
		refused = err
	}
	// Twice taken and twice not there: another replica is creating and
	// removing it, or another user's name reads as admin.
	return fmt.Errorf("scorehub: store the admin: %w", refused)
}

func newAdmin(hash []byte) (*accounts.StaticUsers, error) {
	return accounts.NewStaticUsers(accounts.User{Name: adminName, PasswordHash: hash, Admin: true, Groups: []string{accounts.AdminGroup}})
}

// randomPassword returns 144 random bits as text.
func randomPassword() (string, error) {
	secret := make([]byte, 18)
	if _, err := rand.Read(secret); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(secret), nil
}

// adminHash returns the bcrypt hash of the admin password: the one given,
// else the one stored in dir, else a new random one, written once to
// console and stored only as its hash.
func adminHash(dir, password string, console io.Writer) ([]byte, error) {
	if password != "" {
		return accounts.HashPassword(password, 0)
	}
	path := filepath.Join(dir, adminHashFile)
	stored, err := os.ReadFile(path)
	if err == nil {
		if console != nil {
			fmt.Fprintf(console, "admin password: the one shown when %s was made (only its bcrypt hash is kept there); "+
				"to replace it, start with a new admin password, or remove that file to have a new one made and shown once\n", path)
		}
		return []byte(strings.TrimSpace(string(stored))), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("scorehub: read the admin password hash: %w", err)
	}
	if console == nil {
		return nil, fmt.Errorf("scorehub: %s holds no admin password hash: set Config.AdminPassword, or Config.Console for a random one", dir)
	}
	if password, err = randomPassword(); err != nil {
		return nil, err
	}
	hash, err := accounts.HashPassword(password, 0)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("scorehub: store the admin password hash: %w", err)
	}
	_, werr := f.Write(append(hash, '\n'))
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("scorehub: store the admin password hash: %w", err)
	}
	fmt.Fprintf(console, "admin password (shown once; only its bcrypt hash is kept in %s): %s\n", path, password)
	return hash, nil
}

// users are the service's users: the built-in admin and, when configured,
// the users of an htpasswd file, each read again when its file changes
// ([users.watch]). Logins for the name admin go to the built-in admin, the
// rest to the users file. It is the verifier's credential source, so a
// token of a user since removed, or issued before the password changed, is
// refused. It is safe for concurrent use: a lookup reads the current set,
// which a reload replaces whole.
type users struct {
	current atomic.Pointer[userSet]
	// adminFile is the admin's stored hash, "" when the password was
	// given at start; usersFile is the htpasswd file, "" when none.
	adminFile, usersFile string
	// logger is told of reloads; set before watch starts.
	logger *slog.Logger
}

// userSet is one reading of the users' files. Its stamps are the files'
// state when read, nil for a file that was absent. admin is nil with a
// shared store, whose admin is a stored user; others is nil without a
// users file.
type userSet struct {
	admin, others          *accounts.StaticUsers
	adminStamp, usersStamp fs.FileInfo
}

var _ accounts.ReadOnlyUsers = (*users)(nil)

// pick returns the users that name belongs to, nil for none.
func (s *userSet) pick(name string) *accounts.StaticUsers {
	if name == adminName || s.others == nil {
		return s.admin
	}
	return s.others
}

// Authenticate checks name and password against the current users.
func (u *users) Authenticate(ctx context.Context, name, password string) (tokens.Principal, error) {
	from := u.current.Load().pick(name)
	if from == nil {
		return tokens.Principal{}, tokens.ErrBadCredentials
	}
	return from.Authenticate(ctx, name, password)
}

// CredentialVersion returns the current credential version of the user
// subject, and false for a user who is not (or no longer) known.
func (u *users) CredentialVersion(ctx context.Context, subject string) (string, bool, error) {
	from := u.current.Load().pick(subject)
	if from == nil {
		return "", false, nil
	}
	return from.CredentialVersion(ctx, subject)
}

// Principals returns the current users, sorted by name: the admin, and the
// users file's but for one it may name admin.
func (u *users) Principals() []tokens.Principal {
	s := u.current.Load()
	var out []tokens.Principal
	if s.admin != nil {
		out = s.admin.Principals()
	}
	if s.others != nil {
		for _, p := range s.others.Principals() {
			if p.Subject != adminName {
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, func(a, b tokens.Principal) int { return strings.Compare(a.Subject, b.Subject) })
	return out
}

// watch reads the users file and the admin's stored hash again whenever
// one of them changes (size, modification time, or a new file in its
// place), every interval until ctx is done.
func (u *users) watch(ctx context.Context, interval time.Duration) {
	if u.adminFile == "" && u.usersFile == "" {
		return
	}
	every(ctx, interval, u.reload)
}

// reload replaces the current set with one read from the files that
// changed. A file that cannot be read or is invalid leaves its users as
// they were, is logged, and is tried again when it changes again: an
// editor caught halfway through a save must not lock everyone out.
func (u *users) reload() {
	old := u.current.Load()
	next := *old
	if u.adminFile != "" {
		if fi := stat(u.adminFile); changed(old.adminStamp, fi) {
			next.adminStamp = fi
			if admin, err := readAdmin(u.adminFile, fi); err != nil {
				u.logger.Error("the admin's stored password hash could not be read again; the admin keeps the previous password", "path", u.adminFile, "cause", err.Error())
			} else {
				next.admin = admin
				u.logger.Info("the admin's password hash changed; tokens issued for the previous password no longer work", "path", u.adminFile)
			}
		}
	}
	if u.usersFile != "" {
		if fi := stat(u.usersFile); changed(old.usersStamp, fi) {
			next.usersStamp = fi
			others, err := readUsers(u.usersFile, fi)
			if err != nil {
				u.logger.Error("the users file could not be read again; its previous users stay", "path", u.usersFile, "cause", err.Error())
			} else {
				next.others = others
				u.logger.Info("the users file changed; tokens of removed users and of changed passwords no longer work", "path", u.usersFile)
			}
		}
	}
	if next != *old {
		u.current.Store(&next)
	}
}

// stat returns path's file info, nil if it cannot be had.
func stat(path string) fs.FileInfo {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return fi
}

// changed reports whether a file now is another state than before.
func changed(before, now fs.FileInfo) bool {
	switch {
	case before == nil || now == nil:
		return before != now
	default:
		return !os.SameFile(before, now) || before.Size() != now.Size() || !before.ModTime().Equal(now.ModTime())
	}
}

func readAdmin(path string, fi fs.FileInfo) (*accounts.StaticUsers, error) {
	if fi == nil {
		return nil, errors.New("the file is gone")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return newAdmin([]byte(strings.TrimSpace(string(b))))
}

func readUsers(path string, fi fs.FileInfo) (*accounts.StaticUsers, error) {
	if fi == nil {
		return nil, errors.New("the file is gone")
	}
	return accounts.LoadHTPasswd(path)
}
