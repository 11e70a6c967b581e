package xgboost_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/xgboost"
)

// Example_explain asks a model why it answered as it did: each feature's
// contribution to each class's margin, and the margin expected of any
// row (the bias). They add up to the row's margin.
func Example_explain() {
	artifact, err := os.ReadFile("testdata/iris_softprob.json")
	if err != nil {
		log.Fatal(err)
	}
	model, err := xgboost.Format{}.Load(artifact, process.ModelMetadata{
		Classes: []string{"setosa", "versicolor", "virginica"},
	})
	if err != nil {
		log.Fatal(err)
	}
	explainer, ok := model.Process.(process.Explainer)
	if !ok {
		log.Fatal("the file holds no node covers to explain by")
	}
	row, err := process.NewTable(1,
		process.NumberColumn("sepal_length", []float64{6.8}, nil),
		process.NumberColumn("sepal_width", []float64{2.8}, nil),
		process.NumberColumn("petal_length", []float64{4.8}, nil),
		process.NumberColumn("petal_width", []float64{1.4}, nil),
	)
	if err != nil {
		log.Fatal(err)
	}
	e, err := explainer.Explain(context.Background(), process.Input{Table: row})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.Features)
	for g, class := range e.Groups {
		c := e.Row(g, 0)
		margin := 0.0
		for _, v := range c {
			margin += v
		}
		fmt.Printf("%-10s %+.3f  bias %+.3f  margin %+.3f\n", class, c[:len(e.Features)], c[len(e.Features)], margin)
	}
	// The margins' softmax is the confidences scoring answers: versicolor's
	// is 0.975.

	// Output:
	// [sepal_length sepal_width petal_length petal_width]
	// setosa     [+0.000 +0.000 -2.402 -0.068]  bias +0.300  margin -2.170
	// versicolor [+0.126 -0.125 +1.995 +0.334]  bias +0.551  margin +2.880
	// virginica  [+0.071 +0.211 -1.449 -0.508]  bias +0.592  margin -1.083
}
