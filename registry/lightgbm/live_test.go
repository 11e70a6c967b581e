package lightgbm

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/internal/testenv"
)

// lightgbmVar names the directory holding LightGBM's command-line program
// and lib_lightgbm.so, built from source as BENCHMARKS.md shows.
const lightgbmVar = "SCOREHUB_LIGHTGBM"

// python runs gen.py: numpy and scikit-learn make its data, and it calls
// lib_lightgbm.so through ctypes.
var python = modeltest.Python{
	Path:     "/usr/bin/python3",
	Imports:  []string{"numpy", "sklearn"},
	Packages: "python3-numpy python3-sklearn",
	Module:   "numpy",
	Library:  "numpy",
	Version:  "1",
}

// lightgbmDir returns the directory lightgbmVar names, or ends the test:
// LightGBM is the one component CI cannot build, so its absence is a skip
// everywhere.
func lightgbmDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(lightgbmVar)
	for _, f := range []string{"lightgbm", "lib_lightgbm.so"} {
		if _, err := os.Stat(filepath.Join(dir, f)); dir == "" || err != nil {
			testenv.SkipUnbuildable(t, "lightgbm", "%s does not name a directory holding LightGBM 4.6.0's %s", lightgbmVar, f)
		}
	}
	return dir
}

// paths matches the parameters that name the files of a training run,
// which differ from one run to the next.
var paths = regexp.MustCompile(`(?m)^\[(data|output_model|input_model): .*\]$`)

// TestRegenerate trains every fixture again with the LightGBM that
// SCOREHUB_LIGHTGBM names and checks that it writes the committed models
// and answers again, and that the reader agrees with those answers to the
// last bit (see checkFixture).
func TestRegenerate(t *testing.T) {
	dir := lightgbmDir(t)
	python.Require(t)
	out := t.TempDir()
	python.Run(t, filepath.Join("testdata", "gen.py"), dir, out)
	for _, name := range modeltest.SameFixtureNames(t, "gen.py", "testdata", out) {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(out, name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			if string(paths.ReplaceAll(want, nil)) != string(paths.ReplaceAll(got, nil)) {
				t.Errorf("gen.py now writes %s.txt differently (run it to update testdata if that is on purpose)", name)
			}
			modeltest.SameJSON(t, "gen.py", filepath.Join("testdata", name+".rows.json"), filepath.Join(out, name+".rows.json"))
			checkFixture(t, out, name)
		})
	}
}
