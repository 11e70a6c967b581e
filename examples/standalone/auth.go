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
	"strings"
	"time"

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

// auth is what the server needs to issue and check tokens.
type auth struct {
	issuer   *tokens.Issuer
	verifier *tokens.Verifier
	handler  *tokens.Service
	keys     *tokens.KeySet
	// stop ends the key rotation; Close calls it.
	stop context.CancelFunc
}

// Close stops rotating the signing key.
func (a *auth) Close() { a.stop() }

// newAuth builds the token routes; observer, when not nil, is told how
// each token request ended.
func newAuth(cfg config, getenv func(string) string, stdout io.Writer, logger *slog.Logger, observer tokens.Observer) (*auth, error) {
	keys, err := tokens.LoadOrCreateKeySet(filepath.Join(cfg.DataDir, keyFile), tokens.KeySetConfig{Retention: cfg.TokenValidity})
	if err != nil {
		return nil, err
	}
	// At start, so that a key that aged while the server was down is
	// replaced before it signs anything more.
	if _, err := keys.RotateIfOlder(cfg.KeyRotation); err != nil {
		return nil, err
	}
	issuer, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: tokenIssuer, Audience: []string{tokenAudience}, Validity: cfg.TokenValidity})
	if err != nil {
		return nil, err
	}
	// A token claiming a longer life than this server grants is refused,
	// whoever signed it.
	verifier, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: tokenIssuer, Audience: tokenAudience, MaxValidity: cfg.TokenValidity})
	if err != nil {
		return nil, err
	}
	users, err := loadUsers(cfg, getenv, stdout)
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
	h, err := tokens.NewService(tokens.ServiceConfig{Issuer: issuer, Users: users, Provider: provider,
		TrustedProxies: cfg.TrustedProxies, Logger: logger, Observer: observer})
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	go rotateKeys(ctx, keys, cfg.KeyRotation, logger)
	return &auth{issuer: issuer, verifier: verifier, handler: h, keys: keys, stop: stop}, nil
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
// an htpasswd file. The name admin always means the built-in admin.
func loadUsers(cfg config, getenv func(string) string, stdout io.Writer) (tokens.Authenticator, error) {
	password, err := adminPassword(getenv)
	if err != nil {
		return nil, err
	}
	hash, err := adminHash(cfg.DataDir, password, stdout)
	if err != nil {
		return nil, err
	}
	admin, err := tokens.NewStaticUsers(tokens.User{Name: adminName, PasswordHash: hash, Admin: true, Groups: []string{tokens.AdminGroup}})
	if err != nil {
		return nil, err
	}
	u := byName{admin: admin}
	if cfg.UsersFile != "" {
		if u.others, err = tokens.LoadHTPasswd(cfg.UsersFile); err != nil {
			return nil, err
		}
	}
	return u, nil
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

// byName sends the admin's logins to the built-in admin and the rest to
// the users file, if there is one.
type byName struct {
	admin  tokens.Authenticator
	others tokens.Authenticator
}

func (b byName) Authenticate(ctx context.Context, name, password string) (tokens.Principal, error) {
	if name == adminName || b.others == nil {
		return b.admin.Authenticate(ctx, name, password)
	}
	return b.others.Authenticate(ctx, name, password)
}
