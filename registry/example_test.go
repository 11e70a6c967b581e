package registry_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

func ExampleSnapshot_Resolve() {
	ctx := context.Background()
	catalog := process.NewCatalog()
	err := catalog.Register(process.ProcessInfo{
		Name: "double",
		Process: process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
			x, _ := in.Table.Lookup("x")
			out := make([]float64, in.Table.Rows())
			for i := range out {
				out[i] = 2 * x.Numbers[i]
			}
			return process.NewTable(len(out), process.NumberColumn("y", out, nil))
		}),
	})
	if err != nil {
		log.Fatal(err)
	}
	store := registry.NewMemStore(registry.StoreOptions{})
	defer store.Close()
	reg, err := registry.New(ctx, catalog, store)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()

	_, err = reg.PutDeployment(ctx, registry.Deployment{
		Group: registry.DefaultGroup, Path: "math", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "double", Process: "double"}},
	})
	if err != nil {
		log.Fatal(err)
	}

	// What the scoring handler does for POST /DEFAULT/api/v1/services/math/double.
	target, err := reg.Snapshot().Resolve("DEFAULT", "math", "double")
	if err != nil {
		log.Fatal(err)
	}
	in, err := process.NewTable(2, process.NumberColumn("x", []float64{1.5, 4}, nil))
	if err != nil {
		log.Fatal(err)
	}
	out, err := target.Process.Process.Score(ctx, process.Input{Table: in})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("queue:", target.Queue.Name)
	fmt.Println("y:", out.Column(0).Numbers)

	// Names that are not valid are never looked up.
	_, err = reg.Snapshot().Resolve("DEFAULT", "math", "..")
	fmt.Println("..:", errors.Is(err, registry.ErrNotFound))
	// Output:
	// queue: DEFAULT
	// y: [3 8]
	// ..: true
}

func ExampleOpenFileStore() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "scorehub-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := registry.OpenFileStore(dir, registry.StoreOptions{})
	if err != nil {
		log.Fatal(err)
	}
	reg, err := registry.New(ctx, process.NewCatalog(), store)
	if err != nil {
		log.Fatal(err)
	}
	g, err := reg.PutGroup(ctx, registry.Group{Name: "fraud", Description: "Card fraud models"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored", g.Name, "at revision", g.Revision)
	reg.Close()
	if err := store.Close(); err != nil {
		log.Fatal(err)
	}

	// A restart: the group is still there.
	store, err = registry.OpenFileStore(dir, registry.StoreOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	reg, err = registry.New(ctx, process.NewCatalog(), store)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	g, ok := reg.Snapshot().State().Group("fraud")
	fmt.Println("reopened:", ok, g.Description, "revision", g.Revision)
	// Output:
	// stored fraud at revision 1
	// reopened: true Card fraud models revision 1
}
