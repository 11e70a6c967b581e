package main

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

	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry/postgres"
	"github.com/scorehub/scorehub/tokens"
)

// The standalone server's tokens: issued and verified by this server alone.
const (
	tokenIssuer   = "scorehub"
	tokenAudience = "scorehub"
	adminName     = "admin"
	adminHashFile = "admin.bcrypt"
	keyFile       = "keys.json"
)

// auth is what the server needs to issue and check credentials.
type auth struct {
	issuer   *tokens.Issuer
	verifier *tokens.Verifier
	handler  *tokens.Service
	keys     *tokens.KeySet
	// accounts are the users kept in the data directory beside the
	// built-in admin and the users file, and their API tokens.
	accounts *tokens.Accounts
	store    tokens.AccountStore
	// credentials checks every kind of credential on protected web API
	// groups and the job routes.
	credentials *middleware.Credentials
	// stop ends the key rotation and the watch of the users files; Close
	// calls it.
	stop context.CancelFunc
}

// Close stops rotating the signing key, makes the API tokens' last use
// durable and closes the accounts file.
func (a *auth) Close() error {
	a.stop()
	return errors.Join(a.accounts.Close(), a.store.Close(), a.keys.Close())
}

// newAuth builds the token routes and the credential checks; observer and
// authObserver, when not nil, are told how each token request and each
// credential check ended. The signing keys, users and API tokens are kept
// in db, which other replicas share, or in the data directory when db is
// nil.
func newAuth(cfg config, db *postgres.DB, getenv func(string) string, stdout io.Writer, logger *slog.Logger,
	observer tokens.Observer, authObserver middleware.AuthObserver) (_ *auth, err error) {
	var keys *tokens.KeySet
	if db != nil {
		keys, err = tokens.OpenKeySet(context.Background(), db.Keys(), tokens.KeySetConfig{Retention: cfg.TokenValidity})
	} else {
		keys, err = tokens.LoadOrCreateKeySet(filepath.Join(cfg.DataDir, keyFile), tokens.KeySetConfig{Retention: cfg.TokenValidity})
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			keys.Close()
		}
	}()
	// At start, so that a key that aged while the server was down is
	// replaced before it signs anything more.
	if _, err := keys.RotateIfOlder(cfg.KeyRotation); err != nil {
		return nil, err
	}
	issuer, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: tokenIssuer, Audience: []string{tokenAudience}, Validity: cfg.TokenValidity})
	if err != nil {
		return nil, err
	}
	users, err := loadUsers(cfg, db != nil, getenv, stdout)
	if err != nil {
		return nil, err
	}
	users.logger = logger
	// Users and API tokens made over the management API are kept in the
	// data directory; the admin and the users file are read-only beside
	// them.
	var store tokens.AccountStore
	if db != nil {
		store = db.Accounts()
	} else if store, err = tokens.OpenFileAccountStore(cfg.DataDir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			store.Close()
		}
	}()
	accounts, err := tokens.NewAccounts(context.Background(), tokens.AccountsConfig{Store: store, ReadOnly: users, Logger: logger})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			accounts.Close()
		}
	}()
	if db != nil {
		if err := ensureSharedAdmin(context.Background(), accounts, getenv, stdout); err != nil {
			return nil, err
		}
	}
	// A token claiming a longer life than this server grants is refused,
	// whoever signed it; so is one whose user was removed or changed
	// password or groups since.
	verifier, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: tokenIssuer, Audience: tokenAudience,
		MaxValidity: cfg.TokenValidity, Credentials: accounts})
	if err != nil {
		return nil, err
	}
	var provider *tokens.Provider
	if cfg.OIDCIssuer != "" {
		provider, err = tokens.NewProvider(tokens.ProviderConfig{
			Issuer:            cfg.OIDCIssuer,
			Audience:          cfg.OIDCAudience,
			ClientIDs:         cfg.OIDCClients,
			TokenTypes:        cfg.OIDCTokenTypes,
			InsecureAllowHTTP: cfg.OIDCInsecureHTTP,
			Logger:            logger,
		})
		if err != nil {
			return nil, err
		}
	}
	h, err := tokens.NewService(tokens.ServiceConfig{Issuer: issuer, Users: accounts, Provider: provider,
		Renewer: verifier, TrustedProxies: cfg.TrustedProxies, Logger: logger, Observer: observer})
	if err != nil {
		return nil, err
	}
	// Basic credentials on scoring are checked with bcrypt once a minute
	// per user, not on every request.
	passwords, err := tokens.NewPasswordCache(tokens.PasswordCacheConfig{Users: accounts, Credentials: accounts})
	if err != nil {
		return nil, err
	}
	creds := middleware.CredentialsConfig{
		BearerConfig: middleware.BearerConfig{Verifier: verifier, Logger: logger, TrustedProxies: cfg.TrustedProxies},
		Passwords:    passwords,
		APITokens:    accounts,
		Observer:     authObserver,
	}
	if provider != nil {
		creds.Provider = provider
	}
	credentials, err := middleware.NewCredentials(creds)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	go rotateKeys(ctx, keys, cfg.KeyRotation, logger)
	go users.watch(ctx, usersCheck)
	return &auth{issuer: issuer, verifier: verifier, handler: h, keys: keys, accounts: accounts, store: store,
		credentials: credentials, stop: stop}, nil
}

