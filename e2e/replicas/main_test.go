// Package replicas tests the reference server run as several replicas over
// one PostgreSQL database, as real processes: a write through any replica
// is served by the others within a second, a job is read and stopped
// through any of them and ended by the others when its replica dies, and
// scoring goes on while the database restarts. The tests start their own
// PostgreSQL server (package internal/pgtest) and skip without one, or fail
// when SCOREHUB_REQUIRE_ALL_TESTS=1.
package replicas

import (
	"os"
	"testing"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
