package testutil

import (
	"testing"
	"time"
)

// MeasureCPU starts measuring the CPU time clock reads ([ProcessCPU] or,
// for a benchmark locked to its thread, [ThreadCPU]); the function it
// returns reports it per iteration as cpu-ns/op, when the clock could
// tell. On a shared machine it is a steadier measure of a benchmark than
// wall time: time spent waiting for a CPU does not count.
func MeasureCPU(b *testing.B, clock func() (time.Duration, bool)) (report func()) {
	start, ok := clock()
	return func() {
		if end, endOK := clock(); ok && endOK {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
