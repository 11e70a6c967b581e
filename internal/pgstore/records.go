package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/scorehub/scorehub/registry"
)

// recordsChannel is the channel every commit of records notifies, with the
// committed Seq as payload.
const recordsChannel = "scorehub_records"

// Load implements [registry.Store]: it reads every record in one snapshot
// of the database.
func (db *DB) Load(ctx context.Context) (*registry.State, error) {
	if err := db.check(ctx); err != nil {
		return nil, err
	}
	var st *registry.State
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var seq int64
		if err := tx.QueryRow(ctx, "SELECT seq FROM record_seq").Scan(&seq); err != nil {
			return fmt.Errorf("read seq: %w", err)
		}
		groups, err := readBodies[registry.Group](ctx, tx, "SELECT body FROM record_groups")
		if err != nil {
			return err
		}
		deployments, err := readBodies[registry.Deployment](ctx, tx, "SELECT body FROM record_deployments")
		if err != nil {
			return err
		}
		queues, err := readBodies[registry.Queue](ctx, tx, "SELECT body FROM record_queues")
		if err != nil {
			return err
		}
		models, err := readBodies[registry.Model](ctx, tx, "SELECT body FROM record_models")
		if err != nil {
			return err
		}
		st, err = registry.BuildStateWithModels(uint64(seq), groups, deployments, queues, models)
		return err
	})
	if err != nil {
		return nil, db.wrap(fmt.Errorf("postgres: load records: %w", err))
	}
	return st, nil
}

// readBodies decodes the JSON column of every row query returns.
func readBodies[T any](ctx context.Context, tx pgx.Tx, query string) ([]T, error) {
	rows, err := tx.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (T, error) {
		var b []byte
		var v T
		if err := row.Scan(&b); err != nil {
			return v, err
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return v, fmt.Errorf("decode %T: %w", v, err)
		}
		return v, nil
	})
}

// Commit implements [registry.Store]. One transaction advances the
// sequence row from base (none does when another writer committed first:
// [registry.ErrStale]), writes the one record next's change names and
// notifies the other DBs on the database.
func (db *DB) Commit(ctx context.Context, base uint64, next *registry.State) error {
	if err := db.check(ctx); err != nil {
		return err
	}
	if next == nil || next.Seq() != base+1 {
		return fmt.Errorf("postgres: commit of seq %d on base %d: %w", seqOf(next), base, registry.ErrStale)
	}
	change, ok := next.Change()
	if !ok {
		return errors.New("postgres: a commit that changes no record")
	}
	err := db.commitOn(ctx, base, recordsChannel, advanceSeq("record_seq"), func(tx pgx.Tx) error {
		return writeChange(ctx, tx, change)
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23503" && change.Model != nil {
		// A version names an artifact that is not stored: another writer
		// deleted it after this one stored it.
		return fmt.Errorf("postgres: model %q references an artifact not stored: %w", change.Model.Name, registry.ErrStale)
	}
	if err != nil && !errors.Is(err, registry.ErrStale) {
		return db.wrap(fmt.Errorf("postgres: commit: %w", err))
	}
	return err
}

func seqOf(st *registry.State) uint64 {
	if st == nil {
		return 0
	}
	return st.Seq()
}

// writeChange stores or removes the one record of ch.
func writeChange(ctx context.Context, tx pgx.Tx, ch registry.Change) error {
	switch {
	case ch.Group != nil && ch.Delete:
		return exec(ctx, tx, "DELETE FROM record_groups WHERE name = $1", ch.Group.Name)
	case ch.Group != nil:
		return putGroup(ctx, tx, ch.Group)
	case ch.Queue != nil && ch.Delete:
		return exec(ctx, tx, "DELETE FROM record_queues WHERE name = $1", ch.Queue.Name)
	case ch.Queue != nil:
		return putQueue(ctx, tx, ch.Queue)
	case ch.Deployment != nil && ch.Delete:
		return exec(ctx, tx, "DELETE FROM record_deployments WHERE grp = $1 AND path = $2", ch.Deployment.Group, ch.Deployment.Path)
	case ch.Deployment != nil:
		body, err := json.Marshal(ch.Deployment)
		if err != nil {
			return err
		}
		return exec(ctx, tx, `INSERT INTO record_deployments (grp, path, body) VALUES ($1, $2, $3)
			ON CONFLICT (grp, path) DO UPDATE SET body = excluded.body`, ch.Deployment.Group, ch.Deployment.Path, string(body))
	case ch.Model != nil && ch.Delete:
		// Its versions go with it (ON DELETE CASCADE).
		return exec(ctx, tx, "DELETE FROM record_models WHERE name = $1", ch.Model.Name)
	case ch.Model != nil:
		return putModel(ctx, tx, ch.Model)
	}
	return errors.New("postgres: a commit that changes no record")
}

func exec(ctx context.Context, tx pgx.Tx, sql string, args ...any) error {
	_, err := tx.Exec(ctx, sql, args...)
	return err
}

// putBody stores v's JSON as the body of the row of name, inserting or
// replacing it with upsert, which takes the name and the body.
func putBody(ctx context.Context, tx pgx.Tx, upsert, name string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return exec(ctx, tx, upsert, name, string(body))
}

func putGroup(ctx context.Context, tx pgx.Tx, g *registry.Group) error {
	return putBody(ctx, tx, `INSERT INTO record_groups (name, body) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET body = excluded.body`, g.Name, g)
}

func putQueue(ctx context.Context, tx pgx.Tx, q *registry.Queue) error {
	return putBody(ctx, tx, `INSERT INTO record_queues (name, body) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET body = excluded.body`, q.Name, q)
}

// putModel stores m and lists its versions' artifacts, which the foreign
// key of model_versions requires to be stored.
func putModel(ctx context.Context, tx pgx.Tx, m *registry.Model) error {
	if err := putBody(ctx, tx, `INSERT INTO record_models (name, body) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET body = excluded.body`, m.Name, m); err != nil {
		return err
	}
	if err := exec(ctx, tx, "DELETE FROM model_versions WHERE model = $1", m.Name); err != nil {
		return err
	}
	if len(m.Versions) == 0 {
		return nil
	}
	versions := make([]int32, len(m.Versions))
	sums := make([]string, len(m.Versions))
	for i, v := range m.Versions {
		versions[i], sums[i] = int32(v.Version), v.SHA256
	}
	return exec(ctx, tx, `INSERT INTO model_versions (model, version, sha256)
		SELECT $1, v, s FROM unnest($2::integer[], $3::text[]) AS t(v, s)`, m.Name, versions, sums)
}
