package scoring_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// A host mounts the handler under a prefix of its own mux and scores one
// row: the inputs come back as sent, the result after them.
func Example() {
	ctx := context.Background()
	catalog := process.NewCatalog()
	err := catalog.Register(process.ProcessInfo{
		Name: "risk",
		Process: process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
			age, _ := in.Table.Lookup("age")
			risk := make([]float64, in.Table.Rows())
			for i := range risk {
				a, _ := age.Number(i)
				risk[i] = a / 100
			}
			return process.NewTable(in.Table.Rows(), process.NumberColumn("risk", risk, nil))
		}),
	})
	if err != nil {
		log.Fatal(err)
	}
	reg, err := registry.New(ctx, catalog, registry.NewMemStore(registry.StoreOptions{}))
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	_, err = reg.PutDeployment(ctx, registry.Deployment{
		Group: registry.DefaultGroup, Path: "insurance", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "score", Process: "risk"}},
	})
	if err != nil {
		log.Fatal(err)
	}

	h, err := scoring.New(scoring.Config{Registry: reg})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/webapi/", http.StripPrefix("/webapi", h))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/webapi/DEFAULT/api/v1/services/insurance/score",
		"application/json", strings.NewReader(`{"data":[{"id":12345678901234567890,"age":42,"premium":1.10}]}`))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	fmt.Println(resp.Status)
	io.Copy(os.Stdout, resp.Body)
	// Output:
	// 200 OK
	// {"data":[{"id":12345678901234567890,"age":42,"premium":1.10,"risk":0.42}]}
}

// Decode turns a body into a columnar table without any HTTP; keys missing
// from a row and nulls are missing values.
func ExampleDecode() {
	req, err := scoring.Decode(strings.NewReader(`{"data":[{"age":31,"city":"Oslo"},{"age":null},{"member":true}]}`), scoring.Limits{})
	if err != nil {
		log.Fatal(err)
	}
	t := req.Table
	for i := range t.NumColumns() {
		c := t.Column(i)
		fmt.Printf("%s (%s):", c.Name, c.Kind)
		for r := range t.Rows() {
			v, ok := t.Row(r).Value(c.Name)
			if !ok {
				v = "∅"
			}
			fmt.Printf(" %v", v)
		}
		fmt.Println()
	}
	// Output:
	// age (number): 31 ∅ ∅
	// city (text): Oslo ∅ ∅
	// member (text): ∅ ∅ true
}

// Decode's errors say what the client did wrong and where.
func ExampleDecode_error() {
	_, err := scoring.Decode(strings.NewReader(`{"data":[{"age":31},{"age":"old"}]}`), scoring.Limits{})
	var e *problem.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code, e.Pointer)
		fmt.Println(e.Message)
	}
	// Output:
	// 400 mixed_types /data/1/age
	// the column "age" holds both numbers and text
}

// Work other than scoring requests, such as batch jobs, shares the queues'
// limits through Run; Stats shows the live figures.
func ExampleQueues_Run() {
	ctx := context.Background()
	reg, err := registry.New(ctx, process.NewCatalog(), registry.NewMemStore(registry.StoreOptions{}))
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	queues, err := scoring.NewQueues(reg)
	if err != nil {
		log.Fatal(err)
	}
	for i := range 3 {
		err := queues.Run(ctx, registry.DefaultQueue, func(ctx context.Context) error {
			if i == 2 {
				return fmt.Errorf("job %d failed", i)
			}
			return nil
		})
		fmt.Println(err)
	}
	s, _ := queues.Stat(registry.DefaultQueue)
	fmt.Printf("%s: %d completed, %d failed, %d running (max %d)\n", s.Name, s.Completed, s.Failed, s.Running, s.MaxConcurrent)
	// Output:
	// <nil>
	// <nil>
	// job 2 failed
	// DEFAULT: 2 completed, 1 failed, 0 running (max 16)
}
