package pmml_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
// and checks that it writes the committed fixtures again: the same PMML and
// the same answers, numbers within 1e-9 relative (another BLAS may sum in
// another order). The reader is then checked against the freshly computed
// answers too.
func TestRegenerate(t *testing.T) {
	python.Require(t)
	out := t.TempDir()
	python.Run(t, filepath.Join("testdata", "export.py"), "--out", out)

	committed := modeltest.FixtureNames(t, "testdata")
	if fresh := modeltest.FixtureNames(t, out); !slices.Equal(fresh, committed) {
		t.Fatalf("export.py writes the fixtures %q; testdata holds %q (run it to update testdata)", fresh, committed)
	}
	for _, name := range committed {
		t.Run(name, func(t *testing.T) {
			for _, ext := range []string{".pmml", ".rows.json"} {
				sameFile(t, filepath.Join("testdata", name+ext), filepath.Join(out, name+ext))
			}
			checkFixture(t, out, name, readFixture(t, out, name))
		})
	}
}

// number matches a number as export.py writes one (Python's repr of a
// float, or an integer).
var number = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?`)

// sameFile fails t unless the files at want and got are the same text
// around their numbers and the same numbers within 1e-9 relative.
func sameFile(t *testing.T, want, got string) {
	t.Helper()
	var texts [2]string
	for i, p := range []string{want, got} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[i] = string(b)
	}
	a, b := texts[0], texts[1]
	an, bn := number.FindAllStringIndex(a, -1), number.FindAllStringIndex(b, -1)
	differ := func(what string) {
		t.Errorf("export.py now writes %s differently: %s (run it to update testdata if scikit-learn changed on purpose)", filepath.Base(want), what)
	}
	if len(an) != len(bn) {
		differ(fmt.Sprintf("%d numbers, was %d", len(bn), len(an)))
		return
	}
	pa, pb := 0, 0
	for i := range an {
		if a[pa:an[i][0]] != b[pb:bn[i][0]] {
			differ(fmt.Sprintf("the text before number %d changed", i+1))
			return
		}
		x, errX := strconv.ParseFloat(a[an[i][0]:an[i][1]], 64)
		y, errY := strconv.ParseFloat(b[bn[i][0]:bn[i][1]], 64)
		if errX != nil || errY != nil || math.Abs(x-y) > 1e-9*math.Max(1, math.Abs(x)) {
			differ(fmt.Sprintf("number %d is %s, was %s", i+1, b[bn[i][0]:bn[i][1]], a[an[i][0]:an[i][1]]))
			return
		}
		pa, pb = an[i][1], bn[i][1]
	}
	if a[pa:] != b[pb:] {
		differ("the text after the last number changed")
	}
}
