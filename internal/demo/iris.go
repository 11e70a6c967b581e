package demo

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"

	"github.com/scorehub/scorehub/registry/process"
)

//go:embed iris.csv
var irisCSV []byte

// IrisName is the catalog name of the iris process.
const IrisName = "iris"

// IrisFeatures are the input columns of the iris process, in centimetres.
var irisFeatures = [...]string{"sepal_length", "sepal_width", "petal_length", "petal_width"}

// irisFlowers are rows of the iris process's request: one flower of each
// species and one in between.
var irisFlowers = [...]string{
	`{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}`,
	`{"sepal_length":6.4,"sepal_width":3.2,"petal_length":4.5,"petal_width":1.5}`,
	`{"sepal_length":6.3,"sepal_width":3.3,"petal_length":6.0,"petal_width":2.5}`,
	`{"sepal_length":5.9,"sepal_width":3.0,"petal_length":5.1,"petal_width":1.8}`,
}

// IrisRequest returns a scoring request body for the iris process with
// rows rows, {"data":[…]}, the four example flowers in turn: what the load
// harness sends and the benchmarks decode.
func IrisRequest(rows int) []byte {
	b := []byte(`{"data":[`)
	for i := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, irisFlowers[i%len(irisFlowers)]...)
	}
	return append(b, "]}"...)
}

// IrisData returns the iris data set: feature rows, species indices, and the
// species names those indices refer to.
func IrisData() (x [][]float64, y []int, species []string, err error) {
	records, err := csv.NewReader(bytes.NewReader(irisCSV)).ReadAll()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("demo: read iris.csv: %w", err)
	}
	index := map[string]int{}
	for i, rec := range records[1:] {
		if len(rec) != len(irisFeatures)+1 {
			return nil, nil, nil, fmt.Errorf("demo: iris.csv line %d has %d fields", i+2, len(rec))
		}
		row := make([]float64, len(irisFeatures))
		for f := range irisFeatures {
			if row[f], err = strconv.ParseFloat(rec[f], 64); err != nil {
				return nil, nil, nil, fmt.Errorf("demo: iris.csv line %d: %w", i+2, err)
			}
		}
		name := rec[len(irisFeatures)]
		c, ok := index[name]
		if !ok {
			c = len(species)
			index[name] = c
			species = append(species, name)
		}
		x = append(x, row)
		y = append(y, c)
	}
	return x, y, species, nil
}

// TrainIris trains the naive Bayes model on the whole iris data set.
func TrainIris() (*NaiveBayes, error) {
	x, y, species, err := IrisData()
	if err != nil {
		return nil, err
	}
	return TrainNaiveBayes(irisFeatures[:], species, x, y)
}

// irisSample is the test page's starting point: one flower of each species
// and one with a measurement missing.
const irisSample = `[
  {"sepal_length": 5.1, "sepal_width": 3.5, "petal_length": 1.4, "petal_width": 0.2},
  {"sepal_length": 6.4, "sepal_width": 3.2, "petal_length": 4.5, "petal_width": 1.5},
  {"sepal_length": 6.3, "sepal_width": 3.3, "petal_length": 6.0, "petal_width": 2.5},
  {"sepal_length": 5.9, "sepal_width": 3.0, "petal_length": null, "petal_width": 1.8}
]`

// Iris trains the iris classifier and returns it as a catalog entry named
// IrisName. Input: the four measurements (numbers, cm; each column must
// appear in at least one row, and a null or absent value leaves that feature
// out for its row). Output: "prediction(species)"
// and "confidence(<species>)" for setosa, versicolor and virginica.
func Iris() (process.ProcessInfo, error) {
	model, err := TrainIris()
	if err != nil {
		return process.ProcessInfo{}, err
	}
	classes := model.Classes()
	proc, err := process.Classifier("species", classes, func(ctx context.Context, in process.Input, probs []float64) error {
		// Fixed-size arrays keep the call free of allocations.
		var cols [len(irisFeatures)]*process.Column
		for f, name := range irisFeatures {
			if j := in.Table.Index(name); j >= 0 { // an absent column is a missing value in every row
				cols[f] = in.Table.Column(j)
			}
		}
		var x [len(irisFeatures)]float64
		k := len(classes)
		for i := range in.Table.Rows() {
			if i > 0 && i%4096 == 0 && ctx.Err() != nil { // the engine checked it before the first row
				return ctx.Err()
			}
			for f, c := range cols {
				x[f] = math.NaN()
				if c != nil {
					if v, ok := c.Number(i); ok {
						x[f] = v
					}
				}
			}
			model.Predict(x[:], probs[i*k:(i+1)*k])
		}
		return nil
	})
	if err != nil {
		return process.ProcessInfo{}, err
	}
	input := make([]process.ColumnSpec, len(irisFeatures))
	for f, name := range irisFeatures {
		input[f] = process.ColumnSpec{Name: name, Kind: process.Number, Required: true}
	}
	output := process.ClassifierOutputs("species", classes)
	return process.ProcessInfo{
		Name:        IrisName,
		Description: "Iris species from sepal and petal measurements (cm): Gaussian naive Bayes trained on Fisher's iris data.",
		Input:       input,
		Output:      output,
		Sample:      []byte(irisSample),
		Process:     proc,
		Prompt:      true, // arithmetic only, and it checks ctx every 4096 rows
		RowWise:     true, // each row's probabilities come from its four measurements alone
	}, nil
}
