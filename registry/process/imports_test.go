package process_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestFormatImports keeps the model formats on the vocabulary: a format
// turns bytes into a Process and needs nothing of the records, stores or
// jobs above it. Go refuses an import only under internal/, which limits
// who may import a package, not what it imports, so this is checked here.
// internal/treeshap, the arithmetic of explanations the tree formats
// share, is allowed: it imports nothing of the module, which the check of
// every dependency below keeps true.
func TestFormatImports(t *testing.T) {
	const module = "github.com/scorehub/scorehub"
	allowed := []string{module + "/registry/process", module + "/problem", module + "/internal/treeshap"}
	for _, format := range []string{"xgboost", "lightgbm", "pmml", "onnx"} {
		t.Run(format, func(t *testing.T) {
			pkg := module + "/registry/" + format
			out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
			if err != nil {
				if ee, ok := err.(*exec.ExitError); ok {
					t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
				}
				t.Skipf("go list: %v", err)
			}
			for _, dep := range strings.Fields(string(out)) {
				own := dep == pkg || strings.HasPrefix(dep, pkg+"/")
				if !strings.HasPrefix(dep, module+"/") || own || slices.Contains(allowed, dep) {
					continue
				}
				t.Errorf("%s depends on %s; a format imports only registry/process, problem, internal/treeshap and its own packages", pkg, dep)
			}
		})
	}
}
