// Package standalone tests the reference server as its users run it: the
// demo endpoint, restarts on the same data, the admin password, signals,
// draining, CORS, metrics and the profiling listener.
package standalone

import (
	"os"
	"testing"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
