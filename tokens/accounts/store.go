package accounts

import (
	"slices"
	"strings"
	"time"

	"github.com/scorehub/scorehub/internal/image"
)

// Store keeps the users and API tokens of [Book]: it loads them
// and commits one change at a time. It applies no rule of its own: the Book
// checks every rule of a write (names, passwords, revisions, owners, limits)
// on its current [State] before it asks the store to commit, so a
// store is only persistence, and one conformance suite (package accountstest,
// over the suite of every state image) proves any implementation.
//
// It is the store of every state image (records, accounts, signing keys:
// the protocol of package internal/image) for the accounts, with Close. A
// commit is conditional, so that a store several writers share stays
// consistent without trusting any writer's view: Commit names the Seq of
// the state the write's rules were checked on (base), and next, at base+1,
// holds what it changes (State.Change). A commit whose base is no
// longer the stored Seq fails with [ErrStale] and changes nothing; the Book
// then loads the store again and decides the write afresh.
//
// Implementations must be safe for concurrent use. Commit returns only once
// the change is committed (durable, for a durable store); a failed Commit
// leaves the stored state as it was.
type Store interface {
	// Load returns the state as last committed; the caller must not
	// change it. Commit makes next the stored state if the stored
	// state's Seq is still base, and fails with [ErrStale] otherwise.
	image.Store[State]

	// Close releases the store. Later calls fail with [ErrClosed].
	Close() error
}

// Notifier is a [Store] that other writers share, such as
// the store of several replicas on one database. [Book] over an
// Notifier subscribes to it and publishes every newer state it is
// given, so that a user removed, a password, the groups or the admin flag
// changed, or an API token deleted through another replica revokes, here
// too, what was issued for it, without waiting for a write of this
// process. The Book publishes its own writes before they return and needs
// no notification for them.
type Notifier interface {
	Store
	// Subscribe calls fn with the stored state after changes that other
	// writers committed. fn must be quick and must not call the store. A
	// state whose Seq is no newer than the one published is ignored, so a
	// store may also report its own writers' commits, or one change twice.
	// cancel stops the calls.
	Subscribe(fn func(*State)) (cancel func())
}

// State is everything a [Store] keeps. A state, once loaded
// or committed, is never changed: a write makes a new one.
type State struct {
	// Seq counts the commits that made the state; a new store's is 0.
	Seq uint64
	// Users are the stored users, sorted by name.
	Users []StoredUser
	// APITokens are the API tokens, sorted by ID.
	APITokens []StoredAPIToken
	// Change is what the write that made the state (from the state at
	// Seq-1) stores or removes, for a store that keeps rows; nil for a
	// state a store loaded.
	Change *Change
}

// StoredUser is a user as a [Store] keeps it.
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

// StoredAPIToken is an API token as a [Store] keeps it: never the
// secret, only its hash.
type StoredAPIToken struct {
	APIToken
	// Hash is the SHA-256 of the whole token, in lower-case hex.
	Hash string
	// CredentialVersion is the owner's credential version when the token
	// was made; the token works only while the owner still has it.
	CredentialVersion string
}

// Change is what the write that made a [State] stores or
// removes. Exactly one of User, APIToken and LastUsed is set.
type Change struct {
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
func (st *State) withUser(u StoredUser) *State {
	next := &State{Users: make([]StoredUser, 0, len(st.Users)+1), APITokens: st.APITokens}
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
func (st *State) withoutUser(name string) *State {
	next := &State{}
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
func (st *State) withAPIToken(t StoredAPIToken) *State {
	next := &State{Users: st.Users, APITokens: append(slices.Clone(st.APITokens), t)}
	slices.SortFunc(next.APITokens, func(x, y StoredAPIToken) int { return strings.Compare(x.ID, y.ID) })
	return next
}

// withoutAPIToken returns a copy of st, Seq unset, without the token id.
func (st *State) withoutAPIToken(id string) *State {
	next := &State{Users: st.Users}
	for _, t := range st.APITokens {
		if t.ID != id {
			next.APITokens = append(next.APITokens, t)
		}
	}
	return next
}

// withLastUsed returns a copy of st, Seq unset, with the last-used times of
// used.
func (st *State) withLastUsed(used map[string]time.Time) *State {
	next := &State{Users: st.Users, APITokens: slices.Clone(st.APITokens)}
	for i := range next.APITokens {
		if at, ok := used[next.APITokens[i].ID]; ok {
			next.APITokens[i].LastUsedAt = at
		}
	}
	return next
}
