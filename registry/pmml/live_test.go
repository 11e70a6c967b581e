package pmml_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/testenv"
)

// python is the interpreter Debian's python3-sklearn and python3-pandas
// install into; the python3 first on PATH may be another build without them.
const python = "/usr/bin/python3"

// requirePython ends t unless python can import scikit-learn 1.2 and
// pandas, as testenv.SkipOrFail rules.
func requirePython(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		testenv.SkipOrFail(t, "%s is missing: install python3-sklearn python3-pandas to test against scikit-learn itself", python)
	}
	out, err := exec.Command(python, "-c", "import pandas, sklearn; print(sklearn.__version__)").CombinedOutput()
	if err != nil {
		testenv.SkipOrFail(t, "%s cannot import sklearn and pandas (install python3-sklearn python3-pandas): %s", python, bytes.TrimSpace(out))
	}
	if v := strings.TrimSpace(string(out)); !strings.HasPrefix(v, "1.2.") {
		testenv.SkipOrFail(t, "the fixtures come from scikit-learn 1.2; %s has scikit-learn %s", python, v)
	}
}

// TestRegenerate runs testdata/export.py against the installed scikit-learn
// and checks that it writes the committed fixtures again: the same PMML and
// the same answers, numbers within 1e-9 relative (another BLAS may sum in
// another order). The reader is then checked against the freshly computed
// answers too.
func TestRegenerate(t *testing.T) {
	requirePython(t)
	out := t.TempDir()
	cmd := exec.Command(python, filepath.Join("testdata", "export.py"), "--out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("export.py: %v\n%s", err, b)
	}

	committed := fixtureNames(t, "testdata")
	if fresh := fixtureNames(t, out); !slices.Equal(fresh, committed) {
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
