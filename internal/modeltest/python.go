package modeltest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/testenv"
)

// Python is an interpreter with the modules a fixture generator imports. The
// zero value is not usable: every field is needed for the messages of
// [Python.Require].
//
// A Python is safe for concurrent use; its methods only read it.
type Python struct {
	// Path is the interpreter, e.g. /usr/bin/python3 where Debian's
	// python3-* packages install; the python3 first on PATH may be another
	// build without them.
	Path string
	// Imports are the modules the generator imports, e.g. "sklearn" and
	// "pandas".
	Imports []string
	// Packages are what to install to have them, as a message shows it:
	// "python3-sklearn python3-pandas".
	Packages string
	// Module is the one of Imports that trained the fixtures, whose
	// version must start with Version ("1.7" for "1.7.4").
	Module string
	// Library is Module's name for people: "XGBoost", "scikit-learn".
	Library string
	// Version is the release the fixtures come from: "1.7".
	Version string
}

// Require ends t unless p.Path can import every module of p.Imports and
// p.Module is release p.Version, as testenv.SkipOrFail rules.
func (p Python) Require(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(p.Path); err != nil {
		testenv.SkipOrFail(t, "%s is missing: install %s to test against %s itself", p.Path, p.Packages, p.Library)
	}
	script := "import " + strings.Join(p.Imports, ", ") + "; print(" + p.Module + ".__version__)"
	out, err := exec.Command(p.Path, "-c", script).CombinedOutput()
	if err != nil {
		testenv.SkipOrFail(t, "%s cannot import %s (install %s): %s", p.Path, strings.Join(p.Imports, ", "), p.Packages, bytes.TrimSpace(out))
	}
	if v := strings.TrimSpace(string(out)); !strings.HasPrefix(v, p.Version+".") {
		testenv.SkipOrFail(t, "the fixtures come from %s %s; %s has %s %s", p.Library, p.Version, p.Path, p.Library, v)
	}
}

// Run runs script with args under p.Path and fails t, showing the script's
// output, unless it succeeds. Call [Python.Require] first.
func (p Python) Run(t testing.TB, script string, args ...string) {
	t.Helper()
	cmd := exec.Command(p.Path, append([]string{script}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(script), err, b)
	}
}
