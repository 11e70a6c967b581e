//go:build !linux

package scoring

import "time"

// threadCPU reports that this system's per-thread CPU time is not measured.
func threadCPU() (time.Duration, bool) { return 0, false }
