package xgboost_test

import (
	"bytes"
	"os"
	"os/exec"
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
// predictions. testdata/contribs.py then writes XGBoost's contributions
// for the fresh models, which must be the committed ones.
func TestRegenerate(t *testing.T) {
	python.Require(t)
	out, examples := t.TempDir(), t.TempDir()
	python.Run(t, filepath.Join("testdata", "gen.py"), "--out", out, "--examples", examples)
	python.Run(t, filepath.Join("testdata", "contribs.py"), "--models", out, "--out", out)

	committed := modeltest.SameFixtureNames(t, "gen.py", "testdata", out)
	for _, name := range committed {
		t.Run(name, func(t *testing.T) {
			modeltest.SameJSON(t, "gen.py", filepath.Join("testdata", name+".rows.json"), filepath.Join(out, name+".rows.json"))
			modeltest.SameJSON(t, "gen.py", filepath.Join("testdata", name+".json"), filepath.Join(out, name+".json"))
			modeltest.SameJSON(t, "contribs.py", filepath.Join("testdata", name+".contribs.json"), filepath.Join(out, name+".contribs.json"))
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

// TestCancerExample runs examples/models/cancer.py, the training script the
// README shows, in a directory of its own and checks that it writes the
// model and upload the README's commands send: what a reader runs is what
// the README deploys.
func TestCancerExample(t *testing.T) {
	python.Require(t)
	dir := filepath.Join("..", "..", "examples", "models")
	script, err := filepath.Abs(filepath.Join(dir, "cancer.py"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command(python.Path, script)
	cmd.Dir = out
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cancer.py: %v\n%s", err, b)
	}
	for _, name := range []string{"cancer.json", "cancer.upload.json"} {
		modeltest.SameJSON(t, "cancer.py", filepath.Join(dir, name), filepath.Join(out, name))
	}
	// The reference rows are the data set's own, written by pandas.
	want, err := os.ReadFile(filepath.Join(dir, "cancer.reference.csv"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, "cancer.reference.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("cancer.py writes other reference rows than examples/models/cancer.reference.csv")
	}
}
