package pmml_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// and checks that it writes the committed fixtures again, byte for byte:
// the same PMML and the same answers. The reader is then checked against
// the freshly computed answers too.
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

// sameFile fails t unless the files at want and got hold the same bytes.
func sameFile(t *testing.T, want, got string) {
	t.Helper()
	a, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("export.py now writes %s differently (%d bytes, was %d): run it to update testdata if scikit-learn changed on purpose", filepath.Base(want), len(b), len(a))
	}
}
