package pgstore_test

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// One replica's users, API tokens and signing keys, shared with every
// replica on the database: a user changed through any replica revokes the
// tokens issued for it on all of them, and a key rotated by any replica
// signs and verifies on all of them. (It needs a server, so it is
// compiled, not run.)
func ExampleDB_Accounts() {
	ctx := context.Background()
	db, err := pgstore.Open(ctx, pgstore.Config{URL: os.Getenv("SCOREHUB_STORE")})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close() // after everything over it

	keys, err := tokens.OpenKeySet(ctx, db.Keys(), tokens.KeySetConfig{Retention: 5 * time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer keys.Close()
	book, err := accounts.Open(ctx, accounts.Config{Store: db.Accounts()})
	if err != nil {
		log.Fatal(err)
	}
	defer book.Close()
	verifier, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: "https://scorehub.example",
		Audience: "scorehub", Credentials: book})
	if err != nil {
		log.Fatal(err)
	}
	_ = verifier // for middleware.Bearer

	// Every replica may run this on a ticker: of replicas that find the
	// key old at once, one rotates it.
	if k, err := keys.RotateIfOlder(30 * 24 * time.Hour); err != nil {
		log.Print(err)
	} else if k != nil {
		log.Printf("signing with %s", k.ID())
	}
}
