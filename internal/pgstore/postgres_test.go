package pgstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/registrytest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens a DB on url, closed when the test ends.
func open(t testing.TB, cfg pgstore.Config) *pgstore.DB {
	t.Helper()
	db, err := pgstore.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// urls remembers the database of each DB the conformance suites open, for
// their Reopen.
type urls map[any]pgstore.Config

func (u urls) open(t testing.TB, cfg pgstore.Config) *pgstore.DB {
	db := open(t, cfg)
	u[db] = cfg
	return db
}

// reopen closes s, a DB that open opened, and opens its database again.
func (u urls) reopen(t testing.TB, s interface{ Close() error }) *pgstore.DB {
	s.Close()
	return u.open(t, u[s])
}

func TestConformance(t *testing.T) {
	opened := urls{}
	registrytest.Run(t, registrytest.Opener{
		Open: func(t *testing.T, opts registry.StoreOptions) registry.Store {
			return opened.open(t, pgstore.Config{URL: pgtest.DB(t), Now: opts.Now})
		},
		Reopen: func(t *testing.T, s registry.Store) registry.Store { return opened.reopen(t, s) },
	})
}

// TestSharedConformance: two DBs on one database, each with its own pool
// and listener, as two replicas have.
func TestSharedConformance(t *testing.T) {
	registrytest.RunShared(t, func(t *testing.T) (a, b registry.Notifier) {
		url := pgtest.DB(t)
		return open(t, pgstore.Config{URL: url}), open(t, pgstore.Config{URL: url})
	})
}

func TestJobStoreConformance(t *testing.T) {
	opened := urls{}
	registrytest.RunJobStore(t, registrytest.JobOpener{
		Open:   func(t *testing.T) jobs.Store { return opened.open(t, pgstore.Config{URL: pgtest.DB(t)}) },
		Reopen: func(t *testing.T, s jobs.Store) jobs.Store { return opened.reopen(t, s) },
	})
}
