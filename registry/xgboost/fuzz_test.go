package xgboost

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// fuzzLimits keep the fuzzers' models small, so that a run explores
// shapes rather than sizes.
var fuzzLimits = Limits{MaxBytes: 1 << 20, MaxTrees: 64, MaxNodes: 256, MaxDepth: 16, MaxFeatures: 16, MaxClasses: 8}

// covered gives tree tr the covers (sum_hessian) explanations need.
func covered(tr obj) obj {
	n := len(tr["left_children"].([]int))
	c := make([]float32, n)
	for i := range c {
		c[i] = float32(n - i)
	}
	tr["sum_hessian"] = c
	return tr
}

// fuzzSeeds are small models of every kind the reader scores, most of
// their trees with covers, so that they explain too.
func fuzzSeeds() []obj {
	cat := covered(treeOf([]int{1, -1, -1}, []int{2, -1, -1}, []int{0, 0, 0}, []float32{0, 1, 2}, []int{0, 0, 0}))
	cat["split_type"] = []int{1, 0, 0}
	cat["categories_nodes"], cat["categories_segments"], cat["categories_sizes"], cat["categories"] = []int{0}, []int{0}, []int{2}, []int{1, 3}
	multi := modelOf("multi:softprob", 3, stump(0, 0, 1, -1, 1), stump(1, 0.5, 0, 1, 0), stump(0, 2, 1, 0, 1))
	at(multi, "learner", "gradient_booster", "model")["tree_info"] = []int{0, 1, 2}
	dart := modelOf("reg:squarederror", 0, covered(stump(0, 0, 1, 2, 0)))
	at(dart, "learner")["gradient_booster"] = obj{"name": "dart", "gbtree": at(dart, "learner", "gradient_booster"), "weight_drop": []float32{0.5}}
	deep := modelOf("binary:logistic", 0, covered(treeOf([]int{1, 3, -1, 5, -1, -1, -1}, []int{2, 4, -1, 6, -1, -1, -1},
		[]int{0, 1, 0, 0, 0, 0, 0}, []float32{0.5, 1, 3, -1, 4, 5, 6}, []int{1, 0, 0, 1, 0, 0, 0})))
	lin := modelOf("multi:softmax", 2)
	at(lin, "learner")["gradient_booster"] = obj{"name": "gblinear", "model": obj{"boosted_rounds": 1, "weights": []float32{1, -1, 0.5, 2, 0, 0}}}
	return []obj{
		modelOf("binary:logistic", 0, stump(0, 0.5, -1, 1, 1)),
		modelOf("reg:gamma", 0, stump(1, 2, 0.5, 1.5, 0), stump(0, -1, 0, 1, 1)),
		modelOf("reg:squarederror", 0, cat),
		multi, dart, deep, lin,
	}
}

// checkLoaded fails unless a loaded model scores rows without trouble,
// and explains them when it can.
func checkLoaded(t *testing.T, lm *process.LoadedModel, err error) {
	if err != nil {
		if !errors.Is(err, process.ErrModelInvalid) && !errors.Is(err, process.ErrModelLimit) && !errors.Is(err, process.ErrModelFormat) {
			t.Fatalf("Load failed with an error of no model kind: %v", err)
		}
		return
	}
	var cols []process.Column
	for _, in := range lm.Schema.Inputs {
		cols = append(cols, process.NumberColumn(in.Name, []float64{0, -1, math.NaN(), 1e40, 3}, nil))
	}
	in := process.Input{Table: tabletest.Must(5, cols...)}
	out, err := lm.Process.Score(context.Background(), in)
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	if out.Rows() != 5 || out.NumColumns() != len(lm.Schema.Outputs) {
		t.Fatalf("Score answered %d rows × %d columns, want 5 × %d", out.Rows(), out.NumColumns(), len(lm.Schema.Outputs))
	}
	if e, ok := lm.Process.(process.Explainer); ok {
		x, err := e.Explain(context.Background(), in)
		if err != nil {
			t.Fatalf("Explain: %v", err)
		}
		if err := x.Check(5); err != nil {
			t.Fatal(err)
		}
	}
}

func FuzzLoadJSON(f *testing.F) {
	for _, m := range fuzzSeeds() {
		f.Add(encodeJSON(f, m))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lm, err := Format{Limits: fuzzLimits}.Load(b, process.ModelMetadata{})
		checkLoaded(t, lm, err)
	})
}

func FuzzLoadUBJSON(f *testing.F) {
	for _, m := range fuzzSeeds() {
		f.Add(encodeUBJ(m))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lm, err := Format{Limits: fuzzLimits}.Load(b, process.ModelMetadata{})
		checkLoaded(t, lm, err)
	})
}

// FuzzUBJSON reads any document with the UBJSON reader, value by value,
// as the walker does: it must fail cleanly or read to the end.
func FuzzUBJSON(f *testing.F) {
	f.Add(encodeUBJ(fuzzSeeds()[0]))
	f.Add([]byte("[$d#i\x02\x3f\x80\x00\x00\x40\x00\x00\x00"))
	f.Add([]byte("{#U\x01i\x01aH i\x031.5}"))
	f.Add([]byte("[NZTFC\x41i\xffU\xffI\x80\x00l\x00\x00\x00\x01L\x00\x00\x00\x00\x00\x00\x00\x02D\x3f\xf0\x00\x00\x00\x00\x00\x00SU\x02hi]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := newUBJReader(b)
		var walk func(depth int) error
		walk = func(depth int) error {
			k, err := r.peek()
			if err != nil {
				return err
			}
			switch k {
			case kindObject:
				if err := r.beginObject(); err != nil {
					return err
				}
				for {
					_, ok, err := r.key()
					if err != nil || !ok {
						return err
					}
					if err := walk(depth + 1); err != nil {
						return err
					}
				}
			case kindArray:
				if _, err := r.beginArray(); err != nil {
					return err
				}
				for {
					ok, err := r.more()
					if err != nil || !ok {
						return err
					}
					if err := walk(depth + 1); err != nil {
						return err
					}
				}
			case kindString:
				_, err = r.str()
			case kindBool:
				_, err = r.bool()
			case kindNumber:
				_, err = r.float32()
			default:
				err = r.skip()
			}
			return err
		}
		if err := walk(0); err != nil {
			var se *syntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error of no syntax kind: %v", err)
			}
			return
		}
		// What the walk accepted, a skip accepts too.
		s := newUBJReader(b)
		if err := s.skip(); err != nil {
			t.Fatalf("walk read the document, skip failed: %v", err)
		}
		if r.pos != s.pos {
			t.Fatalf("walk stopped at %d, skip at %d", r.pos, s.pos)
		}
	})
}
