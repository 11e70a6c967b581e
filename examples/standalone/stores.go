package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/postgres"
)

// stores are where the server keeps the records, jobs and model files:
// files in the data directory (the default), or one PostgreSQL database
// that several replicas share (-store postgres://…).
type stores struct {
	records registry.Store // with the model files: a registry.ArtifactStore
	jobs    registry.JobStore
	// db is the database of -store, nil for files: it is records and jobs
	// both, one pool and one Close.
	db *postgres.DB
}

// openStores opens what -store names. An error never holds the
// connection string's password (package postgres removes it).
func openStores(ctx context.Context, cfg config, logger *slog.Logger) (_ *stores, err error) {
	if cfg.Store != "" {
		db, err := postgres.Open(ctx, postgres.Config{URL: cfg.Store, Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("open -store: %w", err)
		}
		return &stores{records: db, jobs: db, db: db}, nil
	}
	records, err := registry.OpenFileStore(cfg.DataDir, registry.StoreOptions{})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			records.Close()
		}
	}()
	// Jobs are kept beside the registry; a restart ends those it
	// interrupted as ERROR.
	jobs, err := registry.OpenFileJobStore(filepath.Join(cfg.DataDir, "jobs"), registry.StoreOptions{})
	if err != nil {
		return nil, err
	}
	return &stores{records: records, jobs: jobs}, nil
}

// Close closes the stores.
func (s *stores) Close() error {
	if s.db != nil {
		return s.db.Close()
	}
	return errors.Join(s.jobs.Close(), s.records.Close())
}

// jobLease is the JobsConfig.Lease of cfg: none for a store of this
// process alone.
func jobLease(cfg config) time.Duration {
	if cfg.Replica == "" {
		return 0
	}
	return cfg.JobLease
}
