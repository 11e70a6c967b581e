package scorehub_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/scorehub/scorehub"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

// A host mounts the whole service under /ml/ beside its own routes, adds a
// catalog process, deploys it in code and scores it over HTTP.
func ExampleNew() {
	ctx := context.Background()
	svc, err := scorehub.New(ctx, scorehub.Config{
		AdminPassword: "correct horse battery",
		Processes: []process.ProcessInfo{{
			Name:    "double",
			Input:   []process.ColumnSpec{{Name: "x", Kind: process.Number, Required: true}},
			Output:  []process.ColumnSpec{{Name: "doubled", Kind: process.Number}},
			Process: process.ProcessFunc(double),
		}},
		AccessLogOff: true,
		Logger:       slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close()
	_, err = svc.Registry().PutDeployment(ctx, registry.Deployment{
		Group: registry.DefaultGroup, Path: "tools", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "double", Process: "double"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	mux := http.NewServeMux()
	mux.Handle("/ml/", http.StripPrefix("/ml", svc.Handler()))

	req := httptest.NewRequest("POST", "/ml/webapi/DEFAULT/api/v1/services/tools/double",
		strings.NewReader(`{"data":[{"x":21}]}`))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	fmt.Print(w.Code, " ", w.Body)
	// Output: 200 {"data":[{"x":21,"doubled":42}]}
}

func double(_ context.Context, in process.Input) (*process.Table, error) {
	x, _ := in.Table.Lookup("x") // the input schema makes x a number column
	n := in.Table.Rows()
	out := make([]float64, n)
	missing := make([]bool, n)
	for i := range n {
		v, ok := x.Number(i)
		out[i], missing[i] = 2*v, !ok
	}
	return process.NewTable(n, process.NumberColumn("doubled", out, missing))
}
