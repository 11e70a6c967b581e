package pgstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
)

func modelRegistry(t *testing.T, db *pgstore.DB) *registry.Registry {
	t.Helper()
	cat := process.NewCatalog()
	if err := cat.RegisterFormat(&registrytest.LinearFormat{}); err != nil {
		t.Fatal(err)
	}
	r, err := registry.New(context.Background(), cat, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestArtifactRace has one replica upload a model file while another
// deletes the last model using the same file, which deletes the file:
// the database decides, and no stored version is left without its file.
func TestArtifactRace(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	dbA, dbB := open(t, pgstore.Config{URL: url}), open(t, pgstore.Config{URL: url})
	ra, rb := modelRegistry(t, dbA), modelRegistry(t, dbB)
	meta := process.ModelMetadata{Label: "churn", Classes: []string{"no", "yes"}}
	for i := range 12 {
		art := registrytest.LinearArtifact(float64(i), []string{"age"}, []float64{1})
		if _, _, err := rb.AddModelVersion(ctx, "old", art, meta, nil); err != nil {
			t.Fatal(err)
		}
		old, _ := rb.Snapshot().State().Model("old")
		var wg sync.WaitGroup
		wg.Go(func() {
			if _, _, err := ra.AddModelVersion(ctx, fmt.Sprintf("new%d", i), art, meta, nil); err != nil {
				t.Errorf("upload %d: %v", i, err)
			}
		})
		wg.Go(func() {
			if err := rb.DeleteModel(ctx, "old", old.Revision); err != nil {
				t.Errorf("delete %d: %v", i, err)
			}
		})
		wg.Wait()
		st, err := dbA.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range st.Models() {
			for _, v := range m.Versions {
				if _, err := dbA.Artifact(ctx, v.SHA256); err != nil {
					t.Fatalf("round %d: %s@%d is stored without its file: %v", i, m.Name, v.Version, err)
				}
			}
		}
		if _, ok := st.Model(fmt.Sprintf("new%d", i)); !ok {
			t.Fatalf("round %d: the acknowledged upload is not stored", i)
		}
	}
}
