package browser

import (
	"os"
	"testing"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
