package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/postgres"
	"github.com/scorehub/scorehub/registry/registrytest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens a DB on url, closed when the test ends.
func open(t testing.TB, cfg postgres.Config) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// urls remembers the database of each DB the conformance suites open, for
// their Reopen.
type urls map[any]postgres.Config

func TestConformance(t *testing.T) {
	opened := urls{}
	registrytest.Run(t, registrytest.Opener{
		Open: func(t *testing.T, opts registry.StoreOptions) registry.Store {
			cfg := postgres.Config{URL: pgtest.DB(t), Now: opts.Now}
			db := open(t, cfg)
			opened[db] = cfg
			return db
		},
		Reopen: func(t *testing.T, s registry.Store) registry.Store {
			s.Close()
			return open(t, opened[s])
		},
	})
}

func TestJobStoreConformance(t *testing.T) {
	opened := urls{}
	registrytest.RunJobStore(t, registrytest.JobOpener{
		Open: func(t *testing.T) registry.JobStore {
			cfg := postgres.Config{URL: pgtest.DB(t)}
			db := open(t, cfg)
			opened[db] = cfg
			return db
		},
		Reopen: func(t *testing.T, s registry.JobStore) registry.JobStore {
			s.Close()
			return open(t, opened[s])
		},
	})
}
