package pmml_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/scorehub/scorehub/registry/pmml"
	"github.com/scorehub/scorehub/registry/process"
)

// Example_explain asks R's regression tree of petal length by species why
// it answered as it did: the species' contribution to the prediction and
// the prediction expected of any row by the tree's record counts (the
// bias). They add up to the prediction.
func Example_explain() {
	artifact, err := os.ReadFile("testdata/r/iris_rpart.pmml")
	if err != nil {
		log.Fatal(err)
	}
	model, err := pmml.Format{}.Load(artifact, process.ModelMetadata{})
	if err != nil {
		log.Fatal(err)
	}
	explainer, ok := model.Process.(process.Explainer)
	if !ok {
		log.Fatal("the file's trees cannot be explained")
	}
	rows, err := process.NewTable(2, process.TextColumn("Species", []string{"versicolor", "virginica"}, nil))
	if err != nil {
		log.Fatal(err)
	}
	e, err := explainer.Explain(context.Background(), process.Input{Table: rows})
	if err != nil {
		log.Fatal(err)
	}
	for r := range e.Rows() {
		c := e.Row(0, r)
		fmt.Printf("%s %+.3f, bias %.3f: %.3f\n", e.Features[0], c[0], c[1], c[0]+c[1])
	}
	// Output:
	// Species +0.502, bias 3.758: 4.260
	// Species +1.794, bias 3.758: 5.552
}
