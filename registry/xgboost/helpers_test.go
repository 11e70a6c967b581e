package xgboost

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// obj is a JSON object of a hand-made model.
type obj = map[string]any

// stump is a tree of one split on feature f at cond, with leaves lo (left)
// and hi (right); missing values go left when dflt is 1.
func stump(f int, cond, lo, hi float32, dflt int) obj {
	return treeOf([]int{1, -1, -1}, []int{2, -1, -1}, []int{f, 0, 0}, []float32{cond, lo, hi}, []int{dflt, 0, 0})
}

// treeOf is a tree from its arrays, as XGBoost 1.7 writes them.
func treeOf(left, right, feat []int, cond []float32, dflt []int) obj {
	n := len(left)
	return obj{
		"base_weights":        make([]float32, n),
		"categories":          []int{},
		"categories_nodes":    []int{},
		"categories_segments": []int{},
		"categories_sizes":    []int{},
		"default_left":        dflt,
		"id":                  0,
		"left_children":       left,
		"right_children":      right,
		"split_conditions":    cond,
		"split_indices":       feat,
		"split_type":          make([]int, n),
		"tree_param":          obj{"num_deleted": "0", "num_feature": "2", "num_nodes": itoa(n), "size_leaf_vector": "0"},
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// modelOf is a gbtree model of two features with the given objective,
// num_class and trees; tree_info puts every tree in group 0.
func modelOf(objective string, numClass int, trees ...obj) obj {
	return obj{
		"learner": obj{
			"attributes":    obj{},
			"feature_names": []string{},
			"feature_types": []string{},
			"gradient_booster": obj{
				"model": obj{
					"gbtree_model_param": obj{"num_parallel_tree": "1", "num_trees": itoa(len(trees)), "size_leaf_vector": "0"},
					"tree_info":          make([]int, len(trees)),
					"trees":              trees,
				},
				"name": "gbtree",
			},
			"learner_model_param": obj{"base_score": "5E-1", "boost_from_average": "1", "num_class": itoa(numClass), "num_feature": "2", "num_target": "1"},
			"objective":           obj{"name": objective},
		},
		"version": []int{1, 7, 4},
	}
}

// at returns the object at the path of keys in m.
func at(m obj, keys ...string) obj {
	for _, k := range keys {
		m = m[k].(obj)
	}
	return m
}

func encodeJSON(t testing.TB, m obj) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// encodeUBJ writes v as UBJSON the way XGBoost does: objects with int64
// key lengths, arrays of numbers typed and counted.
func encodeUBJ(v any) []byte {
	var b []byte
	var enc func(v any)
	length := func(n int) {
		b = append(b, 'L')
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	enc = func(v any) {
		switch v := v.(type) {
		case obj:
			b = append(b, '{')
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				length(len(k))
				b = append(b, k...)
				enc(v[k])
			}
			b = append(b, '}')
		case string:
			b = append(b, 'S')
			length(len(v))
			b = append(b, v...)
		case int:
			b = append(b, 'L')
			b = binary.BigEndian.AppendUint64(b, uint64(v))
		case float32:
			b = append(b, 'd')
			b = binary.BigEndian.AppendUint32(b, math.Float32bits(v))
		case float64:
			b = append(b, 'd')
			b = binary.BigEndian.AppendUint32(b, math.Float32bits(float32(v)))
		case bool:
			if v {
				b = append(b, 'T')
			} else {
				b = append(b, 'F')
			}
		case []int:
			b = append(b, '[', '$', 'l', '#')
			length(len(v))
			for _, x := range v {
				b = binary.BigEndian.AppendUint32(b, uint32(int32(x)))
			}
		case []float32:
			b = append(b, '[', '$', 'd', '#')
			length(len(v))
			for _, x := range v {
				b = binary.BigEndian.AppendUint32(b, math.Float32bits(x))
			}
		case []string:
			b = append(b, '[', '#')
			length(len(v))
			for _, x := range v {
				enc(x)
			}
		case []obj:
			b = append(b, '[', '#')
			length(len(v))
			for _, x := range v {
				enc(x)
			}
		case []any:
			b = append(b, '[')
			for _, x := range v {
				enc(x)
			}
			b = append(b, ']')
		case nil:
			b = append(b, 'Z')
		default:
			panic("encodeUBJ: unsupported type")
		}
	}
	enc(v)
	return b
}

// load loads m, saved as JSON and as UBJSON, and fails the test unless both
// load alike; it returns the JSON one.
func load(t testing.TB, m obj, meta process.ModelMetadata) *process.LoadedModel {
	t.Helper()
	lm, err := Format{}.Load(encodeJSON(t, m), meta)
	if err != nil {
		t.Fatalf("Load(JSON): %v", err)
	}
	if _, err := (Format{}).Load(encodeUBJ(m), meta); err != nil {
		t.Fatalf("Load(UBJSON): %v", err)
	}
	return lm
}

// rowsOf is a table of the two features f0 and f1; NaN is missing.
func rowsOf(rows ...[2]float64) *process.Table {
	f0 := make([]float64, len(rows))
	f1 := make([]float64, len(rows))
	for i, r := range rows {
		f0[i], f1[i] = r[0], r[1]
	}
	return tabletest.Must(len(rows), process.NumberColumn("f0", f0, nil), process.NumberColumn("f1", f1, nil))
}

// score scores t and returns the result's Number columns by name.
func score(t testing.TB, lm *process.LoadedModel, in *process.Table) map[string][]float64 {
	t.Helper()
	out, err := lm.Process.Score(context.Background(), process.Input{Table: in})
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	cols := map[string][]float64{}
	for i := range out.NumColumns() {
		c := out.Column(i)
		if c.Kind == process.Number {
			cols[c.Name] = c.Numbers
		}
	}
	return cols
}

// near reports whether got is want to float32 precision.
func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-6*math.Max(1, math.Abs(want))
}

func sig(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
