// Package durability tests what the reference server promises under
// crashes and sustained load: TestCrashDurability kills it with SIGKILL in
// the middle of writes and checks every acknowledged one after a restart,
// and TestSoak (opt-in, SCOREHUB_SOAK) drives every kind of client at once
// for a while and checks for errors, lost writes and leaks.
package durability

import (
	"os"
	"testing"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
