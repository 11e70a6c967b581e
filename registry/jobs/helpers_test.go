package jobs_test

import (
	"flag"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func newClock() *testutil.Clock {
	return testutil.NewClock(time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC))
}