// maxRotationCheck bounds the time between two checks of the signing
// key's age: a key is replaced at most this long after it reached the
// rotation age.
const maxRotationCheck = time.Hour

// rotateKeys replaces the signing key whenever it is period old, until ctx
// is done. The age comes from the key file, so restarts do not delay it.
// A failed rotation (a full disk) is logged and tried again at the next
// check; the current key keeps signing meanwhile.
func rotateKeys(ctx context.Context, keys *tokens.KeySet, period time.Duration, logger *slog.Logger) {
	t := time.NewTicker(min(period/10, maxRotationCheck))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		k, err := keys.RotateIfOlder(period)
		switch {
		case err != nil:
			logger.Error("token signing key rotation failed; the current key keeps signing", "cause", err.Error())
		case k != nil:
			logger.Info("token signing key rotated", "kid", k.ID(), "period", period)
		}
	}
}

// loadUsers returns the built-in admin and, when configured, the users of
// an htpasswd file. The name admin always means the built-in admin. With a
// shared store the admin is a stored user every replica shares (see
// ensureSharedAdmin): then there is no built-in admin, and an admin of the
// users file is ignored.
func loadUsers(cfg config, shared bool, getenv func(string) string, stdout io.Writer) (*users, error) {
	password, err := adminPassword(getenv)
	if err != nil {
		return nil, err
	}
	u := &users{usersFile: cfg.UsersFile, logger: slog.Default()}
	set := &userSet{}
	if !shared {
		// The stamp is taken before the file is read, so that a change in
		// between is seen at the first check.
		adminFile := filepath.Join(cfg.DataDir, adminHashFile)
		adminStamp := stat(adminFile)
		hash, err := adminHash(cfg.DataDir, password, stdout)
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
		if password == "" {
			u.adminFile, set.adminStamp = adminFile, adminStamp
		}
	}
	if u.usersFile != "" {
		set.usersStamp = stat(u.usersFile)
		if set.others, err = tokens.LoadHTPasswd(u.usersFile); err != nil {
			return nil, err
		}
	}
	u.current.Store(set)
	return u, nil
}

// ensureSharedAdmin makes the admin, with a shared store, a stored user
// that every replica shares, so that a token one replica issues for it is
// good on all: a built-in admin would have a password hash, and so a
// credential version, of each replica's own. The password given at start
// (SCOREHUB_ADMIN_PASSWORD or _FILE) becomes the admin's when it is not
// already; without one, the stored admin stays, and a store without one
// gets one with a random password, printed once. Replicas starting at once
// may race to create it: the loser checks the password as if it had found
// the admin stored.
func ensureSharedAdmin(ctx context.Context, accounts *tokens.Accounts, getenv func(string) string, stdout io.Writer) error {
	password, err := adminPassword(getenv)
	if err != nil {
		return err
	}
	for range 2 {
		if _, ok := accounts.User(adminName); ok {
			if password == "" || accounts.CheckPassword(ctx, adminName, password) == nil {
				return nil
			}
			_, err := accounts.UpdateUser(ctx, adminName, 0, tokens.UserUpdate{Password: &password})
			if err != nil {
				return fmt.Errorf("set the admin's password in the store: %w", err)
			}
			return nil
		}
		given := password
		if given == "" {
			secret := make([]byte, 18)
			if _, err := rand.Read(secret); err != nil {
				return err
			}
			given = base64.RawURLEncoding.EncodeToString(secret)
		}
		_, err := accounts.CreateUser(ctx, tokens.NewUser{Name: adminName, Password: given, Admin: true, Groups: []string{tokens.AdminGroup}})
		switch {
		case err == nil:
			if password == "" {
				fmt.Fprintf(stdout, "admin password (shown once; only its bcrypt hash is kept in the store): %s\n", given)
			}
			return nil
		case !errors.Is(err, tokens.ErrExists):
			return fmt.Errorf("store the admin: %w", err)
		}
	}
	return errors.New("store the admin: it kept changing")
}

