package pgstore_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

// While the server is down every call fails with ErrStoreUnavailable,
// which a client is told to retry (503 with Retry-After), and no password
// shows; once it is back, the same DB serves again without being reopened.
func TestServerDownIsUnavailable(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t)
	url := srv.NewDB(t)
	db := open(t, pgstore.Config{URL: url})
	reg, err := registry.New(ctx, process.NewCatalog(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()

	srv.Stop(t)
	_, loadErr := db.Load(ctx)
	_, jobErr := db.Job(ctx, "j")
	_, commitErr := reg.PutQueue(ctx, registry.Queue{Name: "q", MaxConcurrent: 1})
	for name, err := range map[string]error{"Load": loadErr, "Job": jobErr, "Commit": commitErr} {
		if !errors.Is(err, registry.ErrStoreUnavailable) {
			t.Errorf("%s with the server down: %v, want ErrStoreUnavailable", name, err)
			continue
		}
		if strings.Contains(err.Error(), srv.Password()) {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
		if e := httperr.From(err); e.Status != http.StatusServiceUnavailable || string(e.Code) != "store_unavailable" || e.RetryAfter < 1 {
			t.Errorf("%s answers %d %s, Retry-After %d; want 503 store_unavailable with Retry-After", name, e.Status, string(e.Code), e.RetryAfter)
		}
	}

	srv.Start(t)
	if _, err := reg.PutQueue(ctx, registry.Queue{Name: "q", MaxConcurrent: 1}); err != nil {
		t.Errorf("a write once the server is back: %v", err)
	}
}
