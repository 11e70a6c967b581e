package accounts

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/tokens"
)

// APITokenPrefix starts every API token, so that a leaked token is found by
// a search of logs, repositories or pastes.
const APITokenPrefix = "scorehub_"

// DefaultMinPasswordLength is the shortest password [Book] accepts when
// Config.MinPasswordLength is zero.
const DefaultMinPasswordLength = 12

// Sources of an [Account].
const (
	// SourceAPI is a user kept by [Book] and managed through it.
	SourceAPI = "api"
	// SourceFile is a user of Config.ReadOnly, managed
	// where it comes from (the users file), never through the Book.
	SourceFile = "file"
)

// Account is a user as [Book] shows it: never the password or its hash.
type Account struct {
	Name   string
	Admin  bool
	Groups []string
	// Source is SourceAPI for a stored user, SourceFile for
	// a user of Config.ReadOnly, which cannot be changed.
	Source string
	// Revision is 1 when the user is created and grows by one with every
	// change; 0 for read-only users.
	Revision uint64
	// CreatedAt and UpdatedAt are zero for read-only users.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// NewUser is a user to create with [Book.CreateUser].
type NewUser struct {
	Name     string
	Password string
	Admin    bool
	Groups   []string
}

// UserUpdate is a change of a user for [Book.UpdateUser]; a nil field
// is left as it is.
type UserUpdate struct {
	Password *string
	Admin    *bool
	Groups   *[]string
}

// APIToken is an API token as [Book] shows it: never the secret.
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

// NewAPIToken is an API token to create with [Book.CreateAPIToken].
type NewAPIToken struct {
	Name  string
	Owner string
	// ExpiresAt, when not zero, must be in the future.
	ExpiresAt    time.Time
	WebAPIGroups []string
}

// ReadOnlyUsers are users managed elsewhere (an htpasswd file, a built-in
// admin) that [Book] lists and authenticates but never changes.
// [StaticUsers] is one. Implementations must be safe for concurrent use.
type ReadOnlyUsers interface {
	tokens.Authenticator
	tokens.CredentialSource
	// Principals returns the current users, sorted by name. The Book
	// calls it to list users and to verify an API token of a read-only
	// user, so it should answer from memory.
	Principals() []tokens.Principal
}

// Config configures [Open].
type Config struct {
	// Store keeps the users and API tokens. Required. The Book does not
	// close it: the host that opened it does, after Book.Close.
	Store Store
	// ReadOnly, when set, are users listed and authenticated beside the
	// stored ones. Their names cannot be created, and a stored user of the
	// same name (the file gained it later) is hidden, unchangeable, until
	// the file drops it again.
	ReadOnly ReadOnlyUsers
	// BcryptCost is the cost of new password hashes: 10 to
	// [MaxBcryptCost]. Zero means bcrypt's default, 10.
	BcryptCost int
	// MinPasswordLength is the shortest password accepted, in characters.
	// Zero means [DefaultMinPasswordLength]. Passwords longer than 72 bytes
	// are always refused: bcrypt would ignore the rest. Whatever the
	// length, common, repetitive and sequential passwords are refused too
	// ([CheckNewPassword]).
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

// Book keeps users and API tokens durably in a [Store], beside
// optional read-only users, and checks their passwords and tokens. Reads
// (Users, Authenticate, VerifyAPIToken, CredentialVersion) answer from an
// immutable snapshot and never wait for a write; writes are serialised, and
// durable before they return, except last-used times of API tokens, which a
// background writer makes durable every Config.LastUsedInterval.
// A Book is a [tokens.Authenticator] and a [tokens.CredentialSource]. Over a
// [Notifier] it publishes what other writers commit as the store
// reports it; over any other store shared with other writers it sees their
// changes when its own next write meets them. It is safe for concurrent use.
type Book struct {
	store       Store
	readOnly    ReadOnlyUsers
	cost        int
	minPassword int
	maxTokens   int
	interval    time.Duration
	now         func() time.Time
	logger      *slog.Logger
	random      io.Reader
	dummy       []byte // a bcrypt hash no password matches, for unknown names

	w      *image.Writer[State, *accountSnapshot]
	closed atomic.Bool

	stop chan struct{} // closed by Close to stop the last-used writer
	done chan struct{} // closed when the last-used writer has stopped
}

var (
	_ tokens.Authenticator    = (*Book)(nil)
	_ tokens.CredentialSource = (*Book)(nil)
)

// Defaults of Config.
const (
	defaultMaxAPITokens     = 100
	defaultLastUsedInterval = time.Minute
	// maxAccountGroups bounds the groups of a user and the web API groups
	// of an API token.
	maxAccountGroups = 1000
	// maxAPITokenName bounds an API token's name, in characters.
	maxAPITokenName = 128
)

// Open returns a Book over cfg.Store, holding what the store
// holds. It fails on a config out of range. Close it to stop its
// background writer.
func Open(ctx context.Context, cfg Config) (*Book, error) {
	return newAccounts(ctx, cfg, bcrypt.DefaultCost)
}

// newAccounts is Open with lowestCost the lowest bcrypt cost
// allowed, which tests lower to run fast.
func newAccounts(ctx context.Context, cfg Config, lowestCost int) (*Book, error) {
	if cfg.Store == nil {
		return nil, errors.New("tokens: accounts.Open needs a store")
	}
	a := &Book{
		store:       cfg.Store,
		readOnly:    cfg.ReadOnly,
		cost:        cfg.BcryptCost,
		minPassword: cfg.MinPasswordLength,
		maxTokens:   cfg.MaxAPITokensPerUser,
		interval:    cfg.LastUsedInterval,
		now:         cfg.Now,
		logger:      cfg.Logger,
		random:      rand.Reader,
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
	}
	if a.cost == 0 {
		a.cost = bcrypt.DefaultCost
	}
	if a.cost < lowestCost || a.cost > MaxBcryptCost {
		return nil, fmt.Errorf("tokens: bcrypt cost %d is outside %d to %d", a.cost, lowestCost, MaxBcryptCost)
	}
	if a.minPassword == 0 {
		a.minPassword = DefaultMinPasswordLength
	}
	if a.minPassword < 1 || a.minPassword > maxPassword {
		return nil, fmt.Errorf("tokens: minimum password length %d is outside 1 to %d", a.minPassword, maxPassword)
	}
	if a.maxTokens == 0 {
		a.maxTokens = defaultMaxAPITokens
	}
	if a.maxTokens < 0 {
		return nil, fmt.Errorf("tokens: negative MaxAPITokensPerUser %d", a.maxTokens)
	}
	if a.interval == 0 {
		a.interval = defaultLastUsedInterval
	}
	if a.interval < 0 {
		return nil, fmt.Errorf("tokens: negative LastUsedInterval %v", a.interval)
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.logger == nil {
		a.logger = slog.Default()
	}
	dummy, err := bcrypt.GenerateFromPassword([]byte(rand.Text()), a.cost)
	if err != nil {
		return nil, fmt.Errorf("tokens: dummy hash: %w", err)
	}
	a.dummy = dummy
	w, err := image.NewWriter(ctx, image.WriterConfig[State, *accountSnapshot]{
		Store: a.store,
		Seq:   accountConfig.Seq,
		View:  index,
		// A state that cannot be indexed is logged and left unpublished:
		// the snapshot keeps what it held, and the next good state
		// replaces it.
		Unusable: func(st *State, err error) {
			a.logger.Error("tokens: a state the account store reported cannot be used", "seq", st.Seq, "err", err)
		},
		Closed:     ErrClosed,
		ReadFailed: "tokens: read account store",
	})
	if err != nil {
		return nil, err
	}
	a.w = w
	go a.writeLastUsed()
	return a, nil
}

// Close makes pending last-used times durable, stops the background
// writer and stops following a [Notifier]. It does not close the
// store. Later writes fail with
// [ErrClosed]; reads go on answering from what was last
// published. Closing a closed Book does nothing.
func (a *Book) Close() error {
	if a.closed.Swap(true) {
		return nil
	}
	close(a.stop)
	<-a.done
	err := a.flushLastUsed(context.Background())
	a.w.Close()
	return err
}

// clock returns the current time in UTC without a monotonic reading, as
// it is stored.
func (a *Book) clock() time.Time { return a.now().UTC().Round(0) }

// accountSnapshot is one published State with the indexes reads use.
// It is never changed.
type accountSnapshot struct {
	state   *State
	users   map[string]*StoredUser
	tokens  map[apiTokenHash]*liveAPIToken
	byID    map[string]*liveAPIToken
	ordered []*liveAPIToken // by owner, creation time, ID
	owned   map[string]int  // API tokens by owner
}

// liveAPIToken is a stored API token with its last use as verification
// records it. lastUsed is shared by every snapshot that holds the token.
type liveAPIToken struct {
	*StoredAPIToken
	lastUsed *atomic.Int64 // Unix nanoseconds, 0 for never
}

// view returns the token as the Book shows it.
func (t *liveAPIToken) view() APIToken {
	v := t.APIToken
	v.WebAPIGroups = slices.Clone(v.WebAPIGroups)
	if n := t.lastUsed.Load(); n != 0 {
		if used := time.Unix(0, n).UTC(); used.After(v.LastUsedAt) {
			v.LastUsedAt = used
		}
	}
	return v
}

// index makes the snapshot of st, what reads see of it, carrying the last
// uses recorded in prev, which may be nil.
func index(st *State, prev *accountSnapshot) (*accountSnapshot, error) {
	s := &accountSnapshot{
		state:  st,
		users:  make(map[string]*StoredUser, len(st.Users)),
		tokens: make(map[apiTokenHash]*liveAPIToken, len(st.APITokens)),
		byID:   make(map[string]*liveAPIToken, len(st.APITokens)),
		owned:  make(map[string]int),
	}
	for i := range st.Users {
		s.users[st.Users[i].Name] = &st.Users[i]
	}
	for i := range st.APITokens {
		t := &st.APITokens[i]
		h, err := parseAPITokenHash(t.Hash)
		if err != nil {
			return nil, fmt.Errorf("tokens: account store: API token %q: %w", t.ID, err)
		}
		lt := &liveAPIToken{StoredAPIToken: t}
		if old := prev.token(t.ID); old != nil {
			lt.lastUsed = old.lastUsed
		} else {
			lt.lastUsed = new(atomic.Int64)
		}
		s.tokens[h] = lt
		s.byID[t.ID] = lt
		s.ordered = append(s.ordered, lt)
		s.owned[t.Owner]++
	}
	slices.SortFunc(s.ordered, func(x, y *liveAPIToken) int {
		return cmp.Or(strings.Compare(x.Owner, y.Owner), x.CreatedAt.Compare(y.CreatedAt), strings.Compare(x.ID, y.ID))
	})
	return s, nil
}

// token returns the token id of s, or nil; s may be nil.
func (s *accountSnapshot) token(id string) *liveAPIToken {
	if s == nil {
		return nil
	}
	return s.byID[id]
}

// readOnlyVersion returns the credential version of the read-only user
// name, and whether there is one.
func (a *Book) readOnlyVersion(ctx context.Context, name string) (string, bool, error) {
	if a.readOnly == nil {
		return "", false, nil
	}
	return a.readOnly.CredentialVersion(ctx, name)
}

// readOnlyPrincipal returns the read-only user name, and whether there is
// one.
func (a *Book) readOnlyPrincipal(name string) (tokens.Principal, bool) {
	if a.readOnly == nil {
		return tokens.Principal{}, false
	}
	ps := a.readOnly.Principals()
	i, ok := slices.BinarySearchFunc(ps, name, func(p tokens.Principal, name string) int { return strings.Compare(p.Subject, name) })
	if !ok {
		return tokens.Principal{}, false
	}
	return ps[i], true
}

// Users returns the stored and the read-only users, sorted by name. A
// read-only user hides a stored user of the same name.
func (a *Book) Users() []Account {
	s := a.w.View()
	var out []Account
	shadowed := map[string]bool{}
	if a.readOnly != nil {
		for _, p := range a.readOnly.Principals() {
			out = append(out, readOnlyAccount(p))
			shadowed[p.Subject] = true
		}
	}
	for i := range s.state.Users {
		if u := &s.state.Users[i]; !shadowed[u.Name] {
			out = append(out, storedAccount(u))
		}
	}
	slices.SortFunc(out, func(x, y Account) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// User returns the user name and whether there is one.
func (a *Book) User(name string) (Account, bool) { return a.userOn(a.w.View(), name) }

// userOn is User on the snapshot s.
func (a *Book) userOn(s *accountSnapshot, name string) (Account, bool) {
	if p, ok := a.readOnlyPrincipal(name); ok {
		return readOnlyAccount(p), true
	}
	if u, ok := s.users[name]; ok {
		return storedAccount(u), true
	}
	return Account{}, false
}

func readOnlyAccount(p tokens.Principal) Account {
	return Account{Name: p.Subject, Admin: p.Admin, Groups: slices.Clone(p.Groups), Source: SourceFile}
}

func storedAccount(u *StoredUser) Account {
	return Account{Name: u.Name, Admin: u.Admin, Groups: slices.Clone(u.Groups), Source: SourceAPI,
		Revision: u.Revision, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

// checkPassword applies the rules of a new password ([CheckNewPassword])
// with the Book's minimum length.
func (a *Book) checkPassword(password string) error {
	return CheckNewPassword(password, a.minPassword)
}

// checkGroups applies the rules of a list of group names at pointer.
func checkGroups(pointer string, groups []string) error {
	if len(groups) > maxAccountGroups {
		return invalidField(pointer, "%d groups are more than the %d allowed", len(groups), maxAccountGroups)
	}
	for i, g := range groups {
		if err := tokens.CheckName("group", g); err != nil {
			return invalidField(fmt.Sprintf("%s/%d", pointer, i), "%s", strings.TrimPrefix(err.Error(), "tokens: "))
		}
		if slices.Index(groups, g) < i {
			return invalidField(fmt.Sprintf("%s/%d", pointer, i), "group %q appears twice", g)
		}
	}
	return nil
}

// hash returns the bcrypt hash of a password that passed checkPassword.
func (a *Book) hash(password string) ([]byte, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), a.cost)
	if err != nil {
		return nil, fmt.Errorf("tokens: hash password: %w", err)
	}
	return h, nil
}

// CreateUser stores a new user. Its name must follow the rules of a new
// user name (see User names in the package documentation): no white
// space or invisible characters, one RFC 8265 allows, of one script, and
// not another user's name but for case, normalisation or look-alike
// letters. Users already stored under such names keep them. Errors: [ErrInvalid] pointing at "/name",
// "/password" or "/groups/<i>"; [ErrExists] for a name taken by a stored
// or a read-only user, or one that reads as theirs (the message names
// the user).
func (a *Book) CreateUser(ctx context.Context, u NewUser) (Account, error) {
	if err := checkUserName(u.Name); err != nil {
		return Account{}, invalidField("/name", "%s", strings.TrimPrefix(err.Error(), "tokens: "))
	}
	if rule := checkNewUserName(u.Name); rule != "" {
		return Account{}, invalidField("/name", "%s", rule)
	}
	if err := a.checkPassword(u.Password); err != nil {
		return Account{}, err
	}
	if err := checkGroups("/groups", u.Groups); err != nil {
		return Account{}, err
	}
	hash, err := a.hash(u.Password)
	if err != nil {
		return Account{}, err
	}
	var created *StoredUser
	err = a.write(ctx, func(s *accountSnapshot) (Change, *State, error) {
		if _, ro, err := a.readOnlyVersion(ctx, u.Name); err != nil {
			return Change{}, nil, err
		} else if _, stored := s.users[u.Name]; ro || stored {
			return Change{}, nil, accountErrorf(ErrExists, "user %q already exists", u.Name)
		}
		// Decided on the state the commit is conditional on, so that of
		// two look-alike names created at once, on any replica, one fails.
		if other, ok := a.lookalike(s, u.Name); ok {
			return Change{}, nil, accountErrorf(ErrExists, "user name %q is taken: it reads as the name of the existing user %q (compared case-folded and normalised, look-alike letters read alike)", u.Name, other)
		}
		cv, err := newCredentialVersion(a.random)
		if err != nil {
			return Change{}, nil, err
		}
		now := a.clock()
		created = &StoredUser{Name: u.Name, PasswordHash: hash, Admin: u.Admin, Groups: cloneNames(u.Groups),
			CredentialVersion: cv, Revision: 1, CreatedAt: now, UpdatedAt: now}
		next := s.state.withUser(*created)
		return Change{User: created}, next, nil
	})
	if err != nil {
		return Account{}, err
	}
	return storedAccount(created), nil
}

// storedUser returns the stored user name for a change named at
// ifRevision, or the error that refuses the change.
func (a *Book) storedUser(ctx context.Context, s *accountSnapshot, name string, ifRevision uint64) (*StoredUser, error) {
	if _, ro, err := a.readOnlyVersion(ctx, name); err != nil {
		return nil, err
	} else if ro {
		return nil, accountErrorf(ErrReadOnly, "user %q is managed in the users file and cannot be changed here", name)
	}
	u, ok := s.users[name]
	if !ok {
		return nil, accountErrorf(ErrNotFound, "user %q does not exist", name)
	}
	if ifRevision != 0 && ifRevision != u.Revision {
		return nil, accountErrorf(ErrRevision, "user %q is at revision %d, not %d", name, u.Revision, ifRevision)
	}
	return u, nil
}

// refresh loads the store and publishes what it holds if it is newer than
// seq, and reports whether it was.
func (a *Book) refresh(ctx context.Context, seq uint64) bool {
	return a.w.Refresh(ctx) == nil && a.w.State().Seq > seq
}

// matchedUser returns the stored user name for a change under match, or
// the error that refuses the change: match sees the user as User shows it
// on s, before every other rule.
func (a *Book) matchedUser(ctx context.Context, s *accountSnapshot, name string, match func(cur Account) error) (*StoredUser, error) {
	acc, ok := a.userOn(s, name)
	if !ok {
		return nil, accountErrorf(ErrNotFound, "user %q does not exist", name)
	}
	if err := match(acc); err != nil {
		return nil, err
	}
	return a.storedUser(ctx, s, name, 0)
}

// UpdateUser changes the fields of u that are set. ifRevision 0 changes
// the user whatever its revision; otherwise it must be the current one.
// Every update adds one to the revision. A change of password, groups or
// admin flag gives the user a new credential version, which revokes the
// user's tokens and the effect of the user's API tokens. Errors:
// [ErrNotFound], [ErrReadOnly], [ErrRevision], [ErrInvalid] pointing at
// "/password" or "/groups/<i>".
func (a *Book) UpdateUser(ctx context.Context, name string, ifRevision uint64, u UserUpdate) (Account, error) {
	return a.updateUser(ctx, func(s *accountSnapshot) (*StoredUser, error) { return a.storedUser(ctx, s, name, ifRevision) }, u)
}

// UpdateUserIf is UpdateUser under a condition of the caller's (an HTTP
// If-Match) instead of a revision: match is called with the user as
// [Book.User] shows it, a read-only user too, on the state the update
// is decided on, before every rule of the update, and again whenever the
// update is decided afresh on a newer state; an error of it refuses the
// update. So the caller needs no retry of its own. Errors: match's, and
// those of UpdateUser but ErrRevision.
func (a *Book) UpdateUserIf(ctx context.Context, name string, match func(cur Account) error, u UserUpdate) (Account, error) {
	return a.updateUser(ctx, func(s *accountSnapshot) (*StoredUser, error) { return a.matchedUser(ctx, s, name, match) }, u)
}

// updateUser is UpdateUser of the stored user that check returns on the
// snapshot the update is decided on.
func (a *Book) updateUser(ctx context.Context, check func(s *accountSnapshot) (*StoredUser, error), u UserUpdate) (Account, error) {
	// Refuse what is refused anyway before the bcrypt work.
	s := a.w.View()
	if _, err := check(s); err != nil {
		// Over a shared store, the user or its revision may come from
		// another replica's commit not told here yet.
		if !a.w.Shared() || !a.refresh(ctx, s.state.Seq) {
			return Account{}, err
		}
		if _, err := check(a.w.View()); err != nil {
			return Account{}, err
		}
	}
	var hash []byte
	if u.Password != nil {
		if err := a.checkPassword(*u.Password); err != nil {
			return Account{}, err
		}
		h, err := a.hash(*u.Password)
		if err != nil {
			return Account{}, err
		}
		hash = h
	}
	if u.Groups != nil {
		if err := checkGroups("/groups", *u.Groups); err != nil {
			return Account{}, err
		}
	}
	var updated *StoredUser
	err := a.write(ctx, func(s *accountSnapshot) (Change, *State, error) {
		old, err := check(s)
		if err != nil {
			return Change{}, nil, err
		}
		nu := *old
		if hash != nil {
			nu.PasswordHash = hash
		}
		if u.Admin != nil {
			nu.Admin = *u.Admin
		}
		if u.Groups != nil {
			nu.Groups = cloneNames(*u.Groups)
		}
		if hash != nil || nu.Admin != old.Admin || !slices.Equal(nu.Groups, old.Groups) {
			if nu.CredentialVersion, err = newCredentialVersion(a.random); err != nil {
				return Change{}, nil, err
			}
		}
		nu.Revision++
		nu.UpdatedAt = a.clock()
		updated = &nu
		return Change{User: updated, Revision: old.Revision}, s.state.withUser(nu), nil
	})
	if err != nil {
		return Account{}, err
	}
	return storedAccount(updated), nil
}

// DeleteUser removes the user name and the user's API tokens. ifRevision
// is as for UpdateUser. Errors: [ErrNotFound], [ErrReadOnly],
// [ErrRevision].
func (a *Book) DeleteUser(ctx context.Context, name string, ifRevision uint64) error {
	return a.deleteUser(ctx, func(s *accountSnapshot) (*StoredUser, error) { return a.storedUser(ctx, s, name, ifRevision) })
}

// DeleteUserIf is DeleteUser under match, as UpdateUserIf is UpdateUser.
// Errors: match's, [ErrNotFound], [ErrReadOnly].
func (a *Book) DeleteUserIf(ctx context.Context, name string, match func(cur Account) error) error {
	return a.deleteUser(ctx, func(s *accountSnapshot) (*StoredUser, error) { return a.matchedUser(ctx, s, name, match) })
}

// deleteUser is DeleteUser of the stored user that check returns on the
// snapshot the removal is decided on.
func (a *Book) deleteUser(ctx context.Context, check func(s *accountSnapshot) (*StoredUser, error)) error {
	return a.write(ctx, func(s *accountSnapshot) (Change, *State, error) {
		old, err := check(s)
		if err != nil {
			return Change{}, nil, err
		}
		return Change{User: old, Delete: true, Revision: old.Revision}, s.state.withoutUser(old.Name), nil
	})
}

// CheckPassword returns nil if password is the user name's, and an error
// matching [tokens.ErrBadCredentials] otherwise, for a user who changes their own
// password.
func (a *Book) CheckPassword(ctx context.Context, name, password string) error {
	_, err := a.Authenticate(ctx, name, password)
	return err
}

// Authenticate implements [tokens.Authenticator] over the read-only users, then
// the stored ones. An unknown name costs a bcrypt comparison as a wrong
// password does. The principal carries the user's credential version.
func (a *Book) Authenticate(ctx context.Context, name, password string) (tokens.Principal, error) {
	if err := ctx.Err(); err != nil {
		return tokens.Principal{}, err
	}
	if _, ro, err := a.readOnlyVersion(ctx, name); err != nil {
		return tokens.Principal{}, err
	} else if ro {
		return a.readOnly.Authenticate(ctx, name, password)
	}
	u, known := a.w.View().users[name]
	hash := a.dummy
	if known {
		hash = u.PasswordHash
	}
	// The comparison runs whatever else is wrong, so every failure costs
	// the same.
	match := bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
	if !known || !match || len(password) > maxPassword {
		return tokens.Principal{}, tokens.ErrBadCredentials
	}
	return tokens.Principal{Subject: u.Name, Admin: u.Admin, Groups: slices.Clone(u.Groups), CredentialVersion: u.CredentialVersion}, nil
}

// CredentialVersion implements [tokens.CredentialSource] over the read-only
// users, then the stored ones. A stored user's version changes with every
// change of the user's password, groups or admin flag.
func (a *Book) CredentialVersion(ctx context.Context, subject string) (string, bool, error) {
	if v, ro, err := a.readOnlyVersion(ctx, subject); err != nil || ro {
		return v, ro, err
	}
	if u, ok := a.w.View().users[subject]; ok {
		return u.CredentialVersion, true, nil
	}
	return "", false, nil
}

// cloneNames copies a list of group names, none for an empty list, so that
// a user or token reads the same before and after a store's round trip.
func cloneNames(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	return slices.Clone(names)
}
