package accounts

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/tokens"
)

// CreateAPIToken stores a new API token and returns it with its secret,
// which is never shown again: only its SHA-256 is kept. The token works
// while its owner keeps the credential version they have now. Errors:
// [ErrInvalid] pointing at "/name", "/expiresAt" or "/webApiGroups/<i>";
// [ErrNotFound] of type "invalid_reference" pointing at "/owner";
// [ErrTooManyAPITokens].
func (a *Book) CreateAPIToken(ctx context.Context, t NewAPIToken) (APIToken, string, error) {
	if err := checkAPITokenName(t.Name); err != nil {
		return APIToken{}, "", err
	}
	if !t.ExpiresAt.IsZero() && !t.ExpiresAt.After(a.now()) {
		return APIToken{}, "", invalidField("/expiresAt", "the expiry %s is not in the future", t.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if err := checkGroups("/webApiGroups", t.WebAPIGroups); err != nil {
		return APIToken{}, "", err
	}
	secret, err := newAPITokenSecret(a.random)
	if err != nil {
		return APIToken{}, "", err
	}
	var created *StoredAPIToken
	err = a.write(ctx, func(s *accountSnapshot) (Change, *State, error) {
		cv, ro, err := a.readOnlyVersion(ctx, t.Owner)
		if err != nil {
			return Change{}, nil, err
		}
		if !ro {
			u, ok := s.users[t.Owner]
			if !ok {
				// A reference the request makes, not an address: 422.
				e := fieldError(ErrNotFound, "/owner", "user %q does not exist", t.Owner)
				e.Code = problem.InvalidReference
				return Change{}, nil, e
			}
			cv = u.CredentialVersion
		}
		if n := s.owned[t.Owner]; n >= a.maxTokens {
			return Change{}, nil, accountErrorf(ErrTooManyAPITokens,
				"user %q has %d API tokens, as many as allowed; delete one first", t.Owner, n)
		}
		id, err := newAPITokenID(a.random)
		if err != nil {
			return Change{}, nil, err
		}
		if s.byID[id] != nil {
			// 80 random bits do not collide; a source that repeats
			// itself is broken.
			return Change{}, nil, fmt.Errorf("tokens: API token ID %q drawn twice", id)
		}
		created = &StoredAPIToken{
			APIToken: APIToken{ID: id, Name: t.Name, Owner: t.Owner, WebAPIGroups: cloneNames(t.WebAPIGroups),
				CreatedAt: a.clock()},
			Hash:              hashAPIToken(secret).String(),
			CredentialVersion: cv,
		}
		if !t.ExpiresAt.IsZero() {
			created.ExpiresAt = t.ExpiresAt.UTC().Round(0)
		}
		return Change{APIToken: created}, s.state.withAPIToken(*created), nil
	})
	if err != nil {
		return APIToken{}, "", err
	}
	v := created.APIToken
	v.WebAPIGroups = slices.Clone(v.WebAPIGroups)
	return v, secret, nil
}

// checkAPITokenName applies the rules of an API token's name.
func checkAPITokenName(name string) error {
	switch {
	case name == "":
		return invalidField("/name", "the token needs a name")
	case !utf8.ValidString(name):
		return invalidField("/name", "the name is not UTF-8")
	case utf8.RuneCountInString(name) > maxAPITokenName:
		return invalidField("/name", "the name is longer than %d characters", maxAPITokenName)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return invalidField("/name", "the name %q has a control character", name)
	}
	return nil
}

// APITokens returns every API token, sorted by owner, then creation time,
// then ID.
func (a *Book) APITokens() []APIToken {
	s := a.w.View()
	out := make([]APIToken, len(s.ordered))
	for i, t := range s.ordered {
		out[i] = t.view()
	}
	return out
}

// APIToken returns the API token id and whether there is one.
func (a *Book) APIToken(id string) (APIToken, bool) {
	t := a.w.View().byID[id]
	if t == nil {
		return APIToken{}, false
	}
	return t.view(), true
}

// DeleteAPIToken removes the API token id; the next VerifyAPIToken of it
// fails. Errors: [ErrNotFound].
func (a *Book) DeleteAPIToken(ctx context.Context, id string) error {
	return a.write(ctx, func(s *accountSnapshot) (Change, *State, error) {
		t := s.byID[id]
		if t == nil {
			return Change{}, nil, accountErrorf(ErrNotFound, "API token %q does not exist", id)
		}
		return Change{APIToken: t.StoredAPIToken, Delete: true}, s.state.withoutAPIToken(id), nil
	})
}

// VerifyAPIToken returns the principal of the owner of token as the owner
// is now, and the web API groups the token is restricted to (none: no
// restriction); the two share their slices with the Book and must not be
// changed. A token that is malformed or unknown fails with an error
// matching [tokens.ErrBadCredentials]; one past its expiry with [tokens.ErrExpired]; one
// whose owner was removed or changed password, groups or admin flag since
// it was made with [tokens.ErrRevoked]. It answers from memory and records the
// use, to the second, for the background writer to make durable.
func (a *Book) VerifyAPIToken(ctx context.Context, token string) (p tokens.Principal, webAPIGroups []string, err error) {
	if !apiTokenWellFormed(token) {
		return tokens.Principal{}, nil, tokens.ErrBadCredentials
	}
	t := a.w.View().tokens[hashAPIToken(token)]
	if t == nil {
		return tokens.Principal{}, nil, tokens.ErrBadCredentials
	}
	now := a.now()
	if !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt) {
		return tokens.Principal{}, nil, fmt.Errorf("%w: API token %q expired at %s", tokens.ErrExpired, t.ID, t.ExpiresAt.Format(time.RFC3339))
	}
	p, ok, err := a.owner(ctx, t.Owner)
	if err != nil {
		return tokens.Principal{}, nil, err
	}
	if !ok {
		return tokens.Principal{}, nil, fmt.Errorf("%w: the owner %q of API token %q no longer exists", tokens.ErrRevoked, t.Owner, t.ID)
	}
	if p.CredentialVersion != t.CredentialVersion {
		return tokens.Principal{}, nil, fmt.Errorf("%w: the owner %q of API token %q changed since it was made", tokens.ErrRevoked, t.Owner, t.ID)
	}
	recordUse(t.lastUsed, now)
	return p, t.WebAPIGroups, nil
}

// owner returns the user name as a principal, read-only users first.
func (a *Book) owner(ctx context.Context, name string) (tokens.Principal, bool, error) {
	if _, ro, err := a.readOnlyVersion(ctx, name); err != nil {
		return tokens.Principal{}, false, err
	} else if ro {
		p, ok := a.readOnlyPrincipal(name)
		return p, ok, nil
	}
	u, ok := a.w.View().users[name]
	if !ok {
		return tokens.Principal{}, false, nil
	}
	return tokens.Principal{Subject: u.Name, Admin: u.Admin, Groups: u.Groups, CredentialVersion: u.CredentialVersion}, true, nil
}

// recordUse sets last to now unless it holds a time less than a second
// before, so that a token verified many times a second does not make every
// verification write the same memory.
func recordUse(last *atomic.Int64, now time.Time) {
	n := now.UnixNano()
	for {
		old := last.Load()
		if n-old < int64(time.Second) {
			return
		}
		if last.CompareAndSwap(old, n) {
			return
		}
	}
}

// writeLastUsed makes recorded last uses durable every interval until
// Close.
func (a *Book) writeLastUsed() {
	defer close(a.done)
	tick := time.NewTicker(a.interval)
	defer tick.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-tick.C:
			if err := a.flushLastUsed(context.Background()); err != nil {
				a.logger.Error("tokens: recording when API tokens were last used", "err", err)
			}
		}
	}
}

