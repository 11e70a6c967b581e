package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/process"
)

const (
	// outcomeChunk bounds the predictions one statement of Append
	// inserts and one transaction of a prune deletes, so that neither
	// holds many locks or much memory for long.
	outcomeChunk = 1000
	// deadlockRetries is how often a write that PostgreSQL chose as the
	// victim of a deadlock (two replicas writing the same rows in
	// different orders) is tried again.
	deadlockRetries = 3
)

// OutcomeStore keeps the prediction log of package registry/outcomes in a
// DB's database: an [outcomes.Store] that every replica on the database
// shares. Predictions are the rows of outcome_predictions, one per
// endpoint, row ID and model (the first appended kept, by the unique
// key); the outcome of a row is one row of outcome_actuals, the first fed
// back kept, joined with the row's predictions when read. Get it with
// [DB.Outcomes]; it is safe for concurrent use.
//
// Feedback is one transaction: it locks the predictions of the rows it
// names (FOR KEY SHARE), so that a prune running meanwhile deletes them
// either before, and the rows are unknown, or after, with their outcome,
// and inserts the outcomes of the rows it found ... ON CONFLICT DO
// NOTHING, so that of two replicas feeding one row back, one records it
// and the other counts a duplicate. A batch is recorded whole or, on an
// error, not at all; PostgreSQL refuses text holding a NUL byte, which
// fails the batch.
//
// The bounds are applied in bulk, at most once a [outcomes.PruneInterval]
// of the store's clock, after an Append: predictions older than the
// retention and the earliest appended beyond MaxRecords are deleted in
// transactions of a thousand, with the outcomes of the rows they were the
// last predictions of. Every replica prunes by its own options and clock.
// A prune that fails is logged to the DB's Logger and tried again on the
// next Append. PostgreSQL keeps times to the microsecond.
type OutcomeStore struct {
	boundedLog
	opts outcomes.Options
}

var _ outcomes.Store = (*OutcomeStore)(nil)

// Outcomes returns the prediction log on db's database, bounded by opts.
// Closing it does not close db; closing db closes it.
func (db *DB) Outcomes(opts outcomes.Options) *OutcomeStore {
	return &OutcomeStore{boundedLog: boundedLog{db: db, closedErr: outcomes.ErrClosed, due: true}, opts: opts.WithDefaults()}
}

const insertPrediction = `INSERT INTO outcome_predictions
		(grp, path, alias, row_id, model, role, label, classes, confidences, value, at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
	ON CONFLICT (grp, path, alias, row_id, model) DO NOTHING`

// Append implements [outcomes.Store]: the predictions are inserted in
// batches of a thousand, each one round trip; a batch that fails stops
// Append, and those before it are kept.
func (s *OutcomeStore) Append(ctx context.Context, ps []outcomes.Prediction) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	for start := 0; start < len(ps); start += outcomeChunk {
		chunk := ps[start:min(start+outcomeChunk, len(ps))]
		err := retryDeadlock(ctx, func() error {
			b := &pgx.Batch{}
			for _, p := range chunk {
				b.Queue(insertPrediction, p.Endpoint.Group, p.Endpoint.Path, p.Endpoint.Alias, p.RowID, p.Model, p.Role, p.Label,
					emptyNil(p.Classes), emptyNil(p.Confidences), p.Value, p.At)
			}
			return s.db.pool.SendBatch(ctx, b).Close()
		})
		if err != nil {
			return s.err(fmt.Errorf("postgres: append predictions: %w", err))
		}
	}
	if len(ps) > 0 {
		s.pruneIfDue(ctx)
	}
	return nil
}

// emptyNil is s, or nil (NULL) when s is empty.
func emptyNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// retryDeadlock calls fn until it does not fail as the victim of a
// deadlock, at most deadlockRetries times more. fn's writes are
// idempotent or rolled back.
func retryDeadlock(ctx context.Context, fn func() error) error {
	for i := 0; ; i++ {
		err := fn()
		var pe *pgconn.PgError
		if i == deadlockRetries || !errors.As(err, &pe) || pe.Code != "40P01" || ctx.Err() != nil {
			return err
		}
	}
}

