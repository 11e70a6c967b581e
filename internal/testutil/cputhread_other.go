//go:build !linux

package testutil

import "time"

// ThreadCPU reports that this system's per-thread CPU time is not
// measured.
func ThreadCPU() (time.Duration, bool) { return 0, false }
