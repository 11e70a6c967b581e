package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/scorehub/scorehub/tokens"
)

// keysChannel is the channel every commit of the signing keys notifies,
// with the committed Seq as payload: never the keys.
const keysChannel = "scorehub_keys"

// keySeqQuery reads the stored Seq of the signing keys, 0 when none.
const keySeqQuery = "SELECT coalesce((SELECT seq FROM signing_keys), 0)"

// KeyStore keeps the token signing key set of every replica on a DB's
// database: a [tokens.KeyStore] and [tokens.KeyNotifier] for
// [tokens.OpenKeySet]. The database decides every rotation: a commit
// replaces the set only if it still is the one the rotation was decided
// on, so one replica at a time rotates, and the others load what it
// committed. Get it with [DB.Keys]; it is safe for concurrent use.
//
// The set holds the private keys. They are kept in the row as the key
// file keeps them, protected by the database's access control alone (see
// the package documentation); no error, log line or notification of this
// package contains them.
type KeyStore struct{ db *DB }

var (
	_ tokens.KeyStore    = (*KeyStore)(nil)
	_ tokens.KeyNotifier = (*KeyStore)(nil)
)

// Keys returns the store of the signing keys on db's database. It lives
// as long as db.
func (db *DB) Keys() *KeyStore { return &KeyStore{db: db} }

// Load implements [tokens.KeyStore].
func (s *KeyStore) Load(ctx context.Context) (*tokens.StoredKeySet, error) {
	if err := s.db.check(ctx); err != nil {
		return nil, err
	}
	return s.db.loadKeys(ctx)
}

// loadKeys reads the stored key set.
func (db *DB) loadKeys(ctx context.Context) (*tokens.StoredKeySet, error) {
	var (
		seq  int64
		data []byte
	)
	err := db.pool.QueryRow(ctx, "SELECT seq, data FROM signing_keys").Scan(&seq, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return &tokens.StoredKeySet{}, nil
	}
	if err != nil {
		return nil, db.wrap(fmt.Errorf("postgres: load signing keys: %w", err))
	}
	return &tokens.StoredKeySet{Seq: uint64(seq), Data: data}, nil
}

// Commit implements [tokens.KeyStore]. One transaction creates the set
// (base 0) or replaces it if its Seq is still base, and notifies the other
// DBs on the database; otherwise it fails with [tokens.ErrStale].
func (s *KeyStore) Commit(ctx context.Context, base uint64, next *tokens.StoredKeySet) error {
	if err := s.db.check(ctx); err != nil {
		return err
	}
	if next == nil || next.Seq != base+1 || len(next.Data) == 0 {
		return fmt.Errorf("postgres: signing keys commit on base %d of another seq or no keys: %w", base, tokens.ErrStale)
	}
	err := s.db.commitOn(ctx, base, keysChannel, func(ctx context.Context, tx pgx.Tx, base uint64) (pgconn.CommandTag, error) {
		if base == 0 {
			return tx.Exec(ctx, "INSERT INTO signing_keys (seq, data) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
				int64(next.Seq), next.Data)
		}
		return tx.Exec(ctx, "UPDATE signing_keys SET seq = $2, data = $3 WHERE seq = $1", int64(base), int64(next.Seq), next.Data)
	}, nil)
	if err != nil && !errors.Is(err, tokens.ErrStale) {
		return s.db.wrap(fmt.Errorf("postgres: commit signing keys: %w", err))
	}
	return err
}

// Subscribe implements [tokens.KeyNotifier], on the DB's listener (see
// [DB.Subscribe]): fn is given the key set after every rotation or prune
// through any DB on the database, and after a reconnection.
func (s *KeyStore) Subscribe(fn func(*tokens.StoredKeySet)) (cancel func()) {
	return subscribe(s.db, func(l *listener) *feed[tokens.StoredKeySet] { return l.keys }, fn)
}
