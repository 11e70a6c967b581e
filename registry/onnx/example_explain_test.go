package onnx_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"slices"

	"github.com/scorehub/scorehub/registry/onnx"
	"github.com/scorehub/scorehub/registry/process"
)

// An ONNX tree ensemble whose nodes_hitrates are its covers explains its
// predictions: each input's part of a class's raw score, which softmax
// turns into the class's confidence. Here an XGBoost iris classifier,
// written as ONNX with XGBoost's covers, explains a row's score of the
// class it predicts; a converter's file, whose hitrates are not covers,
// says why it cannot.
func Example_explain() {
	artifact, err := os.ReadFile("testdata/xgboost/iris_softprob.onnx")
	if err != nil {
		log.Fatal(err)
	}
	model, err := onnx.Format{}.Load(artifact, process.ModelMetadata{
		Label:   "species",
		Classes: []string{"setosa", "versicolor", "virginica"},
	})
	if err != nil {
		log.Fatal(err)
	}
	explainer, ok := model.Process.(process.Explainer)
	if !ok {
		log.Fatal(model.Schema.Unexplained)
	}
	row, err := process.NewTable(1,
		process.NumberColumn("sepal_length_cm", []float64{6.8}, nil),
		process.NumberColumn("sepal_width_cm", []float64{2.8}, nil),
		process.NumberColumn("petal_length_cm", []float64{4.8}, nil),
		process.NumberColumn("petal_width_cm", []float64{1.4}, nil),
	)
	if err != nil {
		log.Fatal(err)
	}
	e, err := explainer.Explain(context.Background(), process.Input{Table: row})
	if err != nil {
		log.Fatal(err)
	}
	g := slices.Index(e.Groups, "versicolor")
	contributions := e.Row(g, 0)
	for j, name := range e.Features {
		fmt.Printf("%-16s %+.4f\n", name, contributions[j])
	}
	fmt.Printf("%-16s %+.4f\n", "bias", contributions[len(e.Features)])
	fmt.Printf("%-16s %+.4f\n", "margin", e.Margins[g][0])

	forest, err := os.ReadFile("testdata/iris_forest.onnx")
	if err != nil {
		log.Fatal(err)
	}
	converted, err := onnx.Format{}.Load(forest, process.ModelMetadata{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(converted.Schema.Unexplained)
	// Output:
	// sepal_length_cm  +0.0170
	// sepal_width_cm   +0.0337
	// petal_length_cm  +0.9448
	// petal_width_cm   +0.9058
	// bias             +0.5430
	// margin           +2.4443
	// its tree ensemble has no nodes_hitrates, the covers (how much training data reached each node) TreeSHAP weighs by; writing each node's cover (XGBoost's cover, LightGBM's count) into nodes_hitrates makes it explainable
}
