package process_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry/process"
)

func TestResultLimitsCheck(t *testing.T) {
	tests := []struct {
		name            string
		l               process.ResultLimits
		cols, nameBytes int
		want            problem.Code // "" for none
	}{
		{"no limits", process.ResultLimits{Rows: 1 << 30}, 1 << 20, 1 << 30, ""},
		{"at the cell limit", process.ResultLimits{Rows: 10, MaxCells: 30}, 3, 0, ""},
		{"past the cell limit", process.ResultLimits{Rows: 10, MaxCells: 29}, 3, 0, problem.TooManyResultCells},
		{"no columns", process.ResultLimits{Rows: 10, MaxCells: 1, MaxBytes: 1}, 0, 0, ""},
		{"at the byte limit", process.ResultLimits{Rows: 10, MaxBytes: 10 * (12 + 3*4)}, 3, 12, ""},
		{"past the byte limit", process.ResultLimits{Rows: 10, MaxBytes: 10*(12+3*4) - 1}, 3, 12, problem.ResponseTooLarge},
		{"cells before bytes", process.ResultLimits{Rows: 10, MaxCells: 1, MaxBytes: 1}, 3, 12, problem.TooManyResultCells},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.l.Check(tt.cols, tt.nameBytes)
			var e *problem.Error
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check = %v, want none", err)
			case tt.want != "" && (!errors.As(err, &e) || e.Code != tt.want):
				t.Errorf("Check = %v, want %s", err, tt.want)
			}
		})
	}
}

// A process whose result columns depend on its input checks them before
// it builds its result.
func ExampleResultLimits_Check() {
	in := process.Input{Limits: process.ResultLimits{Rows: 3000, MaxCells: 2_000_000}}
	columns := []string{"prediction(label)"}
	for k := range 1000 {
		columns = append(columns, fmt.Sprintf("confidence(%d)", k))
	}
	names := 0
	for _, c := range columns {
		names += len(c)
	}
	fmt.Println(in.Limits.Check(len(columns), names))
	// Output:
	// too_many_result_cells: the answer would hold 3000 rows × 1001 result columns, more than the limit of 2000000 result cells
}
