package lightgbm

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/internal/testenv"
)

// lightgbmVar names the directory holding LightGBM's command-line program
// and lib_lightgbm.so, built from source as BENCHMARKS.md shows.
const lightgbmVar = "SCOREHUB_LIGHTGBM"

// lightgbm3Var names the same of LightGBM 3.3.5, which writes model
// version v3 and trains the fixtures named v3_*. Unset, those are left as
// committed.
const lightgbm3Var = "SCOREHUB_LIGHTGBM3"

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
	args := []string{dir, out}
	v3 := os.Getenv(lightgbm3Var)
	if v3 != "" {
		args = append(args, v3)
	}
	python.Run(t, filepath.Join("testdata", "gen.py"), args...)
	committed := modeltest.FixtureNames(t, "testdata")
	fresh := modeltest.FixtureNames(t, out)
	var names []string
	for _, name := range committed {
		switch {
		case slices.Contains(fresh, name):
			names = append(names, name)
		case v3 == "" && strings.HasPrefix(name, "v3_"):
			t.Logf("%s: %s is not set, so the committed v3 fixture stays as it is", name, lightgbm3Var)
		default:
			t.Errorf("gen.py no longer writes the fixture %s", name)
		}
	}
	for _, name := range fresh {
		if !slices.Contains(committed, name) {
			t.Errorf("gen.py writes %s, which testdata does not hold (run it to update testdata)", name)
		}
	}
	for _, name := range names {
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

// TestRegenerateContribs runs testdata/contribs.py with the LightGBM that
// SCOREHUB_LIGHTGBM names on the committed models and checks that it
// writes the committed contributions again, and that the reader explains
// as LightGBM does (see TestExplainFixtures).
func TestRegenerateContribs(t *testing.T) {
	dir := lightgbmDir(t)
	python.Require(t)
	out := t.TempDir()
	python.Run(t, filepath.Join("testdata", "contribs.py"), dir, "testdata", out)
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			want, got := filepath.Join("testdata", name+".contribs.json"), filepath.Join(out, name+".contribs.json")
			_, errWant := os.Stat(want)
			_, errGot := os.Stat(got)
			if (errWant == nil) != (errGot == nil) {
				t.Fatalf("contribs.py writes %s: %v; testdata holds it: %v", name+".contribs.json", errGot == nil, errWant == nil)
			}
			if errGot != nil {
				return
			}
			modeltest.SameJSON(t, "contribs.py", want, got)
			f, _, lm, e, err := explainOf(t, "testdata", name)
			if err != nil {
				t.Fatal(err)
			}
			checkContribs(t, f, lm, e, readContribs(t, out, name))
		})
	}
}
