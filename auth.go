package scorehub

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// The service's own tokens: issued and verified by the service alone.
const (
	tokenIssuer   = "scorehub"
	tokenAudience = "scorehub"
)

// usersCheck is how often the users file and the admin's stored hash are
// looked at for changes: a user removed, or a password changed, loses
// their tokens at most this long (plus the time to read the file) later.
const usersCheck = 250 * time.Millisecond

// maxRotationCheck bounds the time between two checks of the signing
// key's age: a key is replaced at most this long after it reached the
// rotation age.
const maxRotationCheck = time.Hour

// auth is what the service needs to issue and check credentials.
type auth struct {
	keys     *tokens.KeySet
	issuer   *tokens.Issuer
	verifier *tokens.Verifier
	service  *tokens.Service
	// accounts are the users made through the API beside the read-only
	// ones (the built-in admin and the users file), and their API tokens.
	accounts *accounts.Book
	// credentials checks every kind of credential on protected web API
	// groups and the job routes.
	credentials *middleware.Credentials
	// stop ends the key rotation and the watch of the users files.
	stop context.CancelFunc
	bg   sync.WaitGroup
}

// authObservers are told how each token request and each credential check
// ended; nil fields for none.
type authObservers struct {
	tokens tokens.Observer
	checks middleware.AuthObserver
}

// newAuth builds the token routes and the credential checks over the keys
// and accounts of st.
func newAuth(ctx context.Context, cfg Config, kind storeKind, st *stores, obs authObservers) (_ *auth, err error) {
	keys, err := st.openKeys(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			keys.Close()
		}
	}()
	// At start, so that a key that aged while the service was down is
	// replaced before it signs anything more.
	if _, err := keys.RotateIfOlder(cfg.KeyRotation); err != nil {
		return nil, err
	}
	issuer, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: tokenIssuer, Audience: []string{tokenAudience},
		Validity: cfg.TokenValidity, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	var readOnly accounts.ReadOnlyUsers
	var watched *users
	if cfg.Users != nil {
		readOnly = cfg.Users
	} else {
		if watched, err = loadUsers(cfg, kind); err != nil {
			return nil, err
		}
		readOnly = watched
	}
	book, err := accounts.Open(ctx, accounts.Config{Store: st.accounts, ReadOnly: readOnly, Logger: cfg.Logger, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			book.Close()
		}
	}()
	if kind == inPostgres && cfg.Users == nil {
		if err := ensureSharedAdmin(ctx, book, cfg.AdminPassword, cfg.Console); err != nil {
			return nil, err
		}
	}
	// A token claiming a longer life than this service grants is refused,
	// whoever signed it; so is one whose user was removed or changed
	// password or groups since.
	verifier, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: tokenIssuer, Audience: tokenAudience,
		MaxValidity: cfg.TokenValidity, Credentials: book, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	var provider *tokens.Provider
	if o := cfg.OIDC; o.Issuer != "" {
		provider, err = tokens.NewProvider(tokens.ProviderConfig{
			Issuer:            o.Issuer,
			Audience:          o.Audience,
			ClientIDs:         o.ClientIDs,
			TokenTypes:        o.TokenTypes,
			InsecureAllowHTTP: o.InsecureAllowHTTP,
			Logger:            cfg.Logger,
			Now:               cfg.Now,
		})
		if err != nil {
			return nil, err
		}
	}
	service, err := tokens.NewService(tokens.ServiceConfig{Issuer: issuer, Users: book, Provider: provider,
		Renewer: verifier, TrustedProxies: cfg.TrustedProxies, Logger: cfg.Logger, Observer: obs.tokens, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	// Basic credentials on scoring are checked with bcrypt once a minute
	// per user, not on every request.
	passwords, err := accounts.NewPasswordCache(accounts.PasswordCacheConfig{Users: book, Credentials: book, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	creds := middleware.CredentialsConfig{
		BearerConfig: middleware.BearerConfig{Verifier: verifier, Logger: cfg.Logger, TrustedProxies: cfg.TrustedProxies},
		Passwords:    passwords,
		APITokens:    book,
		Observer:     obs.checks,
		Now:          cfg.Now,
	}
	if provider != nil {
		creds.Provider = provider
	}
	credentials, err := middleware.NewCredentials(creds)
	if err != nil {
		return nil, err
	}
	a := &auth{keys: keys, issuer: issuer, verifier: verifier, service: service, accounts: book,
		credentials: credentials}
	bg, stop := context.WithCancel(context.Background())
	a.stop = stop
	a.bg.Go(func() { rotateKeys(bg, keys, cfg.KeyRotation, cfg.Logger) })
	if watched != nil {
		a.bg.Go(func() { watched.watch(bg, usersCheck) })
	}
	return a, nil
}

// Close stops rotating the signing key and watching the users files, and
// makes the API tokens' last use durable.
func (a *auth) Close() error {
	a.stop()
	a.bg.Wait()
	return errors.Join(a.accounts.Close(), a.keys.Close())
}

// rotateKeys replaces the signing key whenever it is period old, until ctx
// is done. The age comes from the key store, so restarts do not delay it.
// A failed rotation (a full disk) is logged and tried again at the next
// check; the current key keeps signing meanwhile.
func rotateKeys(ctx context.Context, keys *tokens.KeySet, period time.Duration, logger *slog.Logger) {
	every(ctx, min(period/10, maxRotationCheck), func() {
		k, err := keys.RotateIfOlder(period)
		switch {
		case err != nil:
			logger.Error("token signing key rotation failed; the current key keeps signing", "cause", err.Error())
		case k != nil:
			logger.Info("token signing key rotated", "kid", k.ID(), "period", period)
		}
	})
}

// every calls fn every interval until ctx is done.
func every(ctx context.Context, interval time.Duration, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fn()
	}
}