// Feedback implements [outcomes.Store], in one transaction.
func (s *OutcomeStore) Feedback(ctx context.Context, endpoint process.EndpointRef, outs []outcomes.Outcome, at time.Time) (outcomes.Applied, error) {
	if err := s.check(ctx); err != nil {
		return outcomes.Applied{}, err
	}
	if len(outs) == 0 {
		return outcomes.Applied{}, nil
	}
	ids := make([]string, 0, len(outs))
	seen := map[string]bool{}
	for _, o := range outs {
		if !seen[o.RowID] {
			seen[o.RowID] = true
			ids = append(ids, o.RowID)
		}
	}
	var known, recorded map[string]bool
	err := retryDeadlock(ctx, func() error {
		return pgx.BeginFunc(ctx, s.db.pool, func(tx pgx.Tx) error {
			var err error
			known, err = rowIDs(ctx, tx, `SELECT row_id FROM outcome_predictions
				WHERE grp = $1 AND path = $2 AND alias = $3 AND row_id = ANY($4) FOR KEY SHARE`,
				endpoint.Group, endpoint.Path, endpoint.Alias, ids)
			if err != nil {
				return err
			}
			// The first outcome of each row the log holds, in batch
			// order, which the outcomes' ids keep.
			var rid, label []string
			var isLabel []bool
			var value []float64
			taken := map[string]bool{}
			for _, o := range outs {
				if known[o.RowID] && !taken[o.RowID] {
					taken[o.RowID] = true
					rid, isLabel, label, value = append(rid, o.RowID), append(isLabel, o.IsLabel), append(label, o.Label), append(value, o.Value)
				}
			}
			if len(rid) == 0 {
				recorded = nil
				return nil
			}
			recorded, err = rowIDs(ctx, tx, `INSERT INTO outcome_actuals (grp, path, alias, row_id, is_label, label, value, fed_at)
				SELECT $1, $2, $3, u.row_id, u.is_label, u.label, u.value, $8
				FROM unnest($4::text[], $5::boolean[], $6::text[], $7::double precision[]) WITH ORDINALITY AS u (row_id, is_label, label, value, ord)
				ORDER BY u.ord
				ON CONFLICT DO NOTHING
				RETURNING row_id`,
				endpoint.Group, endpoint.Path, endpoint.Alias, rid, isLabel, label, value, at)
			return err
		})
	})
	if err != nil {
		return outcomes.Applied{}, s.err(fmt.Errorf("postgres: feedback of %d outcomes: %w", len(outs), err))
	}
	var a outcomes.Applied
	counted, listed := map[string]bool{}, map[string]bool{}
	for _, o := range outs {
		switch {
		case !known[o.RowID]:
			a.Unknown++
			if len(a.UnknownIDs) < outcomes.MaxListedUnknown && !listed[o.RowID] {
				listed[o.RowID] = true
				a.UnknownIDs = append(a.UnknownIDs, o.RowID)
			}
		case recorded[o.RowID] && !counted[o.RowID]:
			counted[o.RowID] = true
			a.Matched++
		default:
			a.Duplicates++
		}
	}
	return a, nil
}

// rowIDs runs query in tx and returns the set of the row IDs it returns.
func rowIDs(ctx context.Context, tx pgx.Tx, query string, args ...any) (map[string]bool, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set, nil
}

