package scorehub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/payloads"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// keyFile is where the data directory keeps the token signing keys.
const keyFile = "keys.json"

// stores are where the service keeps its state: in memory, files in the
// data directory, one PostgreSQL database that several replicas share, or
// the host's own.
type stores struct {
	records  registry.Store // with the model files: a registry.ArtifactStore
	jobs     jobs.Store
	accounts accounts.Store
	// outcomes keeps the predictions of rows with IDs and their outcomes.
	outcomes outcomes.Store
	// payloads is the payload log.
	payloads payloads.Store
	// comparisons is where replicas publish their comparisons; nil for a
	// store of this process alone.
	comparisons scoring.ComparisonStore
	// keys is the key store of a database or of the host; nil for memory
	// and files, whose key sets open themselves.
	keys tokens.KeyStore
	// close closes what the service opened; nil for the host's stores,
	// which the host closes.
	close func() error
}

// openStores opens the stores cfg names. An error never holds the
// connection string's password (package pgstore removes it).
func openStores(ctx context.Context, cfg Config, kind storeKind) (_ *stores, err error) {
	opts := registry.StoreOptions{Now: cfg.Now}
	logOpts := outcomes.Options{Now: cfg.Now}
	payloadOpts := payloads.Options{Now: cfg.Now}
	switch kind {
	case inHostStores:
		s := cfg.Stores
		st := &stores{records: s.Records, jobs: s.Jobs, accounts: s.Accounts, keys: s.Keys, outcomes: s.Outcomes, payloads: s.Payloads, comparisons: s.Comparisons}
		var closers []func() error
		if st.outcomes == nil {
			log := outcomes.NewMemStore(logOpts)
			st.outcomes, closers = log, append(closers, log.Close)
		}
		if st.payloads == nil {
			log := payloads.NewMemStore(payloadOpts)
			st.payloads, closers = log, append(closers, log.Close)
		}
		if closers != nil {
			st.close = closeAll(closers...)
		}
		return st, nil
	case inPostgres:
		db, err := pgstore.Open(ctx, pgstore.Config{URL: cfg.StoreURL, Logger: cfg.Logger})
		if err != nil {
			return nil, fmt.Errorf("scorehub: open Config.StoreURL: %w", err)
		}
		book, log, rows := db.Accounts(), db.Outcomes(logOpts), db.Payloads(payloadOpts)
		return &stores{records: db, jobs: db, accounts: book, keys: db.Keys(), outcomes: log, payloads: rows, comparisons: db.Comparisons(),
			close: closeAll(db.Close, book.Close, log.Close, rows.Close)}, nil
	case inMemory:
		records, jobs, book, log, rows := registry.NewMemStore(opts), jobs.NewMemStore(opts), accounts.NewMemoryStore(), outcomes.NewMemStore(logOpts), payloads.NewMemStore(payloadOpts)
		return &stores{records: records, jobs: jobs, accounts: book, outcomes: log, payloads: rows,
			close: closeAll(records.Close, jobs.Close, book.Close, log.Close, rows.Close)}, nil
	}
	var closers []func() error
	defer func() {
		if err != nil {
			closeAll(closers...)()
		}
	}()
	records, err := registry.OpenFileStore(cfg.DataDir, opts)
	if err != nil {
		return nil, err
	}
	closers = append(closers, records.Close)
	// Jobs are kept beside the records; a restart ends those it
	// interrupted as ERROR.
	jobs, err := jobs.OpenFileStore(filepath.Join(cfg.DataDir, "jobs"), opts)
	if err != nil {
		return nil, err
	}
	closers = append(closers, jobs.Close)
	book, err := accounts.OpenFileStore(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	closers = append(closers, book.Close)
	// Predictions and outcomes are kept in a capped log of their own.
	log, err := outcomes.OpenFileStore(filepath.Join(cfg.DataDir, "outcomes"), logOpts)
	if err != nil {
		return nil, err
	}
	closers = append(closers, log.Close)
	// Sampled rows are kept in rotating JSON Lines files of their own.
	rows, err := payloads.OpenFileStore(filepath.Join(cfg.DataDir, "payloads"), payloadOpts)
	if err != nil {
		return nil, err
	}
	closers = append(closers, rows.Close)
	return &stores{records: records, jobs: jobs, accounts: book, outcomes: log, payloads: rows, close: closeAll(closers...)}, nil
}

// closeAll returns a function that closes what closers close, the last
// opened first.
func closeAll(closers ...func() error) func() error {
	return func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
}

// openKeys opens the token signing keys: those of the key store, of the
// data directory's key file, or new ones in memory.
func (s *stores) openKeys(ctx context.Context, cfg Config) (*tokens.KeySet, error) {
	kc := tokens.KeySetConfig{Retention: cfg.TokenValidity, Now: cfg.Now, Logger: cfg.Logger}
	switch {
	case s.keys != nil:
		return tokens.OpenKeySet(ctx, s.keys, kc)
	case cfg.DataDir != "":
		return tokens.LoadOrCreateKeySet(filepath.Join(cfg.DataDir, keyFile), kc)
	}
	return tokens.NewKeySet(kc)
}

// Close closes the stores the service opened.
func (s *stores) Close() error {
	if s.close == nil {
		return nil
	}
	return s.close()
}

// replicaName is a name for this process among the replicas of a shared
// store: the host name, so that operators see where a job runs, and a
// random suffix, so that a restarted process is a new replica.
func replicaName() string {
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-') {
			return r
		}
		return '-'
	}, host)
	host = strings.TrimLeft(host, "._-")
	if len(host) > 100 {
		host = host[:100]
	}
	var b [4]byte
	rand.Read(b[:]) // never fails
	if host == "" {
		return "replica-" + hex.EncodeToString(b[:])
	}
	return host + "-" + hex.EncodeToString(b[:])
}
