//go:build linux

package scoring

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time the calling thread has used; the caller
// locks its goroutine to the thread (runtime.LockOSThread). A benchmark of
// one goroutine measured by it is not charged for the time it waited for a
// CPU on a shared machine.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
