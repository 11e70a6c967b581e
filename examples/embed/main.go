// Command embed shows scorehub inside a server that already has routes of
// its own: the host keeps its mux and mounts the scoring handler under /ml
// and the management API, with the token service that guards it, under
// /ml-admin, each with http.StripPrefix.
//
//	go run ./examples/embed
//	curl -s localhost:8081/hello
//	curl -s -X POST localhost:8081/ml/DEFAULT/api/v1/services/tools/double \
//	     -H 'Content-Type: application/json' -d '{"data":[{"x":21}]}'
//	TOKEN=$(curl -s -u ops:ops-password localhost:8081/ml-admin/api/rest/tokenservice -H 'Accept: application/json' | jq -r .idToken)
//	curl -s localhost:8081/ml-admin/api/v1/endpoints -H "Authorization: Bearer $TOKEN"
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/tokens"
)

// The demo user of the management API. A real host has its own users
// behind a tokens.Authenticator.
const (
	opsUser     = "ops"
	opsPassword = "ops-password"
)

func main() {
	h, err := newHandler(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe("127.0.0.1:8081", h))
}

// newHandler builds the host's mux: its own /hello route, scorehub's
// scoring endpoints under /ml/, and its management API and token service
// under /ml-admin/.
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
	reg, err := registry.New(ctx, catalog, registry.NewMemStore(registry.StoreOptions{}))
	if err != nil {
		return nil, err
	}
	_, err = reg.PutDeployment(ctx, registry.Deployment{
		Group: registry.DefaultGroup, Path: "tools", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "double", Process: "double"}},
	})
	if err != nil {
		return nil, err
	}
	scorer, err := scoring.New(scoring.Config{Registry: reg})
	if err != nil {
		return nil, err
	}
	admin, err := newAdmin(reg, scorer.Queues())
	if err != nil {
		return nil, err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "hello from the host application")
	})
	mux.Handle("/ml/", http.StripPrefix("/ml", scorer))
	mux.Handle("/ml-admin/", http.StripPrefix("/ml-admin", admin))
	return mux, nil
}

// newAdmin returns the management API beside the token service that issues
// its tokens. Keys live in memory here: tokens die with the process.
func newAdmin(reg *registry.Registry, queues *scoring.Queues) (http.Handler, error) {
	keys, err := tokens.NewKeySet(tokens.KeySetConfig{})
	if err != nil {
		return nil, err
	}
	issuer, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: "embed", Audience: []string{"embed"}})
	if err != nil {
		return nil, err
	}
	verifier, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: "embed", Audience: "embed"})
	if err != nil {
		return nil, err
	}
	hash, err := tokens.HashPassword(opsPassword, 0)
	if err != nil {
		return nil, err
	}
	users, err := tokens.NewStaticUsers(tokens.User{Name: opsUser, PasswordHash: hash, Admin: true})
	if err != nil {
		return nil, err
	}
	tokenService, err := tokens.NewService(tokens.ServiceConfig{Issuer: issuer, Users: users})
	if err != nil {
		return nil, err
	}
	api, err := management.New(management.Config{Registry: reg, Queues: queues, Verifier: verifier, ScoringPrefix: "/ml", TokenRoutes: tokenService.Routes()})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/api/rest/", tokenService)
	mux.Handle("/", api)
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
