package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
)

// Config configures [Open].
type Config struct {
	// URL is the connection string: a postgres:// URL or keyword/value
	// pairs, as libpq reads them. Required. It is never logged, and the
	// password it holds appears in no error of this package.
	URL string
	// MaxConns caps the connections of the pool, besides the one a
	// subscription listens on. Zero means the driver's default (the
	// larger of 4 and the number of CPUs).
	MaxConns int32
	// Now stamps the built-in records of a database the DB initialises.
	// Nil means time.Now. (A Registry or jobs.Registry over a DB stamps
	// what it writes with time.Now: their clock is the store's only for
	// the stores of packages registry and registry/jobs.)
	Now func() time.Time
	// Logger receives what the listener of [DB.Subscribe] meets: lost
	// connections, reconnects, reloads that failed. Nil discards it.
	Logger *slog.Logger
	// PollInterval is how often a subscribed DB also reads the stored
	// Seq, the safety net under notifications. Zero means 5 s.
	PollInterval time.Duration
	// RetryMax bounds the pause between the listener's reconnection
	// attempts, which doubles from 50 ms. Zero means 2 s.
	RetryMax time.Duration
}

const (
	defaultPollInterval = 5 * time.Second
	defaultRetryMax     = 2 * time.Second
	retryMin            = 50 * time.Millisecond
)

// DB is a PostgreSQL database opened by [Open]. It is the registry's
// [registry.Store], [registry.Notifier] and [registry.ArtifactStore], and
// its [jobs.Store]: one value, one pool, one Close.
//
// A DB is safe for concurrent use, and any number of DBs, in one process
// or in several, may share one database.
type DB struct {
	pool   *pgxpool.Pool
	cfg    Config
	secret string // the password of cfg.URL, kept out of error messages
	log    *slog.Logger

	closed atomic.Bool

	lmu    sync.Mutex // guards lis
	lis    *listener  // nil until the first Subscribe
	ctx    context.Context
	cancel context.CancelFunc

	// listenHook, when set (by tests), is called by the listener after it
	// connects and before it listens.
	listenHook func()
}

var (
	_ registry.Store         = (*DB)(nil)
	_ registry.Notifier      = (*DB)(nil)
	_ registry.ArtifactStore = (*DB)(nil)
	_ jobs.Store             = (*DB)(nil)
)

// Open connects to the database cfg.URL names, brings its schema up to
// this build's (the embedded migrations, in order) and, in a database that holds no records
// yet, stores the built-in DEFAULT group and queue. Several processes may
// open one database at once; one of them migrates it, the others wait for
// it. Open fails, and leaves the database as it was, when the schema is
// newer than this build knows.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if cfg.URL == "" {
		return nil, errors.New("postgres: Config.URL is required")
	}
	if cfg.MaxConns < 0 || cfg.PollInterval < 0 || cfg.RetryMax < 0 {
		return nil, errors.New("postgres: Config.MaxConns, PollInterval and RetryMax must not be negative")
	}
	secret := urlPassword(cfg.URL)
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, redact(fmt.Errorf("postgres: parse the connection string: %w", err), secret)
	}
	if p := pc.ConnConfig.Password; p != "" {
		secret = p
	}
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	}
	// A connection is checked before each use, not only after a second
	// idle as the driver does by default: after the server restarts, the
	// pool's connections are all dead, and the first write would fail on
	// one. A round trip on a management call is cheap; scoring makes none.
	pc.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return true }
	if cfg.PollInterval == 0 {
		cfg.PollInterval = defaultPollInterval
	}
	if cfg.RetryMax == 0 {
		cfg.RetryMax = defaultRetryMax
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, redact(fmt.Errorf("postgres: %w", err), secret)
	}
	db := &DB{pool: pool, cfg: cfg, secret: secret, log: log}
	db.ctx, db.cancel = context.WithCancel(context.Background())
	if err := db.migrate(ctx); err != nil {
		db.cancel()
		pool.Close()
		return nil, db.wrap(err)
	}
	return db, nil
}

