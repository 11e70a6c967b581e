//go:build !unix

package testutil

import "time"

// ProcessCPU reports that this system's CPU time is not measured.
func ProcessCPU() (time.Duration, bool) { return 0, false }