// flushLastUsed commits the last uses recorded since the last commit.
func (a *Book) flushLastUsed(ctx context.Context) error {
	return a.commit(ctx, true, func(s *accountSnapshot) (Change, *State, error) {
		used := map[string]time.Time{}
		for _, t := range s.ordered {
			if n := t.lastUsed.Load(); n != 0 {
				if at := time.Unix(0, n).UTC(); at.After(t.LastUsedAt) {
					used[t.ID] = at
				}
			}
		}
		if len(used) == 0 {
			return Change{}, nil, nil
		}
		return Change{LastUsed: used}, s.state.withLastUsed(used), nil
	})
}

// write decides a change on the published snapshot and commits it, as
// commit does, unless the Book is closed.
func (a *Book) write(ctx context.Context, decide func(*accountSnapshot) (Change, *State, error)) error {
	return a.commit(ctx, false, decide)
}

// commit decides a change on the published snapshot, commits it and
// publishes the new state, through the image.Writer of the Book. decide
// returns a nil state for nothing to commit. A commit that meets another
// writer's ([ErrStale]) loads the store, publishes what it holds and
// decides again. Over a shared store, a refusal is also decided again,
// once, when the store holds a newer state than the one it came from, so
// that no replica refuses a write for a commit it has not been told of yet
// (a revision or a user the client saw through another replica).
// afterClose lets the last write of Close through.
func (a *Book) commit(ctx context.Context, afterClose bool, decide func(*accountSnapshot) (Change, *State, error)) error {
	if a.closed.Load() && !afterClose {
		return ErrClosed
	}
	return a.w.Write(ctx, func(s *accountSnapshot) (*State, error) {
		change, next, err := decide(s)
		if next != nil {
			next.Seq, next.Change = s.state.Seq+1, &change
		}
		return next, err
	})
}
