package onnx_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/scorehub/scorehub/registry/onnx"
	"github.com/scorehub/scorehub/registry/process"
)

func ExampleFormat_Load() {
	// A scikit-learn random forest on iris, written as an ONNX graph of a
	// TreeEnsembleClassifier and a ZipMap reading one [N,4] float input.
	artifact, err := os.ReadFile("testdata/iris_forest.onnx")
	if err != nil {
		log.Fatal(err)
	}
	catalog := process.NewCatalog()
	if err := catalog.RegisterFormat(onnx.Format{}); err != nil {
		log.Fatal(err)
	}
	// The graph's input is one tensor; the metadata names its columns.
	model, err := catalog.LoadModel(artifact, process.ModelMetadata{
		Label:    "species",
		Features: []string{"sepal_length", "sepal_width", "petal_length", "petal_width"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(model.Schema.Format, model.Schema.Task, model.Schema.Trees, "trees", model.Schema.Classes)
	if err := catalog.Register(model.ProcessInfo("iris")); err != nil {
		log.Fatal(err)
	}

	iris, _ := catalog.Lookup("iris")
	rows, err := process.NewTable(2,
		process.NumberColumn("sepal_length", []float64{6.8, 5.0}, nil),
		process.NumberColumn("sepal_width", []float64{2.8, 3.4}, nil),
		process.NumberColumn("petal_length", []float64{4.8, 1.5}, nil),
		process.NumberColumn("petal_width", []float64{1.4, 0.2}, nil),
	)
	if err != nil {
		log.Fatal(err)
	}
	out, err := iris.Process.Score(context.Background(), process.Input{Table: rows})
	if err != nil {
		log.Fatal(err)
	}
	for r := range out.Rows() {
		for i := range out.NumColumns() {
			c := out.Column(i)
			if c.Kind == process.Text {
				fmt.Printf("%s = %s", c.Name, c.Texts[r])
			} else {
				fmt.Printf(", %s = %.4f", c.Name, c.Numbers[r])
			}
		}
		fmt.Println()
	}
	// Output:
	// onnx classification 8 trees [setosa versicolor virginica]
	// prediction(species) = versicolor, confidence(setosa) = 0.0000, confidence(versicolor) = 0.8906, confidence(virginica) = 0.1094
	// prediction(species) = setosa, confidence(setosa) = 1.0000, confidence(versicolor) = 0.0000, confidence(virginica) = 0.0000
}
