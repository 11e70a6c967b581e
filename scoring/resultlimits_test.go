package scoring_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// TestResultCellsLimit replays a small request to a model of many
// classes: the answer it would make is refused with 413, naming the rows,
// the result columns and the limit, before the model runs when the
// process declares its result columns and before anything is encoded when
// it does not.
func TestResultCellsLimit(t *testing.T) {
	const classes = 1000
	lm := manyClassModel(t, classes)
	var declaredCalls, wideCalls atomic.Int64
	declared := lm.ProcessInfo("classes")
	inner := declared.Process
	declared.Process = process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
		declaredCalls.Add(1)
		return inner.Score(ctx, in)
	})
	// wide answers as the model does but declares nothing.
	wide := process.ProcessInfo{Name: "wide", Process: process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
		wideCalls.Add(1)
		return inner.Score(ctx, in)
	})}
	f := newFixture(t, scoring.Config{}, declared, wide)

	tests := []struct {
		alias string
		rows  int
		calls *atomic.Int64
		want  int64 // calls of the process
	}{
		{"classes", 3000, &declaredCalls, 0},
		{"wide", 3000, &wideCalls, 1},
	}
	for _, tc := range tests {
		t.Run(tc.alias, func(t *testing.T) {
			body := manyRows(tc.rows)
			w := f.post(tc.alias, "", body)
			got := errorOf(t, w)
			if got.Status != 413 || got.Type != "too_many_result_cells" {
				t.Fatalf("%d rows (%d bytes) to a %d-class model: %d %.200s, want 413 too_many_result_cells", tc.rows, len(body), classes, w.Code, w.Body)
			}
			for _, figure := range []string{"3000 rows", fmt.Sprintf("%d result columns", classes+1), strconv.Itoa(scoring.DefaultMaxResultCells)} {
				if !strings.Contains(got.Message, figure) {
					t.Errorf("message %q does not name %q", got.Message, figure)
				}
			}
			if n := tc.calls.Load(); n != tc.want {
				t.Errorf("the process ran %d times, want %d", n, tc.want)
			}
		})
	}

	t.Run("within the limit", func(t *testing.T) {
		const rows = scoring.DefaultMaxResultCells / (classes + 1)
		w := f.post("classes", "", manyRows(rows))
		if w.Code != 200 {
			t.Fatalf("%d rows: %d %.200s", rows, w.Code, w.Body)
		}
		var resp struct{ Data []map[string]any }
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
			t.Fatal(err)
		}
		if len(resp.Data) != rows || len(resp.Data[rows-1]) != 2+classes+1 {
			t.Errorf("%d rows answered, the last with %d keys; want %d rows of %d", len(resp.Data), len(resp.Data[rows-1]), rows, 2+classes+1)
		}
	})

	t.Run("configured", func(t *testing.T) {
		f := newFixture(t, scoring.Config{Limits: scoring.Limits{MaxResultCells: 4}}, declared)
		if w := f.post("classes", "", manyRows(1)); errorOf(t, w).Type != "too_many_result_cells" {
			t.Errorf("one row of %d result columns under a limit of 4: %d %.200s", classes+1, w.Code, w.Body)
		}
	})
}