func newAdmin(hash []byte) (*tokens.StaticUsers, error) {
	return tokens.NewStaticUsers(tokens.User{Name: adminName, PasswordHash: hash, Admin: true, Groups: []string{tokens.AdminGroup}})
}

// adminPassword returns the admin password given by SCOREHUB_ADMIN_PASSWORD
// or, better, by the file SCOREHUB_ADMIN_PASSWORD_FILE names (its content
// without the trailing line break): a process's environment is readable in
// /proc/<pid>/environ, a file can be readable by the server alone. Setting
// both is refused rather than letting one silently win, and so is an empty
// file, which would otherwise fall back to the stored or a random password
// unnoticed. "" means neither is set.
func adminPassword(getenv func(string) string) (string, error) {
	password, file := getenv("SCOREHUB_ADMIN_PASSWORD"), getenv("SCOREHUB_ADMIN_PASSWORD_FILE")
	if file == "" {
		return password, nil
	}
	if password != "" {
		return "", errors.New("set SCOREHUB_ADMIN_PASSWORD or SCOREHUB_ADMIN_PASSWORD_FILE, not both")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("SCOREHUB_ADMIN_PASSWORD_FILE: %w", err)
	}
	password = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if password == "" {
		return "", fmt.Errorf("SCOREHUB_ADMIN_PASSWORD_FILE: %s is empty", file)
	}
	return password, nil
}

// adminHash returns the bcrypt hash of the admin password: the one given,
// else the one stored in dir, else a new random one, printed once and stored
// only as its hash.
func adminHash(dir, password string, stdout io.Writer) ([]byte, error) {
	if password != "" {
		return tokens.HashPassword(password, 0)
	}
	path := filepath.Join(dir, adminHashFile)
	stored, err := os.ReadFile(path)
	if err == nil {
		return []byte(strings.TrimSpace(string(stored))), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read the admin password hash: %w", err)
	}
	secret := make([]byte, 18)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	password = base64.RawURLEncoding.EncodeToString(secret)
	hash, err := tokens.HashPassword(password, 0)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store the admin password hash: %w", err)
	}
	_, werr := f.Write(append(hash, '\n'))
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("store the admin password hash: %w", err)
	}
	fmt.Fprintf(stdout, "admin password (shown once; only its bcrypt hash is kept in %s): %s\n", path, password)
	return hash, nil
}

// usersCheck is how often the users file and the admin's stored hash are
// looked at for changes: a user removed, or a password changed, loses
// their tokens at most this long (plus the time to read the file) later.
const usersCheck = 250 * time.Millisecond

// users are the server's users: the built-in admin and, when configured,
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
	admin, others          *tokens.StaticUsers
	adminStamp, usersStamp fs.FileInfo
}

var _ tokens.ReadOnlyUsers = (*users)(nil)

// pick returns the users that name belongs to, nil for none.
func (s *userSet) pick(name string) *tokens.StaticUsers {
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
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		u.reload()
	}
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

func readAdmin(path string, fi fs.FileInfo) (*tokens.StaticUsers, error) {
	if fi == nil {
		return nil, errors.New("the file is gone")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return newAdmin([]byte(strings.TrimSpace(string(b))))
}

func readUsers(path string, fi fs.FileInfo) (*tokens.StaticUsers, error) {
	if fi == nil {
		return nil, errors.New("the file is gone")
	}
	return tokens.LoadHTPasswd(path)
}
