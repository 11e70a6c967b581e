//go:build linux

package testutil

import (
	"syscall"
	"time"
)

// ThreadCPU returns the CPU time the calling thread has used, and whether
// it could tell; the caller locks its goroutine to the thread
// (runtime.LockOSThread).
func ThreadCPU() (time.Duration, bool) { return rusageCPU(syscall.RUSAGE_THREAD) }
