package pgstore_test

import (
	"context"
	"log"
	"os"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

// One replica of several sharing a database: a Registry over a DB. Every replica runs the same code against the same
// connection string; what one writes, the others' registries publish
// within moments, and a write decided on an outdated view is refused by
// the database. (It needs a server, so it is compiled, not run.)
func ExampleOpen() {
	ctx := context.Background()
	db, err := pgstore.Open(ctx, pgstore.Config{
		URL: os.Getenv("SCOREHUB_STORE"), // postgres://user:password@host/db
	})
	if err != nil {
		log.Fatal(err) // the error never holds the password
	}
	defer db.Close()

	reg, err := registry.New(ctx, process.NewCatalog(), db)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	if _, err := reg.PutQueue(ctx, registry.Queue{Name: "batch", MaxConcurrent: 2}); err != nil {
		log.Fatal(err)
	}
	q, _ := reg.Snapshot().State().Queue("batch")
	log.Printf("queue %s at revision %d", q.Name, q.Revision)
}
