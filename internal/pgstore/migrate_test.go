package pgstore_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/registry"
)

func query[T any](t *testing.T, url, sql string) T {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v T
	if err := conn.QueryRow(ctx, sql).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// TestOpenRace opens one new database from many DBs at once, as replicas
// starting together do: one migrates and initialises it, the others find
// it done, and every one works.
func TestOpenRace(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	const n = 8
	dbs := make([]*pgstore.DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { dbs[i], errs[i] = pgstore.Open(ctx, pgstore.Config{URL: url, MaxConns: 2}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d of %d racing: %v", i, n, err)
		}
		t.Cleanup(func() { dbs[i].Close() })
	}
	versions := query[int](t, url, "SELECT count(*) FROM schema_migrations")
	latest := query[int](t, url, "SELECT max(version) FROM schema_migrations")
	if versions != latest || versions < 3 {
		t.Errorf("schema_migrations holds %d versions up to %d; want each once, at least 3", versions, latest)
	}
	if got := query[int](t, url, "SELECT count(*) FROM record_groups"); got != 1 {
		t.Errorf("%d groups after racing Opens, want the one DEFAULT", got)
	}
	for i, db := range dbs {
		st, err := db.Load(ctx)
		if err != nil || st.Seq() != 0 || len(st.Groups()) != 1 || len(st.Queues()) != 1 {
			t.Errorf("DB %d loads %v (%v), want seq 0 with the built-in group and queue", i, st, err)
		}
	}
}

// TestOpenRefusesNewerSchema checks that a build does not write into a
// database a newer build has migrated, and leaves it as it was.
func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	db := open(t, pgstore.Config{URL: url})
	r := newRegistry(t, db)
	if _, err := r.PutGroup(ctx, registry.Group{Name: "kept"}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	db.Close()
	known := query[int](t, url, "SELECT max(version) FROM schema_migrations")
	future := known + 1
	if got := query[int](t, url, "INSERT INTO schema_migrations (version, name) VALUES ("+strconv.Itoa(future)+", 'future') RETURNING version"); got != future {
		t.Fatal(got)
	}
	_, err := pgstore.Open(ctx, pgstore.Config{URL: url})
	if err == nil || !strings.Contains(err.Error(), "newer than this build") {
		t.Fatalf("Open of a database at schema %d by a build knowing %d: %v, want a refusal", future, known, err)
	}
	if got := query[int](t, url, "SELECT count(*) FROM schema_migrations"); got != future {
		t.Errorf("the refused Open left %d migrations, want %d", got, future)
	}
	if got := query[int](t, url, "SELECT count(*) FROM record_groups WHERE name = 'kept'"); got != 1 {
		t.Errorf("the refused Open changed the records")
	}
}
