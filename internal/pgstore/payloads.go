package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scorehub/scorehub/registry/payloads"
	"github.com/scorehub/scorehub/registry/process"
)

const (
	// payloadChunk bounds the records one round trip of Append inserts
	// and one statement of a prune deletes.
	payloadChunk = 1000
	// payloadsLock is the key of the transaction-level advisory lock
	// Append holds while it inserts.
	payloadsLock = 0x7061796c6f616473 // "payloads"
)

// PayloadStore keeps the sampled payload log of package registry/payloads
// in a DB's database: a [payloads.Store] that every replica on the
// database shares, one row of payload_records per record. Get it with
// [DB.Payloads]; it is safe for concurrent use.
//
// # Order
//
// A record's seq is the table's identity column. A sequence hands out
// numbers in the order transactions ask, not the order they commit, so
// Append holds a transaction-level advisory lock while it inserts: the
// Appends of every replica insert one at a time, each whole batch in one
// transaction, and commit in seq order. A reader paging by seq so never
// passes a record that commits later, and an export that pages to the
// end misses nothing appended before it began. Seqs ascend; a batch that
// failed leaves a gap. The lock is held for the insert only, a round trip
// per thousand records, and Append is called off the scoring path.
//
// # Bounds
//
// A record counts as the length of its JSON line as the file store
// writes it, the digits of its seq counted as Append expects them (a
// batch that failed meanwhile may make them a digit off), and each row
// holds the total of the bytes appended before it. The bounds are
// applied in bulk, at most once a [payloads.PruneInterval] of the store's
// clock, after an Append: the records older than the retention, then the
// oldest records while the rest hold more than MaxBytes (those that
// start before the newest's end less MaxBytes, found with one index
// look-up), are deleted a thousand a statement. Every replica
// prunes by its own options and clock; a prune that fails is logged to
// the DB's Logger and tried again on the next Append. Page filters by the
// retention itself, so it never returns a record older than it.
//
// A row is stored as json, which keeps its text as Append compacted it.
// PostgreSQL keeps times to the microsecond.
type PayloadStore struct {
	boundedLog
	opts payloads.Options
}

var _ payloads.Store = (*PayloadStore)(nil)

// Payloads returns the sampled payload log on db's database, bounded by
// opts. Closing it does not close db; closing db closes it.
func (db *DB) Payloads(opts payloads.Options) *PayloadStore {
	return &PayloadStore{boundedLog: boundedLog{db: db, closedErr: payloads.ErrClosed, due: true}, opts: opts.WithDefaults()}
}

const insertPayload = `INSERT INTO payload_records (grp, path, alias, model, at, row, bytes, start_bytes)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`

// Append implements [payloads.Store], in one transaction under the
// store's advisory lock: a batch is stored whole or, on an error, not at
// all.
func (s *PayloadStore) Append(ctx context.Context, rs []payloads.Record) error {
	lines, err := payloads.Prepare(rs, s.opts)
	if err != nil {
		return err
	}
	if err := s.check(ctx); err != nil {
		return err
	}
	if len(lines) == 0 {
		return nil
	}
	err = pgx.BeginFunc(ctx, s.db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(payloadsLock)); err != nil {
			return err
		}
		// The seq the next record is likely to get, for its size, and
		// where it starts: the end of the newest.
		var last, start int64
		err := tx.QueryRow(ctx, `SELECT (SELECT last_value FROM payload_records_seq_seq),
			COALESCE((SELECT start_bytes + bytes FROM payload_records ORDER BY seq DESC LIMIT 1), 0)`).Scan(&last, &start)
		if err != nil {
			return err
		}
		for from := 0; from < len(lines); from += payloadChunk {
			b := &pgx.Batch{}
			for i, l := range lines[from:min(from+payloadChunk, len(lines))] {
				size := l.Size(last + 1 + int64(from+i))
				r := l.Record
				b.Queue(insertPayload, r.Endpoint.Group, r.Endpoint.Path, r.Endpoint.Alias, r.Model, r.At, r.Row, size, start)
				start += size
			}
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return s.err(fmt.Errorf("postgres: append %d payload records: %w", len(lines), err))
	}
	s.pruneIfDue(ctx)
	return nil
}

// Page implements [payloads.Store], in one statement.
func (s *PayloadStore) Page(ctx context.Context, endpoint process.EndpointRef, after int64, limit int) ([]payloads.Record, bool, error) {
	if err := payloads.CheckLimit(limit); err != nil {
		return nil, false, err
	}
	if err := s.check(ctx); err != nil {
		return nil, false, err
	}
	cutoff := s.opts.Now().Add(-s.opts.Retention)
	rows, err := s.db.pool.Query(ctx, `SELECT seq, model, at, row FROM payload_records
		WHERE grp = $1 AND path = $2 AND alias = $3 AND seq > $4 AND at >= $5
		ORDER BY seq LIMIT $6`,
		endpoint.Group, endpoint.Path, endpoint.Alias, after, cutoff, limit+1)
	if err != nil {
		return nil, false, s.err(fmt.Errorf("postgres: read payload records: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (payloads.Record, error) {
		r := payloads.Record{Endpoint: endpoint}
		var data []byte
		err := row.Scan(&r.Seq, &r.Model, &r.At, &data)
		r.At, r.Row = r.At.UTC(), json.RawMessage(data)
		return r, err
	})
	if err != nil {
		return nil, false, s.err(fmt.Errorf("postgres: read payload records: %w", err))
	}
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

// pruneIfDue applies the bounds when they are due (see
// [boundedLog.pruneIfDue]).
func (s *PayloadStore) pruneIfDue(ctx context.Context) {
	s.boundedLog.pruneIfDue(ctx, s.opts.Now(), payloads.PruneInterval, "payload log", s.prune)
}

// prune deletes the records older than the retention at now, then the
// oldest while the others hold more than MaxBytes.
func (s *PayloadStore) prune(ctx context.Context, now time.Time) error {
	err := s.deleteChunks(ctx, "SELECT seq FROM payload_records WHERE at < $1 LIMIT $2", now.Add(-s.opts.Retention))
	if err != nil {
		return err
	}
	// A record and those after it hold at most the bytes appended from
	// its start to the newest's end: the records that start before the
	// newest's end less MaxBytes go. The starts ascend with seq, so
	// every record up to the last of them goes.
	var bound int64
	err = s.db.pool.QueryRow(ctx, `SELECT seq FROM payload_records
		WHERE start_bytes < (SELECT start_bytes + bytes FROM payload_records ORDER BY seq DESC LIMIT 1) - $1
		ORDER BY start_bytes DESC LIMIT 1`, s.opts.MaxBytes).Scan(&bound)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("postgres: find the oldest payload record kept: %w", err)
	}
	return s.deleteChunks(ctx, "SELECT seq FROM payload_records WHERE seq <= $1 ORDER BY seq LIMIT $2", bound)
}

// deleteChunks deletes the records whose seqs the query sel (of arg and a
// limit) returns, a chunk a statement, until it returns fewer than a
// chunk.
func (s *PayloadStore) deleteChunks(ctx context.Context, sel string, arg any) error {
	for {
		tag, err := s.db.pool.Exec(ctx, "DELETE FROM payload_records WHERE seq IN ("+sel+")", arg, payloadChunk)
		if err != nil {
			return fmt.Errorf("postgres: delete payload records past the bounds: %w", err)
		}
		if tag.RowsAffected() < payloadChunk {
			return nil
		}
	}
}
