package xgboost_test

import (
	"path/filepath"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
)

// python is the interpreter with the XGBoost that wrote the fixtures, and
// the scikit-learn and pandas gen.py prepares their data with.
var python = modeltest.Python{
	Path:     "/usr/bin/python3",
	Imports:  []string{"sklearn", "pandas", "xgboost"},
	Packages: "python3-xgboost python3-sklearn python3-pandas",
	Module:   "xgboost",
	Library:  "XGBoost",
	Version:  "1.7",
}

// TestRegenerate runs testdata/gen.py against the installed XGBoost and
// checks that it writes the committed fixtures and example model again: the
// same trees and the same predictions, numbers within modeltest.Tolerance
// (XGBoost writes its float32s in as few digits as identify them, which
// another build may choose differently), and that the reader agrees with
// the freshly computed predictions too. The .ubj files are held to their
// predictions.
func TestRegenerate(t *testing.T) {
	python.Require(t)
	out, examples := t.TempDir(), t.TempDir()
	python.Run(t, filepath.Join("testdata", "gen.py"), "--out", out, "--examples", examples)

	committed := modeltest.SameFixtureNames(t, "gen.py", "testdata", out)
	for _, name := range committed {
		t.Run(name, func(t *testing.T) {
			modeltest.SameJSON(t, "gen.py", filepath.Join("testdata", name+".rows.json"), filepath.Join(out, name+".rows.json"))
			modeltest.SameJSON(t, "gen.py", filepath.Join("testdata", name+".json"), filepath.Join(out, name+".json"))
			f := readFixture(t, out, name)
			for _, ext := range []string{".json", ".ubj"} {
				checkFixture(t, out, name, ext, f)
			}
		})
	}
	for _, name := range []string{"iris.json", "iris.metadata.json", "iris.verification.json"} {
		modeltest.SameJSON(t, "gen.py", filepath.Join("..", "..", "examples", "models", name), filepath.Join(examples, name))
	}
}
