// Command embed shows scorehub inside a server that already has routes of
// its own: the host keeps its mux and mounts the scoring handler under a
// prefix with http.StripPrefix.
//
//	go run ./examples/embed
//	curl -s localhost:8081/hello
//	curl -s -X POST localhost:8081/ml/DEFAULT/api/v1/services/tools/double \
//	     -H 'Content-Type: application/json' -d '{"data":[{"x":21}]}'
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/scoring"
)

func main() {
	h, err := newHandler(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe("127.0.0.1:8081", h))
}

// newHandler builds the host's mux: its own /hello route, and scorehub's
// scoring endpoints under /ml/.
func newHandler(ctx context.Context) (http.Handler, error) {
	catalog := registry.NewCatalog()
	err := catalog.Register(registry.ProcessInfo{
		Name:        "double",
		Description: "Doubles the number column x.",
		Input:       []registry.ColumnSpec{{Name: "x", Kind: registry.Number, Required: true}},
		Output:      []registry.ColumnSpec{{Name: "doubled", Kind: registry.Number}},
		Process:     registry.ProcessFunc(double),
	})
	if err != nil {
		return nil, err
	}
	store := registry.NewMemStore(registry.StoreOptions{})
	_, err = store.PutDeployment(ctx, registry.Deployment{
		Group: registry.DefaultGroup, Path: "tools", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "double", Process: "double"}},
	})
	if err != nil {
		return nil, err
	}
	reg, err := registry.New(ctx, catalog, store)
	if err != nil {
		return nil, err
	}
	scorer, err := scoring.New(scoring.Config{Registry: reg})
	if err != nil {
		return nil, err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "hello from the host application")
	})
	mux.Handle("/ml/", http.StripPrefix("/ml", scorer))
	return mux, nil
}

func double(_ context.Context, in registry.Input) (*registry.Table, error) {
	x, _ := in.Table.Lookup("x") // the input schema makes x a number column
	n := in.Table.Rows()
	out := make([]float64, n)
	missing := make([]bool, n)
	for i := range n {
		v, ok := x.Number(i)
		out[i], missing[i] = 2*v, !ok
	}
	return registry.NewTable(n, registry.NumberColumn("doubled", out, missing))
}
