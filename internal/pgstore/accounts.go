package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// accountsChannel is the channel every commit of accounts notifies, with
// the committed Seq as payload.
const accountsChannel = "scorehub_accounts"

// accountSeqQuery reads the stored Seq of the accounts.
const accountSeqQuery = "SELECT seq FROM account_seq"

// AccountStore keeps the users and API tokens of an [accounts.Book] in a
// DB's database: an [accounts.Store] and [accounts.Notifier] that
// every replica on the database shares. Commits are decided by the
// database, conditionally on the Seq of the state their rules were checked
// on, so a write decided through any replica on an outdated state fails
// with [tokens.ErrStale]. Get it with [DB.Accounts]; it is safe for
// concurrent use.
type AccountStore struct {
	db     *DB
	closed atomic.Bool
}

var (
	_ accounts.Store    = (*AccountStore)(nil)
	_ accounts.Notifier = (*AccountStore)(nil)
)

// Accounts returns a store of the users and API tokens on db's database.
// Closing it does not close db; closing db closes it.
func (db *DB) Accounts() *AccountStore { return &AccountStore{db: db} }

// check checks a call's context and that the store and its DB are open.
func (s *AccountStore) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() || s.db.closed.Load() {
		return accounts.ErrClosed
	}
	return nil
}

// Close implements [accounts.Store]: later calls fail with
// [accounts.ErrClosed]. The DB stays open.
func (s *AccountStore) Close() error {
	s.closed.Store(true)
	return nil
}

// Load implements [accounts.Store]: it reads every user and API token
// in one snapshot of the database.
func (s *AccountStore) Load(ctx context.Context) (*accounts.State, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	return s.db.loadAccounts(ctx)
}

// loadAccounts reads the accounts in one snapshot of the database.
func (db *DB) loadAccounts(ctx context.Context) (*accounts.State, error) {
	st := &accounts.State{}
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var seq int64
		if err := tx.QueryRow(ctx, accountSeqQuery).Scan(&seq); err != nil {
			return fmt.Errorf("read seq: %w", err)
		}
		st.Seq = uint64(seq)
		users, err := readBodies[accounts.StoredUser](ctx, tx, "SELECT body FROM account_users ORDER BY name")
		if err != nil {
			return err
		}
		if len(users) > 0 {
			st.Users = users
		}
		toks, err := readBodies[accounts.StoredAPIToken](ctx, tx, "SELECT body FROM account_api_tokens ORDER BY id")
		if err != nil {
			return err
		}
		if len(toks) > 0 {
			st.APITokens = toks
		}
		return nil
	})
	if err != nil {
		return nil, db.accountsErr(fmt.Errorf("postgres: load accounts: %w", err))
	}
	return st, nil
}

// accountsErr is wrap for the account store: a DB closed meanwhile is
// accounts.ErrClosed.
func (db *DB) accountsErr(err error) error {
	err = db.wrap(err)
	if errors.Is(err, registry.ErrClosed) {
		return fmt.Errorf("%w: %w", accounts.ErrClosed, err)
	}
	return err
}

// Commit implements [accounts.Store]. One transaction advances the
// sequence row from base (none does when another writer committed first:
// [tokens.ErrStale]), writes what next's change stores or removes and
// notifies the other DBs on the database.
func (s *AccountStore) Commit(ctx context.Context, base uint64, next *accounts.State) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if next == nil || next.Seq != base+1 {
		return fmt.Errorf("postgres: accounts commit on base %d of another seq: %w", base, tokens.ErrStale)
	}
	if next.Change == nil {
		return errors.New("postgres: an accounts commit that changes nothing")
	}
	err := s.db.commitOn(ctx, base, accountsChannel, advanceSeq("account_seq"), func(tx pgx.Tx) error {
		return writeAccountChange(ctx, tx, next)
	})
	if err != nil && !errors.Is(err, tokens.ErrStale) {
		return s.db.accountsErr(fmt.Errorf("postgres: commit accounts: %w", err))
	}
	return err
}

// writeAccountChange stores or removes what next's change names.
func writeAccountChange(ctx context.Context, tx pgx.Tx, next *accounts.State) error {
	ch := next.Change
	switch {
	case ch.User != nil && ch.Delete:
		// The user's API tokens go with the user, as in Accounts' state.
		if err := exec(ctx, tx, "DELETE FROM account_api_tokens WHERE owner = $1", ch.User.Name); err != nil {
			return err
		}
		return exec(ctx, tx, "DELETE FROM account_users WHERE name = $1", ch.User.Name)
	case ch.User != nil:
		return putBody(ctx, tx, `INSERT INTO account_users (name, body) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET body = EXCLUDED.body`, ch.User.Name, ch.User)
	case ch.APIToken != nil && ch.Delete:
		return exec(ctx, tx, "DELETE FROM account_api_tokens WHERE id = $1", ch.APIToken.ID)
	case ch.APIToken != nil:
		return putAccountToken(ctx, tx, ch.APIToken)
	case len(ch.LastUsed) > 0:
		ids := make([]string, 0, len(ch.LastUsed))
		for id := range ch.LastUsed {
			ids = append(ids, id)
		}
		slices.Sort(ids) // rows locked in one order by every writer
		for _, id := range ids {
			i, ok := slices.BinarySearchFunc(next.APITokens, id, func(t accounts.StoredAPIToken, id string) int { return strings.Compare(t.ID, id) })
			if !ok {
				continue // deleted by the write the commit's rules saw: nothing to record
			}
			if err := putAccountToken(ctx, tx, &next.APITokens[i]); err != nil {
				return err
			}
		}
		return nil
	}
	return errors.New("a commit that changes nothing")
}

// putAccountToken stores t, replacing the token of its ID.
func putAccountToken(ctx context.Context, tx pgx.Tx, t *accounts.StoredAPIToken) error {
	body, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return exec(ctx, tx, `INSERT INTO account_api_tokens (id, owner, hash, body) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, hash = EXCLUDED.hash, body = EXCLUDED.body`,
		t.ID, t.Owner, t.Hash, body)
}

// Subscribe implements [accounts.Notifier], on the DB's listener (see
// [DB.Subscribe]): fn is given the accounts after every commit of any DB
// on the database, and after a reconnection.
func (s *AccountStore) Subscribe(fn func(*accounts.State)) (cancel func()) {
	if s.closed.Load() {
		return func() {}
	}
	return subscribe(s.db, func(l *listener) *feed[accounts.State] { return l.accounts }, fn)
}
