package pmml_test

import (
	"path/filepath"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
)

// python is the interpreter with the scikit-learn that trained the
// fixtures, and the pandas export.py prepares their data with.
var python = modeltest.Python{
	Path:     "/usr/bin/python3",
	Imports:  []string{"pandas", "sklearn"},
	Packages: "python3-sklearn python3-pandas",
	Module:   "sklearn",
	Library:  "scikit-learn",
	Version:  "1.2",
}

// TestRegenerate runs testdata/export.py against the installed scikit-learn
// and checks that it writes the committed fixtures again: the same PMML
// elements and attributes and the same answers, numbers within
// modeltest.Tolerance (another BLAS may sum in another order). The reader
// is then checked against the freshly computed answers too.
func TestRegenerate(t *testing.T) {
	python.Require(t)
	out := t.TempDir()
	python.Run(t, filepath.Join("testdata", "export.py"), "--out", out)

	committed := modeltest.SameFixtureNames(t, "export.py", "testdata", out)
	for _, name := range committed {
		t.Run(name, func(t *testing.T) {
			modeltest.SameXML(t, "export.py", filepath.Join("testdata", name+".pmml"), filepath.Join(out, name+".pmml"))
			modeltest.SameJSON(t, "export.py", filepath.Join("testdata", name+".rows.json"), filepath.Join(out, name+".rows.json"))
			checkFixture(t, out, name, readFixture(t, out, name))
		})
	}
}