// Joined implements [outcomes.Store], in one statement and so one
// snapshot.
func (s *OutcomeStore) Joined(ctx context.Context, endpoint process.EndpointRef, since time.Time) ([]outcomes.Joined, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	rows, err := s.db.pool.Query(ctx, `SELECT p.row_id, p.model, p.role, p.label, p.classes, p.confidences, p.value, p.at,
			a.is_label, a.label, a.value, a.fed_at
		FROM outcome_actuals a
		JOIN outcome_predictions p ON p.grp = a.grp AND p.path = a.path AND p.alias = a.alias AND p.row_id = a.row_id
		WHERE a.grp = $1 AND a.path = $2 AND a.alias = $3 AND a.fed_at >= $4
		ORDER BY a.fed_at, a.id, p.id`,
		endpoint.Group, endpoint.Path, endpoint.Alias, since)
	if err != nil {
		return nil, s.err(fmt.Errorf("postgres: read joined predictions: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (outcomes.Joined, error) {
		j := outcomes.Joined{Prediction: outcomes.Prediction{Endpoint: endpoint}}
		err := row.Scan(&j.RowID, &j.Model, &j.Role, &j.Label, &j.Classes, &j.Confidences, &j.Value, &j.At,
			&j.Actual.IsLabel, &j.Actual.Label, &j.Actual.Value, &j.FedAt)
		j.Actual.RowID = j.RowID
		j.At, j.FedAt = j.At.UTC(), j.FedAt.UTC()
		return j, err
	})
	if err != nil {
		return nil, s.err(fmt.Errorf("postgres: read joined predictions: %w", err))
	}
	return out, nil
}

// Pending implements [outcomes.Store].
func (s *OutcomeStore) Pending(ctx context.Context, endpoint process.EndpointRef) (int, error) {
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	var n int
	err := s.db.pool.QueryRow(ctx, `SELECT count(DISTINCT p.row_id) FROM outcome_predictions p
		WHERE p.grp = $1 AND p.path = $2 AND p.alias = $3 AND NOT EXISTS (
			SELECT 1 FROM outcome_actuals a
			WHERE a.grp = p.grp AND a.path = p.path AND a.alias = p.alias AND a.row_id = p.row_id)`,
		endpoint.Group, endpoint.Path, endpoint.Alias).Scan(&n)
	if err != nil {
		return 0, s.err(fmt.Errorf("postgres: count pending rows: %w", err))
	}
	return n, nil
}

// pruneIfDue applies the bounds when they are due (see
// [boundedLog.pruneIfDue]).
func (s *OutcomeStore) pruneIfDue(ctx context.Context) {
	s.boundedLog.pruneIfDue(ctx, s.opts.Now(), outcomes.PruneInterval, "prediction log", s.prune)
}

// prune deletes the predictions older than the retention at now, then the
// earliest appended beyond MaxRecords, with the outcomes of the rows they
// were the last predictions of. Predictions another transaction has
// locked (a Feedback naming their rows) are left to the next prune.
func (s *OutcomeStore) prune(ctx context.Context, now time.Time) error {
	for {
		n, err := s.pruneChunk(ctx, "SELECT id FROM outcome_predictions WHERE at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED",
			now.Add(-s.opts.Retention))
		if err != nil {
			return err
		}
		if n < outcomeChunk {
			break
		}
	}
	var bound int64
	err := s.db.pool.QueryRow(ctx, "SELECT id FROM outcome_predictions ORDER BY id DESC OFFSET $1 LIMIT 1", s.opts.MaxRecords).Scan(&bound)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("postgres: find the oldest prediction kept: %w", err)
	}
	for {
		n, err := s.pruneChunk(ctx, "SELECT id FROM outcome_predictions WHERE id <= $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED", bound)
		if err != nil {
			return err
		}
		if n < outcomeChunk {
			return nil
		}
	}
}

// pruneChunk deletes, in one transaction, the predictions whose ids the
// query sel (of arg and a limit) returns, and the outcomes of the rows
// left without predictions; it returns how many predictions it deleted.
// The outcomes are deleted by a second statement, which sees the first's
// deletions.
func (s *OutcomeStore) pruneChunk(ctx context.Context, sel string, arg any) (int, error) {
	var deleted int
	err := pgx.BeginFunc(ctx, s.db.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `WITH gone AS (
				DELETE FROM outcome_predictions WHERE id IN (`+sel+`)
				RETURNING grp, path, alias, row_id)
			SELECT grp, path, alias, row_id, count(*) FROM gone GROUP BY grp, path, alias, row_id`, arg, outcomeChunk)
		if err != nil {
			return err
		}
		var grp, path, alias, rid []string
		deleted = 0
		var g, p, a, r string
		var n int
		_, err = pgx.ForEachRow(rows, []any{&g, &p, &a, &r, &n}, func() error {
			grp, path, alias, rid = append(grp, g), append(path, p), append(alias, a), append(rid, r)
			deleted += n
			return nil
		})
		if err != nil || len(rid) == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM outcome_actuals a
			USING unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS g (grp, path, alias, row_id)
			WHERE a.grp = g.grp AND a.path = g.path AND a.alias = g.alias AND a.row_id = g.row_id
			AND NOT EXISTS (SELECT 1 FROM outcome_predictions p
				WHERE p.grp = a.grp AND p.path = a.path AND p.alias = a.alias AND p.row_id = a.row_id)`,
			grp, path, alias, rid)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: delete predictions past the bounds: %w", err)
	}
	return deleted, nil
}
