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
	"github.com/scorehub/scorehub/registry/xgboost"
	"github.com/scorehub/scorehub/scoring"
)

// manyClassModel is an XGBoost multi:softprob model of k classes over
// the features f0 and f1: one stump a class, as XGBoost 1.7 writes them.
// Its answer has 1 + k result columns.
func manyClassModel(t testing.TB, k int) *process.LoadedModel {
	t.Helper()
	type obj = map[string]any
	trees := make([]obj, k)
	info := make([]int, k)
	for i := range trees {
		info[i] = i
		trees[i] = obj{
			"base_weights": []float32{0, 0, 0}, "categories": []int{}, "categories_nodes": []int{},
			"categories_segments": []int{}, "categories_sizes": []int{},
			"default_left": []int{1, 0, 0}, "id": i,
			"left_children": []int{1, -1, -1}, "right_children": []int{2, -1, -1},
			"split_conditions": []float32{float32(i % 7), -0.5, float32(i%5) / 10},
			"split_indices":    []int{i % 2, 0, 0}, "split_type": []int{0, 0, 0},
			"tree_param": obj{"num_deleted": "0", "num_feature": "2", "num_nodes": "3", "size_leaf_vector": "0"},
		}
	}
	m := obj{
		"learner": obj{
			"attributes": obj{}, "feature_names": []string{}, "feature_types": []string{},
			"gradient_booster": obj{
				"model": obj{
					"gbtree_model_param": obj{"num_parallel_tree": "1", "num_trees": strconv.Itoa(k), "size_leaf_vector": "0"},
					"tree_info":          info,
					"trees":              trees,
				},
				"name": "gbtree",
			},
			"learner_model_param": obj{"base_score": "5E-1", "boost_from_average": "1", "num_class": strconv.Itoa(k),
				"num_feature": "2", "num_target": "1"},
			"objective": obj{"name": "multi:softprob", "softmax_multiclass_param": obj{"num_class": strconv.Itoa(k)}},
		},
		"version": []int{1, 7, 4},
	}
	artifact, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	lm, err := xgboost.Format{}.Load(artifact, process.ModelMetadata{})
	if err != nil {
		t.Fatal(err)
	}
	return lm
}

// manyRows is a request body of n rows of f0 and f1.
func manyRows(n int) string {
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"f0":%d.5,"f1":%d}`, i%9, i%4)
	}
	b.WriteString("]}")
	return b.String()
}

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
