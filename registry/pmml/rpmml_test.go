package pmml_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/registry/pmml"
	"github.com/scorehub/scorehub/registry/process"
)

// TestRPMMLArrayCount reads testdata/r/iris_rpart.pmml, a regression tree
// written in the style of R's pmml package: its split on Species says
// n="3" but lists the two species it holds. The two are read, as other
// evaluators read them, and the loaded model says so in its warnings. The
// scores are the iris data set's mean petal lengths by species.
func TestRPMMLArrayCount(t *testing.T) {
	m := modeltest.Load(t, pmml.Format{}, filepath.Join("testdata", "r"), "iris_rpart.pmml", process.ModelMetadata{})
	want := []string{`the SimpleSetPredicate on "Species": an Array says it holds 3 values but holds 2; the 2 it holds were read`}
	if !slices.Equal(m.Schema.Warnings, want) {
		t.Errorf("warnings %q, want %q", m.Schema.Warnings, want)
	}
	species := []string{"setosa", "versicolor", "virginica"}
	got := modeltest.Score(t, m, modeltest.Table(t, 0, 3, process.TextColumn("Species", species, nil)))
	col, ok := got.Lookup("prediction(Petal.Length)")
	if !ok {
		t.Fatalf("no prediction column in %v", got)
	}
	for i, w := range []float64{1.462, 4.26, 5.552} {
		// The score is the file's text read as a float64, as the literal is.
		if v, ok := col.Number(i); !ok || v != w {
			t.Errorf("%s: prediction %v (present %v), want %v", species[i], v, ok, w)
		}
	}
}
