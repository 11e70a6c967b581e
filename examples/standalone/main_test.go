package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAliasRunsTheReferenceServer: go run ./examples/standalone runs the
// reference server, the program cmd/scorehub installs.
func TestAliasRunsTheReferenceServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program")
	}
	bin := filepath.Join(t.TempDir(), "standalone")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "scorehub ") {
		t.Errorf("standalone -version: %v, %q; want the reference server's version", err, out)
	}
	out, _ = exec.Command(bin, "-h").CombinedOutput()
	if !strings.Contains(string(out), "-max-result-cells") {
		t.Errorf("standalone -h does not list the reference server's flags:\n%s", out)
	}
}
