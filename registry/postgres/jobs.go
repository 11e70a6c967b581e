package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/scorehub/scorehub/registry"
)

// CreateJob implements [registry.JobStore]: an INSERT under the primary
// key, so that of two writers creating one ID, one fails with
// [registry.ErrExists].
func (db *DB) CreateJob(ctx context.Context, j registry.Job) error {
	if err := db.check(ctx); err != nil {
		return err
	}
	body, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("postgres: encode job %q: %w", j.ID, err)
	}
	tag, err := db.pool.Exec(ctx, `INSERT INTO jobs (id, state, owner, queue, created_s, created_ns, body)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
		j.ID, string(j.State), j.Owner, j.Queue, j.CreatedAt.Unix(), j.CreatedAt.Nanosecond(), string(body))
	if err != nil {
		return db.wrap(fmt.Errorf("postgres: create job %q: %w", j.ID, err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: job %q already exists: %w", j.ID, registry.ErrExists)
	}
	return nil
}

// UpdateJob implements [registry.JobStore]: UPDATE … WHERE id = j.ID AND
// state = from, with the result in the same row.
func (db *DB) UpdateJob(ctx context.Context, from registry.JobState, j registry.Job, result []byte) error {
	if err := db.check(ctx); err != nil {
		return err
	}
	body, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("postgres: encode job %q: %w", j.ID, err)
	}
	tag, err := db.pool.Exec(ctx, `UPDATE jobs SET state = $3, owner = $4, queue = $5, created_s = $6, created_ns = $7,
			body = $8, result = coalesce($9, result)
		WHERE id = $1 AND state = $2`,
		j.ID, string(from), string(j.State), j.Owner, j.Queue, j.CreatedAt.Unix(), j.CreatedAt.Nanosecond(), string(body), result)
	if err != nil {
		return db.wrap(fmt.Errorf("postgres: update job %q: %w", j.ID, err))
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var state string
	err = db.pool.QueryRow(ctx, "SELECT state FROM jobs WHERE id = $1", j.ID).Scan(&state)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("postgres: job %q does not exist: %w", j.ID, registry.ErrNotFound)
	case err != nil:
		return db.wrap(fmt.Errorf("postgres: update job %q: %w", j.ID, err))
	}
	return fmt.Errorf("postgres: job %q is %s, not %s: %w", j.ID, state, from, registry.ErrStale)
}

// Job implements [registry.JobStore].
func (db *DB) Job(ctx context.Context, id string) (registry.Job, error) {
	if err := db.check(ctx); err != nil {
		return registry.Job{}, err
	}
	var body []byte
	err := db.pool.QueryRow(ctx, "SELECT body FROM jobs WHERE id = $1", id).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return registry.Job{}, fmt.Errorf("postgres: job %q does not exist: %w", id, registry.ErrNotFound)
	}
	if err != nil {
		return registry.Job{}, db.wrap(fmt.Errorf("postgres: read job %q: %w", id, err))
	}
	var j registry.Job
	if err := json.Unmarshal(body, &j); err != nil {
		return registry.Job{}, fmt.Errorf("postgres: decode job %q: %w", id, err)
	}
	return j, nil
}

// Jobs implements [registry.JobStore]: the count and the page are read in
// one snapshot.
func (db *DB) Jobs(ctx context.Context, f registry.JobFilter) ([]registry.Job, int, error) {
	if err := db.check(ctx); err != nil {
		return nil, 0, err
	}
	var conds []string
	var args []any
	for _, c := range []struct{ col, val string }{{"state", string(f.State)}, {"queue", f.Queue}, {"owner", f.Owner}} {
		if c.val != "" {
			args = append(args, c.val)
			conds = append(conds, fmt.Sprintf("%s = $%d", c.col, len(args)))
		}
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	page := fmt.Sprintf(" OFFSET %d", max(f.Offset, 0))
	if f.Limit > 0 {
		page += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	var (
		jobs  []registry.Job
		total int
	)
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM jobs"+where, args...).Scan(&total); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT body FROM jobs"+where+
			" ORDER BY created_s DESC, created_ns DESC, id DESC"+page, args...)
		if err != nil {
			return err
		}
		jobs, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (registry.Job, error) {
			var body []byte
			var j registry.Job
			if err := row.Scan(&body); err != nil {
				return j, err
			}
			if err := json.Unmarshal(body, &j); err != nil {
				return j, fmt.Errorf("decode job: %w", err)
			}
			return j, nil
		})
		return err
	})
	if err != nil {
		return nil, 0, db.wrap(fmt.Errorf("postgres: list jobs: %w", err))
	}
	return jobs, total, nil
}

// JobResult implements [registry.JobStore].
func (db *DB) JobResult(ctx context.Context, id string) ([]byte, error) {
	if err := db.check(ctx); err != nil {
		return nil, err
	}
	var result []byte
	err := db.pool.QueryRow(ctx, "SELECT result FROM jobs WHERE id = $1", id).Scan(&result)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && result == nil) {
		return nil, fmt.Errorf("postgres: job %q has no stored result: %w", id, registry.ErrNotFound)
	}
	if err != nil {
		return nil, db.wrap(fmt.Errorf("postgres: read the result of job %q: %w", id, err))
	}
	return result, nil
}

// DeleteJobs implements [registry.JobStore].
func (db *DB) DeleteJobs(ctx context.Context, ids []string) (int, error) {
	if err := db.check(ctx); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	tag, err := db.pool.Exec(ctx, "DELETE FROM jobs WHERE id = ANY($1)", ids)
	if err != nil {
		return 0, db.wrap(fmt.Errorf("postgres: delete jobs: %w", err))
	}
	return int(tag.RowsAffected()), nil
}
