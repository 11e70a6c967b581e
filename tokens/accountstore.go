package tokens

import (
	"slices"
	"strings"
	"time"

	"github.com/scorehub/scorehub/internal/image"
)

// AccountStore keeps the users and API tokens of [Accounts]: it loads them
// and commits one change at a time. It applies no rule of its own: Accounts
// checks every rule of a write (names, passwords, revisions, owners, limits)
// on its current [AccountState] before it asks the store to commit, so a
// store is only persistence, and one conformance suite (package tokenstest,
// over the suite of every state image) proves any implementation.
//
// It is the store of every state image (records, accounts, signing keys:
// the protocol of package internal/image) for the accounts, with Close. A
// commit is conditional, so that a store several writers share stays
// consistent without trusting any writer's view: Commit names the Seq of
// the state the write's rules were checked on (base), and next, at base+1,
// holds what it changes (AccountState.Change). A commit whose base is no
// longer the stored Seq fails with [ErrStale] and changes nothing; Accounts
// then loads the store again and decides the write afresh.
//
// Implementations must be safe for concurrent use. Commit returns only once
// the change is committed (durable, for a durable store); a failed Commit
// leaves the stored state as it was.
type AccountStore interface {
	// Load returns the state as last committed; the caller must not
	// change it. Commit makes next the stored state if the stored
	// state's Seq is still base, and fails with [ErrStale] otherwise.
	image.Store[AccountState]

	// Close releases the store. Later calls fail with [ErrAccountsClosed].
	Close() error
}

// AccountNotifier is an [AccountStore] that other writers share, such as
// the store of several replicas on one database. [Accounts] over an
// AccountNotifier subscribes to it and publishes every newer state it is
// given, so that a user removed, a password, the groups or the admin flag
// changed, or an API token deleted through another replica revokes, here
// too, what was issued for it, without waiting for a write of this
// process. Accounts publishes its own writes before they return and needs
// no notification for them.
type AccountNotifier interface {
	AccountStore
	// Subscribe calls fn with the stored state after changes that other
	// writers committed. fn must be quick and must not call the store. A
	// state whose Seq is no newer than the one published is ignored, so a
	// store may also report its own writers' commits, or one change twice.
	// cancel stops the calls.
	Subscribe(fn func(*AccountState)) (cancel func())
}

// AccountState is everything an [AccountStore] keeps. A state, once loaded
// or committed, is never changed: a write makes a new one.
type AccountState struct {
	// Seq counts the commits that made the state; a new store's is 0.
	Seq uint64
	// Users are the stored users, sorted by name.
	Users []StoredUser
	// APITokens are the API tokens, sorted by ID.
	APITokens []StoredAPIToken
	// Change is what the write that made the state (from the state at
	// Seq-1) stores or removes, for a store that keeps rows; nil for a
	// state a store loaded.
	Change *AccountChange
}

// StoredUser is a user as an [AccountStore] keeps it.
type StoredUser struct {
	Name         string
	PasswordHash []byte // bcrypt
	Admin        bool
	Groups       []string
	// CredentialVersion changes whenever the password, the groups or the
	// admin flag do; it is random, never derived from the hash alone.
	CredentialVersion string
	Revision          uint64
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// StoredAPIToken is an API token as an [AccountStore] keeps it: never the
// secret, only its hash.
type StoredAPIToken struct {
	APIToken
	// Hash is the SHA-256 of the whole token, in lower-case hex.
	Hash string
	// CredentialVersion is the owner's credential version when the token
	// was made; the token works only while the owner still has it.
	CredentialVersion string
}

// AccountChange is what the write that made an [AccountState] stores or
// removes. Exactly one of User, APIToken and LastUsed is set.
type AccountChange struct {
	// User is the user as the commit stores it or, when Delete is set, as
	// it was before its removal. Removing a user removes the user's API
	// tokens with it.
	User *StoredUser
	// APIToken is the token as the commit stores it or, when Delete is
	// set, as it was before its removal.
	APIToken *StoredAPIToken
	// LastUsed holds the last-used times of API tokens, by ID, that the
	// commit records.
	LastUsed map[string]time.Time
	// Delete reports that User or APIToken is removed.
	Delete bool
	// Revision is User's stored revision before the commit; 0 when the
	// commit creates the user.
	Revision uint64
}

// withUser returns a copy of st, Seq unset, holding u in place of the user
// of its name.
func (st *AccountState) withUser(u StoredUser) *AccountState {
	next := &AccountState{Users: make([]StoredUser, 0, len(st.Users)+1), APITokens: st.APITokens}
	placed := false
	for _, old := range st.Users {
		switch c := strings.Compare(old.Name, u.Name); {
		case c == 0:
			continue
		case c > 0 && !placed:
			next.Users = append(next.Users, u)
			placed = true
		}
		next.Users = append(next.Users, old)
	}
	if !placed {
		next.Users = append(next.Users, u)
	}
	return next
}

// withoutUser returns a copy of st, Seq unset, without the user name and
// the API tokens the user owns.
func (st *AccountState) withoutUser(name string) *AccountState {
	next := &AccountState{}
	for _, u := range st.Users {
		if u.Name != name {
			next.Users = append(next.Users, u)
		}
	}
	for _, t := range st.APITokens {
		if t.Owner != name {
			next.APITokens = append(next.APITokens, t)
		}
	}
	return next
}

// withAPIToken returns a copy of st, Seq unset, holding the new token t.
func (st *AccountState) withAPIToken(t StoredAPIToken) *AccountState {
	next := &AccountState{Users: st.Users, APITokens: append(slices.Clone(st.APITokens), t)}
	slices.SortFunc(next.APITokens, func(x, y StoredAPIToken) int { return strings.Compare(x.ID, y.ID) })
	return next
}

// withoutAPIToken returns a copy of st, Seq unset, without the token id.
func (st *AccountState) withoutAPIToken(id string) *AccountState {
	next := &AccountState{Users: st.Users}
	for _, t := range st.APITokens {
		if t.ID != id {
			next.APITokens = append(next.APITokens, t)
		}
	}
	return next
}

// withLastUsed returns a copy of st, Seq unset, with the last-used times of
// used.
func (st *AccountState) withLastUsed(used map[string]time.Time) *AccountState {
	next := &AccountState{Users: st.Users, APITokens: slices.Clone(st.APITokens)}
	for i := range next.APITokens {
		if at, ok := used[next.APITokens[i].ID]; ok {
			next.APITokens[i].LastUsedAt = at
		}
	}
	return next
}