// Close ends the subscription's listener and closes the pool, waiting for
// connections in use to be released. Later calls fail with
// [registry.ErrClosed].
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return nil
	}
	db.cancel()
	db.lmu.Lock()
	lis := db.lis
	db.lmu.Unlock()
	if lis != nil {
		lis.wait()
	}
	db.pool.Close()
	return nil
}

// now is the clock of the records Open stores.
func (db *DB) now() time.Time {
	if db.cfg.Now != nil {
		return db.cfg.Now().UTC()
	}
	return time.Now().UTC()
}

// commitOn commits on base in one transaction: move advances the state's
// sequence number from base, changing no row when another writer committed
// first ([registry.ErrStale]); write, when set, writes what the commit
// changes; and the state's channel is notified of base+1, which the
// listeners hear only if the transaction commits.
func (db *DB) commitOn(ctx context.Context, base uint64, channel string, move move, write func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := move(ctx, tx, base)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("postgres: commit on base %d of %s: %w", base, channel, registry.ErrStale)
		}
		if write != nil {
			if err := write(tx); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, "SELECT pg_notify($1, $2)", channel, fmt.Sprint(base+1))
		return err
	})
}

// move advances a state's sequence number from base in tx.
type move func(ctx context.Context, tx pgx.Tx, base uint64) (pgconn.CommandTag, error)

// advanceSeq is the move of a state whose sequence number is the one row
// of table.
func advanceSeq(table string) move {
	return func(ctx context.Context, tx pgx.Tx, base uint64) (pgconn.CommandTag, error) {
		return tx.Exec(ctx, "UPDATE "+table+" SET seq = seq + 1 WHERE seq = $1", int64(base))
	}
}

// begin checks a call's context and that the DB is open.
func (db *DB) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if db.closed.Load() {
		return registry.ErrClosed
	}
	return nil
}

// wrap turns an error of the driver into one of this package: ErrClosed
// when the DB was closed meanwhile, the password removed from its text.
func (db *DB) wrap(err error) error {
	if err == nil {
		return nil
	}
	if db.closed.Load() && !errors.Is(err, registry.ErrClosed) {
		return fmt.Errorf("%w: %w", registry.ErrClosed, redact(err, db.secret))
	}
	if unreachable(err) && !errors.Is(err, registry.ErrStoreUnavailable) {
		return &unavailableError{redact(err, db.secret)}
	}
	return redact(err, db.secret)
}

// redactedError is an error whose text has a secret replaced; errors.Is
// and errors.As still see the error it wraps.
type redactedError struct {
	err    error
	secret string
}

func (e *redactedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.secret, "xxxxx")
}

func (e *redactedError) Unwrap() error { return e.err }

// redact returns err with secret removed from its text.
func redact(err error, secret string) error {
	if err == nil || secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return &redactedError{err: err, secret: secret}
}

// dsnPassword finds a password in keyword/value pairs: password=value or
// password='quoted value'.
var dsnPassword = regexp.MustCompile(`(?:^|\s)password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)`)

// urlPassword returns the password a connection string holds, as far as
// it can be read without the driver, so that an error about a string the
// driver cannot parse does not repeat it either.
func urlPassword(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			return p
		}
	}
	if m := dsnPassword.FindStringSubmatch(s); m != nil {
		p := strings.Trim(m[1], "'")
		return strings.ReplaceAll(p, `\'`, `'`)
	}
	// A URL the parser refused: take what lies between user: and @.
	if rest, ok := strings.CutPrefix(s, "postgres://"); ok || strings.HasPrefix(s, "postgresql://") {
		if !ok {
			rest = strings.TrimPrefix(s, "postgresql://")
		}
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, p, ok := strings.Cut(rest[:at], ":"); ok {
				return p
			}
		}
	}
	return ""
}
