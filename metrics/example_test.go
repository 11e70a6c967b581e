package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/scorehub/scorehub/metrics"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// A host registers the metrics on a registry of its own, passes them to
// the scoring handler as its Observer and serves them at /metrics.
func ExampleNew() {
	ctx := context.Background()
	catalog := process.NewCatalog()
	err := catalog.Register(process.ProcessInfo{Name: "constant", Process: process.ProcessFunc(
		func(_ context.Context, in process.Input) (*process.Table, error) {
			return process.NewTable(in.Table.Rows(), process.NumberColumn("score", make([]float64, in.Table.Rows()), nil))
		})})
	if err != nil {
		log.Fatal(err)
	}
	reg, err := registry.New(ctx, catalog, registry.NewMemStore(registry.StoreOptions{}))
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	if _, err := reg.PutDeployment(ctx, registry.Deployment{Group: registry.DefaultGroup, Path: "churn", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "score", Process: "constant"}}}); err != nil {
		log.Fatal(err)
	}
	queues, err := scoring.NewQueues(reg)
	if err != nil {
		log.Fatal(err)
	}

	prom := prometheus.NewRegistry()
	m, err := metrics.New(metrics.Config{Registerer: prom, Queues: queues})
	if err != nil {
		log.Fatal(err)
	}
	scorer, err := scoring.New(scoring.Config{Registry: reg, Queues: queues, Observer: m})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/webapi/", http.StripPrefix("/webapi", scorer))
	mux.Handle("GET /metrics", promhttp.HandlerFor(prom, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, path := range []string{"/webapi/DEFAULT/api/v1/services/churn/score", "/webapi/DEFAULT/api/v1/services/churn/nope"} {
		res, err := http.Post(srv.URL+path, "application/json", strings.NewReader(`{"data":[{"id":1},{"id":2}]}`))
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
	}

	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "scorehub_scoring_requests_total") || strings.HasPrefix(line, "scorehub_scoring_rows_total") {
			fmt.Println(line)
		}
	}
	// Output:
	// scorehub_scoring_requests_total{alias="_unmatched",group="_unmatched",model="",path="_unmatched",status="404",version=""} 1
	// scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="",path="churn",status="200",version=""} 1
	// scorehub_scoring_rows_total{alias="score",group="DEFAULT",model="",path="churn",version=""} 2
}
