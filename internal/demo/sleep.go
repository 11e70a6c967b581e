package demo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/scorehub/scorehub/registry/process"
)

// SleepName is the catalog name of the sleep process.
const SleepName = "sleep"

// Sleep returns a process that waits for its macro ms milliseconds, or
// until its context ends, and answers one column, slept, of zeros. It does
// nothing useful: it holds a queue slot for as long as asked, which is what
// trying a timeout, a full queue, a drain or the stopping of a job needs.
// It is safe for concurrent use.
func Sleep() process.ProcessInfo {
	return process.ProcessInfo{
		Name:        SleepName,
		Description: "Waits for the macro ms milliseconds, then answers a column slept of zeros.",
		Output:      []process.ColumnSpec{{Name: "slept", Kind: process.Number}},
		Process: process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
			ms, err := strconv.Atoi(in.Macros["ms"])
			if err != nil || ms < 0 {
				return nil, fmt.Errorf("demo: the macro ms must be a number of milliseconds, not %q", in.Macros["ms"])
			}
			timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
			defer timer.Stop()
			select {
			case <-timer.C:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return process.NewTable(in.Table.Rows(), process.NumberColumn("slept", make([]float64, in.Table.Rows()), nil))
		}),
	}
}
