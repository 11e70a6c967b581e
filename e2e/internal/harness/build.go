package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// rootModule is the module whose command the suites build.
const rootModule = "github.com/scorehub/scorehub"

// binaries builds the server binary once per variant, on first use, in the
// directory Main made. Main sets it before any test runs.
var binaries *builds

// builds are the server binaries of one test binary's run, by whether they
// have the race detector, and the OpenAPI documents their servers serve,
// parsed. It is safe for concurrent use.
type builds struct {
	dir string
	mu  sync.Mutex
	bin map[bool]string
	err map[bool]error
	// docs holds a *Conformance by document text: every server of a run
	// serves the same document, and loading and validating it takes a
	// quarter of a second under the race detector.
	docs sync.Map
}

// Main makes a temporary directory for the server binaries, runs the tests
// and removes it. It returns the exit code for os.Exit; a suite's TestMain
// is
//
//	func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
//
// The binary is built the first time a test starts the server, once for
// the whole test binary: with the race detector when the test binary has
// it (see RaceEnabled), unless Options.WithoutRace.
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "scorehub-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binaries = &builds{dir: dir, bin: map[bool]string{}, err: map[bool]error{}}
	return m.Run()
}

// binary returns the server binary with or without the race detector,
// building it first if it is not there yet.
func (b *builds) binary(race bool) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bin, ok := b.bin[race]; ok {
		return bin, b.err[race]
	}
	bin := filepath.Join(b.dir, "standalone")
	if race {
		bin += "-race"
	}
	err := build(bin, race)
	b.bin[race], b.err[race] = bin, err
	return bin, err
}

// conformance returns the checker of the document spec, loading it the
// first time.
func (b *builds) conformance(spec []byte) (*Conformance, error) {
	if c, ok := b.docs.Load(string(spec)); ok {
		return c.(*Conformance), nil
	}
	c, err := LoadConformance(spec)
	if err != nil {
		return nil, err
	}
	got, _ := b.docs.LoadOrStore(string(spec), c)
	return got.(*Conformance), nil
}

// build builds the reference server, cmd/scorehub (the program go install
// installs, and examples/standalone runs), into bin. It builds in the root
// module's directory (found through the replace directive), with the root
// module's dependencies.
func build(bin string, race bool) error {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", rootModule).Output()
	if err != nil {
		return fmt.Errorf("harness: find the module %s: %w", rootModule, err)
	}
	root := strings.TrimSpace(string(out))
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./cmd/scorehub")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("harness: go build ./cmd/scorehub in %s: %w\n%s", root, err, out)
	}
	return nil
}
