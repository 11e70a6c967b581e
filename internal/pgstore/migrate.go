package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/scorehub/scorehub/registry"
)

// migrationFiles are the schema's migrations, migrations/NNNN_name.sql,
// numbered from 1 without gaps; each runs once, in order, and is never
// changed once released: a change of schema is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one file of migrationFiles.
type migration struct {
	version int
	name    string
	sql     string
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// migrations returns the embedded migrations in order, checking that they
// are numbered 1, 2, … without gaps or repeats.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("postgres: migration file %q is not named NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: m[2], sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("postgres: migration %04d_%s where %04d was expected", m.version, m.name, i+1)
		}
	}
	return out, nil
}

// migrateLock is the key of the transaction-level advisory lock under which
// a DB migrates and initialises its database: two processes starting at
// once take turns, and the second finds the work done.
const migrateLock = 0x73636f7265687562 // "scorehub"

// migrate applies the migrations the database lacks and stores the
// built-in records if it holds none, in one transaction.
func (db *DB) migrate(ctx context.Context) error {
	all, err := migrations()
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrateLock)); err != nil {
			return fmt.Errorf("lock for migrations: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		var have int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&have); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if have > len(all) {
			return fmt.Errorf("the database's schema is at version %d, newer than this build's %d: run a newer build", have, len(all))
		}
		for _, m := range all[have:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
				return fmt.Errorf("record migration %04d: %w", m.version, err)
			}
		}
		return db.initRecords(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("postgres: prepare the database: %w", err)
	}
	return nil
}

// initRecords stores the built-in records of a new store, once: the
// sequence row marks a database that has them.
func (db *DB) initRecords(ctx context.Context, tx pgx.Tx) error {
	tag, err := tx.Exec(ctx, "INSERT INTO record_seq (seq) VALUES (0) ON CONFLICT DO NOTHING")
	if err != nil {
		return fmt.Errorf("initialise records: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return nil
	}
	st := registry.NewState(db.now())
	for _, g := range st.Groups() {
		if err := putGroup(ctx, tx, &g); err != nil {
			return err
		}
	}
	for _, q := range st.Queues() {
		if err := putQueue(ctx, tx, &q); err != nil {
			return err
		}
	}
	return nil
}
