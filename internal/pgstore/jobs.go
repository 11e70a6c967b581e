package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
)

// CreateJob implements [jobs.Store]: an INSERT under the primary
// key, so that of two writers creating one ID, one fails with
// [registry.ErrExists].
func (db *DB) CreateJob(ctx context.Context, j jobs.Job) error {
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

// UpdateJob implements [jobs.Store]: UPDATE … WHERE id = j.ID AND
// the stored revision is base, with the result in the same row. The
// revision is read from body, the job's JSON form, where a job written
// before revisions existed has none (0).
func (db *DB) UpdateJob(ctx context.Context, base uint64, j jobs.Job, result []byte) error {
	if err := db.check(ctx); err != nil {
		return err
	}
	body, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("postgres: encode job %q: %w", j.ID, err)
	}
	tag, err := db.pool.Exec(ctx, `UPDATE jobs SET state = $3, owner = $4, queue = $5, created_s = $6, created_ns = $7,
			body = $8, result = coalesce($9, result)
		WHERE id = $1 AND coalesce((body->>'revision')::numeric, 0) = $2`,
		j.ID, base, string(j.State), j.Owner, j.Queue, j.CreatedAt.Unix(), j.CreatedAt.Nanosecond(), string(body), result)
	if err != nil {
		return db.wrap(fmt.Errorf("postgres: update job %q: %w", j.ID, err))
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var rev uint64
	err = db.pool.QueryRow(ctx, "SELECT coalesce((body->>'revision')::numeric, 0) FROM jobs WHERE id = $1", j.ID).Scan(&rev)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("postgres: job %q does not exist: %w", j.ID, registry.ErrNotFound)
	case err != nil:
		return db.wrap(fmt.Errorf("postgres: update job %q: %w", j.ID, err))
	}
	return fmt.Errorf("postgres: job %q is at revision %d, not %d: %w", j.ID, rev, base, registry.ErrStale)
}

// Job implements [jobs.Store].
func (db *DB) Job(ctx context.Context, id string) (jobs.Job, error) {
	if err := db.check(ctx); err != nil {
		return jobs.Job{}, err
	}
	var body []byte
	err := db.pool.QueryRow(ctx, "SELECT body FROM jobs WHERE id = $1", id).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return jobs.Job{}, fmt.Errorf("postgres: job %q does not exist: %w", id, registry.ErrNotFound)
	}
	if err != nil {
		return jobs.Job{}, db.wrap(fmt.Errorf("postgres: read job %q: %w", id, err))
	}
	var j jobs.Job
	if err := json.Unmarshal(body, &j); err != nil {
		return jobs.Job{}, fmt.Errorf("postgres: decode job %q: %w", id, err)
	}
	return j, nil
}

// Jobs implements [jobs.Store]: the count and the page are read in
// one snapshot.
func (db *DB) Jobs(ctx context.Context, f jobs.Filter) ([]jobs.Job, int, error) {
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
	if t := f.CreatedFrom; !t.IsZero() {
		args = append(args, t.Unix(), t.Nanosecond())
		conds = append(conds, fmt.Sprintf("(created_s, created_ns) >= ($%d, $%d)", len(args)-1, len(args)))
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
		list  []jobs.Job
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
		list, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (jobs.Job, error) {
			var body []byte
			var j jobs.Job
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
	return list, total, nil
}

// JobResult implements [jobs.Store].
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

// DeleteJobs implements [jobs.Store].
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
