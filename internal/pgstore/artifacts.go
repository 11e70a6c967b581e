package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/scorehub/scorehub/registry"
)

// PutArtifact implements [registry.ArtifactStore]: data is stored as one
// bytea value, committed before PutArtifact returns.
func (db *DB) PutArtifact(ctx context.Context, sum string, data []byte) error {
	if err := db.check(ctx); err != nil {
		return err
	}
	h := sha256.Sum256(data)
	if got := hex.EncodeToString(h[:]); got != sum {
		return fmt.Errorf("postgres: artifact named %q has SHA-256 %s", sum, got)
	}
	if data == nil {
		data = []byte{} // an empty artifact, not a missing one
	}
	_, err := db.pool.Exec(ctx, "INSERT INTO artifacts (sha256, data) VALUES ($1, $2) ON CONFLICT DO NOTHING", sum, data)
	if err != nil {
		return db.wrap(fmt.Errorf("postgres: store artifact %s: %w", sum, err))
	}
	return nil
}

// Artifact implements [registry.ArtifactStore].
func (db *DB) Artifact(ctx context.Context, sum string) ([]byte, error) {
	if err := db.check(ctx); err != nil {
		return nil, err
	}
	var data []byte
	err := db.pool.QueryRow(ctx, "SELECT data FROM artifacts WHERE sha256 = $1", sum).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: no model artifact has SHA-256 %s: %w", sum, registry.ErrNotFound)
	}
	if err != nil {
		return nil, db.wrap(fmt.Errorf("postgres: read artifact %s: %w", sum, err))
	}
	return data, nil
}

// DeleteArtifact implements [registry.ArtifactStore]. The database keeps
// an artifact a stored version references: the DELETE skips it, and a
// version committed while the DELETE runs makes the foreign key refuse it.
func (db *DB) DeleteArtifact(ctx context.Context, sum string) error {
	if err := db.check(ctx); err != nil {
		return err
	}
	_, err := db.pool.Exec(ctx, `DELETE FROM artifacts WHERE sha256 = $1
		AND NOT EXISTS (SELECT 1 FROM model_versions WHERE sha256 = $1)`, sum)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23503" {
		return nil // referenced after all
	}
	if err != nil {
		return db.wrap(fmt.Errorf("postgres: delete artifact %s: %w", sum, err))
	}
	return nil
}
