package management_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/tokens"
)

// Mount the management API beside the scoring handler, deploy an endpoint
// through it with an administrator's token, and list the endpoints with the
// URLs clients score at.
func Example() {
	ctx := context.Background()
	catalog := process.NewCatalog()
	err := catalog.Register(process.ProcessInfo{Name: "echo", Description: "Returns nothing new.",
		Process: process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
			return process.NewTable(in.Table.Rows())
		})})
	if err != nil {
		panic(err)
	}
	reg, err := registry.New(ctx, catalog, registry.NewMemStore(registry.StoreOptions{}))
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	scorer, err := scoring.New(scoring.Config{Registry: reg})
	if err != nil {
		panic(err)
	}

	keys, _ := tokens.NewKeySet(tokens.KeySetConfig{})
	issuer, _ := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: "https://scorehub.example", Audience: []string{"scorehub"}})
	verifier, _ := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: "https://scorehub.example", Audience: "scorehub"})
	admin, _, _ := issuer.Issue(tokens.Principal{Subject: "root", Admin: true})

	api, err := management.New(management.Config{
		Registry: reg,
		Queues:   scorer.Queues(),
		Verifier: verifier,
		BaseURL:  "https://scorehub.example",
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.Handle("/webapi/", http.StripPrefix("/webapi", scorer))

	send := func(method, path, contentType, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+admin)
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w
	}

	w := send("PUT", "/api/v1/deployments/DEFAULT/demo", "application/json",
		`{"description":"A demo","endpoints":[{"alias":"echo","process":"echo","timeoutMs":500}]}`)
	fmt.Println("PUT", w.Code, "ETag", w.Header().Get("ETag"))

	w = send("PATCH", "/api/v1/deployments/DEFAULT/demo", "application/merge-patch+json", `{"enabled":false}`)
	fmt.Println("PATCH", w.Code, "ETag", w.Header().Get("ETag"))

	w = send("GET", "/api/v1/endpoints", "", "")
	var endpoints []struct{ URL, State string }
	if err := json.Unmarshal(w.Body.Bytes(), &endpoints); err != nil {
		panic(err)
	}
	for _, e := range endpoints {
		fmt.Println(e.URL, e.State)
	}

	w = send("POST", "/webapi/DEFAULT/api/v1/services/demo/echo", "application/json", `{"data":[{"x":1}]}`)
	fmt.Print("score ", w.Code, " ", w.Body.String())
	// Output:
	// PUT 201 ETag "1"
	// PATCH 200 ETag "2"
	// https://scorehub.example/webapi/DEFAULT/api/v1/services/demo/echo disabled
	// score 404 {"error":{"type":"endpoint_disabled","message":"the endpoint's deployment is disabled"}}
}
