package xgboost_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/xgboost"
)

func ExampleFormat_Load() {
	// An iris classifier XGBoost saved with save_model("iris_softprob.json").
	artifact, err := os.ReadFile("testdata/iris_softprob.json")
	if err != nil {
		log.Fatal(err)
	}
	catalog := process.NewCatalog()
	if err := catalog.RegisterFormat(xgboost.Format{}); err != nil {
		log.Fatal(err)
	}
	// The file numbers its classes; the metadata names them.
	model, err := catalog.LoadModel(artifact, process.ModelMetadata{
		Label:   "species",
		Classes: []string{"setosa", "versicolor", "virginica"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(model.Schema.Producer, model.Schema.Objective, model.Schema.Trees, "trees")
	if err := catalog.Register(model.ProcessInfo("iris")); err != nil {
		log.Fatal(err)
	}

	iris, _ := catalog.Lookup("iris")
	row, err := process.NewTable(1,
		process.NumberColumn("sepal_length", []float64{6.8}, nil),
		process.NumberColumn("sepal_width", []float64{2.8}, nil),
		process.NumberColumn("petal_length", []float64{4.8}, nil),
		process.NumberColumn("petal_width", []float64{1.4}, nil),
	)
	if err != nil {
		log.Fatal(err)
	}
	out, err := iris.Process.Score(context.Background(), process.Input{Table: row})
	if err != nil {
		log.Fatal(err)
	}
	for i := range out.NumColumns() {
		c := out.Column(i)
		if c.Kind == process.Text {
			fmt.Printf("%s = %s\n", c.Name, c.Texts[0])
		} else {
			fmt.Printf("%s = %.6f\n", c.Name, c.Numbers[0])
		}
	}
	// Output:
	// xgboost 1.7.4 multi:softprob 60 trees
	// prediction(species) = versicolor
	// confidence(setosa) = 0.006252
	// confidence(versicolor) = 0.975205
	// confidence(virginica) = 0.018543
}
