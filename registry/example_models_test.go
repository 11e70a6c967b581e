package registry_test

import (
	"context"
	"fmt"
	"log"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
)

// Upload a model file, check it reproduces its producer's predictions,
// point an alias at it and score through an endpoint that names the alias.
// (The format here is a linear model for tests; a server registers real
// formats, such as xgboost.Format.)
func ExampleRegistry_AddModelVersion() {
	ctx := context.Background()
	catalog := process.NewCatalog()
	if err := catalog.RegisterFormat(&registrytest.LinearFormat{}); err != nil {
		log.Fatal(err)
	}
	reg, err := registry.New(ctx, catalog, registry.NewMemStore(registry.StoreOptions{}))
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()

	artifact := registrytest.LinearArtifact(-1, []string{"age"}, []float64{0.05})
	rows, err := process.NewTable(2, process.NumberColumn("age", []float64{10, 40}, nil))
	if err != nil {
		log.Fatal(err)
	}
	v, created, err := reg.AddModelVersion(ctx, "churn", artifact,
		process.ModelMetadata{Label: "churn", Classes: []string{"no", "yes"}},
		&registry.Upload{Verification: &registry.Verification{Rows: rows, Expected: []any{"no", "yes"}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("version", v.Version, "created", created, "task", v.Schema.Task)

	if _, err := reg.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "production", Version: v.Version}); err != nil {
		log.Fatal(err)
	}
	if _, err := reg.PutDeployment(ctx, registry.Deployment{Group: registry.DefaultGroup, Path: "churn", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "score", Model: "churn@production"}}}); err != nil {
		log.Fatal(err)
	}

	target, err := reg.Snapshot().Resolve(registry.DefaultGroup, "churn", "score")
	if err != nil {
		log.Fatal(err)
	}
	out, err := target.Process.Process.Score(ctx, process.Input{Table: rows})
	if err != nil {
		log.Fatal(err)
	}
	pred, _ := out.Lookup("prediction(churn)")
	for i := range out.Rows() {
		p, _ := pred.Text(i)
		fmt.Printf("%s: age %v → %s\n", target.Process.Name, rows.Column(0).Numbers[i], p)
	}

	// The same file and metadata again is the version there is.
	v, created, _ = reg.AddModelVersion(ctx, "churn", artifact, process.ModelMetadata{Label: "churn", Classes: []string{"no", "yes"}}, nil)
	fmt.Println("version", v.Version, "created", created)
	// Output:
	// version 1 created true task classification
	// churn@1: age 10 → no
	// churn@1: age 40 → yes
	// version 1 created false
}
