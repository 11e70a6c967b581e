//go:build linux

package testutil

import (
	"syscall"
	"time"
)

// ThreadCPU returns the CPU time the calling thread has used, and whether
// it could tell; the caller locks its goroutine to the thread
// (runtime.LockOSThread).
func ThreadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
