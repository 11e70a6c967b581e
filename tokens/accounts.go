package tokens

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// APITokenPrefix starts every API token, so that a leaked token is found by
// a search of logs, repositories or pastes.
const APITokenPrefix = "scorehub_"

// DefaultMinPasswordLength is the shortest password [Accounts] accepts when
// AccountsConfig.MinPasswordLength is zero.
const DefaultMinPasswordLength = 12

// Sources of an [Account].
const (
	// AccountSourceAPI is a user kept by [Accounts] and managed through it.
	AccountSourceAPI = "api"
	// AccountSourceFile is a user of AccountsConfig.ReadOnly, managed
	// where it comes from (the users file), never through Accounts.
	AccountSourceFile = "file"
)

// Account is a user as [Accounts] shows it: never the password or its hash.
type Account struct {
	Name   string
	Admin  bool
	Groups []string
	// Source is AccountSourceAPI for a stored user, AccountSourceFile for
	// a user of AccountsConfig.ReadOnly, which cannot be changed.
	Source string
	// Revision is 1 when the user is created and grows by one with every
	// change; 0 for read-only users.
	Revision uint64
	// CreatedAt and UpdatedAt are zero for read-only users.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// NewUser is a user to create with [Accounts.CreateUser].
type NewUser struct {
	Name     string
	Password string
	Admin    bool
	Groups   []string
}

// UserUpdate is a change of a user for [Accounts.UpdateUser]; a nil field
// is left as it is.
type UserUpdate struct {
	Password *string
	Admin    *bool
	Groups   *[]string
}

// APIToken is an API token as [Accounts] shows it: never the secret.
type APIToken struct {
	// ID names the token in URLs: 16 random lower-case base32 characters.
	ID string
	// Name is the owner's label for the token: 1 to 128 characters, no
	// control characters.
	Name  string
	Owner string
	// WebAPIGroups, when not empty, are the only web API groups the token
	// may call.
	WebAPIGroups []string
	CreatedAt    time.Time
	// ExpiresAt is zero for a token that never expires.
	ExpiresAt time.Time
	// LastUsedAt is zero for a token never used.
	LastUsedAt time.Time
}

// NewAPIToken is an API token to create with [Accounts.CreateAPIToken].
type NewAPIToken struct {
	Name  string
	Owner string
	// ExpiresAt, when not zero, must be in the future.
	ExpiresAt    time.Time
	WebAPIGroups []string
}

// ReadOnlyUsers are users managed elsewhere (an htpasswd file, a built-in
// admin) that [Accounts] lists and authenticates but never changes.
// [StaticUsers] is one. Implementations must be safe for concurrent use.
type ReadOnlyUsers interface {
	Authenticator
	CredentialSource
	// Principals returns the current users, sorted by name.
	Principals() []Principal
}

// AccountsConfig configures [NewAccounts].
type AccountsConfig struct {
	// Store keeps the users and API tokens. Required. Accounts does not
	// close it: the host that opened it does, after Accounts.Close.
	Store AccountStore
	// ReadOnly, when set, are users listed and authenticated beside the
	// stored ones. Their names shadow stored users and cannot be created.
	ReadOnly ReadOnlyUsers
	// BcryptCost is the cost of new password hashes: 10 to
	// [MaxBcryptCost]. Zero means bcrypt's default, 10.
	BcryptCost int
	// MinPasswordLength is the shortest password accepted, in bytes. Zero
	// means [DefaultMinPasswordLength]. Passwords longer than 72 bytes are
	// always refused: bcrypt would ignore the rest.
	MinPasswordLength int
	// MaxAPITokensPerUser bounds the API tokens of one owner. Zero means
	// 100.
	MaxAPITokensPerUser int
	// LastUsedInterval is how often changed last-used times of API tokens
	// are made durable. Zero means one minute.
	LastUsedInterval time.Duration
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Logger receives failures of background writes. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Accounts keeps users and API tokens durably in an [AccountStore], beside
// optional read-only users, and checks their passwords and tokens. Reads
// (Users, Authenticate, VerifyAPIToken, CredentialVersion) answer from an
// immutable snapshot and never wait for a write; writes are serialised and
// durable before they return. Accounts is an [Authenticator] and a
// [CredentialSource]. It is safe for concurrent use.
type Accounts struct{}

var errAccountsUnbuilt = errors.New("tokens: Accounts is not built yet")

// NewAccounts returns Accounts over cfg.Store, holding what the store
// holds. It fails on a config out of range. Close it to stop its
// background writer.
func NewAccounts(ctx context.Context, cfg AccountsConfig) (*Accounts, error) {
	return nil, errAccountsUnbuilt
}

// Close makes pending last-used times durable and stops the background
// writer. It does not close the store. Later writes fail with
// [ErrAccountsClosed].
func (a *Accounts) Close() error { return nil }

// Users returns the stored and the read-only users, sorted by name.
func (a *Accounts) Users() []Account { return nil }

// User returns the user name and whether there is one.
func (a *Accounts) User(name string) (Account, bool) { return Account{}, false }

// CreateUser stores a new user. Errors: [ErrInvalid] pointing at "/name",
// "/password" or "/groups/<i>"; [ErrExists] for a name taken by a stored
// or a read-only user.
func (a *Accounts) CreateUser(ctx context.Context, u NewUser) (Account, error) {
	return Account{}, errAccountsUnbuilt
}

// UpdateUser changes the fields of u that are set. ifRevision 0 changes
// the user whatever its revision; otherwise it must be the current one.
// A change of password, groups or admin flag gives the user a new
// credential version, which revokes the user's tokens. Errors:
// [ErrNotFound], [ErrReadOnly], [ErrRevision], [ErrInvalid].
func (a *Accounts) UpdateUser(ctx context.Context, name string, ifRevision uint64, u UserUpdate) (Account, error) {
	return Account{}, errAccountsUnbuilt
}

// DeleteUser removes the user name and the user's API tokens. ifRevision
// is as for UpdateUser. Errors: [ErrNotFound], [ErrReadOnly],
// [ErrRevision].
func (a *Accounts) DeleteUser(ctx context.Context, name string, ifRevision uint64) error {
	return errAccountsUnbuilt
}

// CheckPassword returns nil if password is the user name's, and an error
// matching [ErrBadCredentials] otherwise, for a user who changes their own
// password.
func (a *Accounts) CheckPassword(ctx context.Context, name, password string) error {
	return errAccountsUnbuilt
}

// Authenticate implements [Authenticator] over the read-only users, then
// the stored ones. An unknown name costs a bcrypt comparison as a wrong
// password does. The principal carries the user's credential version.
func (a *Accounts) Authenticate(ctx context.Context, name, password string) (Principal, error) {
	return Principal{}, errAccountsUnbuilt
}

// CredentialVersion implements [CredentialSource] over the read-only
// users, then the stored ones.
func (a *Accounts) CredentialVersion(ctx context.Context, subject string) (string, bool, error) {
	return "", false, errAccountsUnbuilt
}

// CreateAPIToken stores a new API token and returns it with its secret,
// which is never shown again: only its SHA-256 is kept. Errors:
// [ErrInvalid] pointing at "/name", "/expiresAt" or "/webApiGroups/<i>";
// [ErrNotFound] of type "invalid_reference" pointing at "/owner";
// [ErrTooManyAPITokens].
func (a *Accounts) CreateAPIToken(ctx context.Context, t NewAPIToken) (APIToken, string, error) {
	return APIToken{}, "", errAccountsUnbuilt
}

// APITokens returns every API token, sorted by owner, then creation time,
// then ID.
func (a *Accounts) APITokens() []APIToken { return nil }

// APIToken returns the API token id and whether there is one.
func (a *Accounts) APIToken(id string) (APIToken, bool) { return APIToken{}, false }

// DeleteAPIToken removes the API token id; the next VerifyAPIToken of it
// fails. Errors: [ErrNotFound].
func (a *Accounts) DeleteAPIToken(ctx context.Context, id string) error {
	return errAccountsUnbuilt
}

// VerifyAPIToken returns the principal of the owner of token as the owner
// is now, and the web API groups the token is restricted to (none: no
// restriction). A token that is malformed or unknown fails with an error
// matching [ErrBadCredentials]; one past its expiry with [ErrExpired]; one
// whose owner was removed or changed password, groups or admin flag since
// it was made with [ErrRevoked]. It answers from memory and records the
// use, made durable later.
func (a *Accounts) VerifyAPIToken(ctx context.Context, token string) (p Principal, webAPIGroups []string, err error) {
	return Principal{}, nil, errAccountsUnbuilt
}
