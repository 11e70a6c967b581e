package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// Comparisons is where the replicas over a DB's database publish what
// their champions and challengers did (a [scoring.ComparisonStore]): a row
// per replica, endpoint and pair. Get it with [DB.Comparisons]; it is safe
// for concurrent use.
type Comparisons struct{ db *DB }

var _ scoring.ComparisonStore = (*Comparisons)(nil)

// Comparisons returns the comparison store of db's database. It lives as
// long as db.
func (db *DB) Comparisons() *Comparisons { return &Comparisons{db: db} }

// staleFigures is how old a replica's rows grow before any publication
// deletes them: the replica has long stopped.
const staleFigures = 24 * time.Hour

// Publish implements [scoring.ComparisonStore]: it replaces replica's
// rows with figures, in one transaction.
func (c *Comparisons) Publish(ctx context.Context, replica string, figures []scoring.EndpointComparison, at time.Time) error {
	if err := c.db.check(ctx); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, c.db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM challenger_figures WHERE replica = $1 OR updated_at < $2", replica, at.Add(-staleFigures)); err != nil {
			return err
		}
		for _, e := range figures {
			for _, f := range e.Comparisons {
				data, err := json.Marshal(f)
				if err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `INSERT INTO challenger_figures (replica, grp, path, alias, champion, challenger, mode, figures, updated_at)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
					replica, e.Endpoint.Group, e.Endpoint.Path, e.Endpoint.Alias, f.Champion, f.Challenger, f.Mode, data, at); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return c.db.wrap(fmt.Errorf("pgstore: publish the comparisons of replica %s: %w", replica, err))
	}
	return nil
}

// Collect implements [scoring.ComparisonStore].
func (c *Comparisons) Collect(ctx context.Context, endpoint process.EndpointRef, since time.Time) ([]scoring.Comparison, error) {
	if err := c.db.check(ctx); err != nil {
		return nil, err
	}
	rows, err := c.db.pool.Query(ctx, `SELECT figures FROM challenger_figures
		WHERE grp = $1 AND path = $2 AND alias = $3 AND updated_at >= $4`, endpoint.Group, endpoint.Path, endpoint.Alias, since)
	if err != nil {
		return nil, c.db.wrap(fmt.Errorf("pgstore: read the comparisons: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scoring.Comparison, error) {
		var data []byte
		var f scoring.Comparison
		if err := r.Scan(&data); err != nil {
			return f, err
		}
		return f, json.Unmarshal(data, &f)
	})
	if err != nil {
		return nil, c.db.wrap(fmt.Errorf("pgstore: read the comparisons: %w", err))
	}
	return out, nil
}

var _ scoring.DriftStore = (*Comparisons)(nil)

// PublishDrift implements [scoring.DriftStore]: it replaces replica's
// drift rows with figures, in one transaction.
func (c *Comparisons) PublishDrift(ctx context.Context, replica string, figures []scoring.SharedDrift, at time.Time) error {
	if err := c.db.check(ctx); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, c.db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM drift_figures WHERE replica = $1 OR updated_at < $2", replica, at.Add(-staleFigures)); err != nil {
			return err
		}
		for _, f := range figures {
			data, err := json.Marshal(f)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO drift_figures (replica, grp, path, alias, version, figures, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`,
				replica, f.Endpoint.Group, f.Endpoint.Path, f.Endpoint.Alias, f.Version, data, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return c.db.wrap(fmt.Errorf("pgstore: publish the drift figures of replica %s: %w", replica, err))
	}
	return nil
}

// CollectDrift implements [scoring.DriftStore].
func (c *Comparisons) CollectDrift(ctx context.Context, endpoint process.EndpointRef, since time.Time) ([]scoring.SharedDrift, error) {
	if err := c.db.check(ctx); err != nil {
		return nil, err
	}
	rows, err := c.db.pool.Query(ctx, `SELECT replica, figures FROM drift_figures
		WHERE grp = $1 AND path = $2 AND alias = $3 AND updated_at >= $4`, endpoint.Group, endpoint.Path, endpoint.Alias, since)
	if err != nil {
		return nil, c.db.wrap(fmt.Errorf("pgstore: read the drift figures: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scoring.SharedDrift, error) {
		var (
			replica string
			data    []byte
			f       scoring.SharedDrift
		)
		if err := r.Scan(&replica, &data); err != nil {
			return f, err
		}
		err := json.Unmarshal(data, &f)
		f.Replica = replica
		return f, err
	})
	if err != nil {
		return nil, c.db.wrap(fmt.Errorf("pgstore: read the drift figures: %w", err))
	}
	return out, nil
}
