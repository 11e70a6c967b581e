package xgboost_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/internal/demo"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/xgboost"
)

// TestExampleModel checks the iris model docs/models.md deploys: it loads
// with its metadata, reads and answers the same columns as the built-in
// iris demo, and its verification upload holds what it predicts, so the
// upload docs/models.md shows is accepted.
func TestExampleModel(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "models")
	artifact, err := os.ReadFile(filepath.Join(dir, "iris.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta process.ModelMetadata
	readJSON(t, filepath.Join(dir, "iris.metadata.json"), &meta)
	var upload struct {
		process.ModelMetadata
		Verification struct {
			Rows      []map[string]*float64 `json:"rows"`
			Expected  [][]float64           `json:"expected"`
			Tolerance float64               `json:"tolerance"`
		} `json:"verification"`
	}
	readJSON(t, filepath.Join(dir, "iris.verification.json"), &upload)
	if !slices.Equal(upload.Features, meta.Features) || !slices.Equal(upload.Classes, meta.Classes) || upload.Label != meta.Label {
		t.Errorf("iris.verification.json describes the model otherwise than iris.metadata.json")
	}

	m, err := xgboost.Format{}.Load(artifact, meta)
	if err != nil {
		t.Fatal(err)
	}
	iris, err := demo.Iris()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := columnNames(m.Schema.Inputs), columnNames(iris.Input); !slices.Equal(got, want) {
		t.Errorf("the example model reads %q, the iris demo %q", got, want)
	}
	if got, want := columnNames(m.Schema.Outputs), columnNames(iris.Output); !slices.Equal(got, want) {
		t.Errorf("the example model answers %q, the iris demo %q", got, want)
	}

	v := upload.Verification
	if len(v.Rows) == 0 || len(v.Rows) != len(v.Expected) {
		t.Fatalf("verification: %d rows, %d expected", len(v.Rows), len(v.Expected))
	}
	f := &fixture{Model: "iris", Metadata: meta, Rows: v.Rows}
	f.Schema.Inputs, f.Schema.Classes = meta.Features, meta.Classes
	got, err := m.Process.Score(context.Background(), process.Input{Table: f.table(t, 0, len(v.Rows))})
	if err != nil {
		t.Fatal(err)
	}
	x, species, names, err := demo.IrisData()
	if err != nil {
		t.Fatal(err)
	}
	pred, _ := got.Lookup("prediction(species)")
	for i, want := range v.Expected {
		for c, p := range want {
			col, _ := got.Lookup("confidence(" + meta.Classes[c] + ")")
			if g, _ := col.Number(i); math.Abs(g-p) > v.Tolerance*math.Max(1, math.Abs(p)) {
				t.Errorf("verification row %d: confidence(%s) = %v, the file expects %v", i, meta.Classes[c], g, p)
			}
		}
		// Each verification row is a flower of the data set; the model
		// must name its species, as the demo's data set does.
		j := slices.IndexFunc(x, func(r []float64) bool {
			return *v.Rows[i]["sepal_length"] == r[0] && *v.Rows[i]["sepal_width"] == r[1] &&
				*v.Rows[i]["petal_length"] == r[2] && *v.Rows[i]["petal_width"] == r[3]
		})
		if j < 0 {
			t.Fatalf("verification row %d is no flower of the iris data set", i)
		}
		if p, _ := pred.Text(i); p != names[species[j]] {
			t.Errorf("verification row %d: the model says %q, the data set %q", i, p, names[species[j]])
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func columnNames(specs []process.ColumnSpec) []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}
