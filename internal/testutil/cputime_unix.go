//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// ProcessCPU returns the CPU time this process has used, user and system,
// and whether it could tell. On a shared machine it is a steadier measure
// of a benchmark than wall time: time spent waiting for a CPU does not
// count.
func ProcessCPU() (time.Duration, bool) { return rusageCPU(syscall.RUSAGE_SELF) }

// rusageCPU returns the user and system CPU time getrusage(2) reports for
// who, and whether it could tell.
func rusageCPU(who int) (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
