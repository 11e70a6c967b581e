package lightgbm

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/registry/process"
)

// fixture is one model's NAME.rows.json, as testdata/gen.py writes it.
type fixture struct {
	Model  string   `json:"model"`
	Params []string `json:"params"`
	// Rows are the input rows: a number, null (missing), a category's name,
	// or "Infinity" and "-Infinity" for a number JSON cannot hold.
	Rows []map[string]any `json:"rows"`
	// LightGBM holds LightGBM's raw scores and predictions for each row,
	// one value per output, from LGBM_BoosterPredictForMat. (The file's
	// schema and predictions, the same answers in the shape of every
	// format's fixtures, are the end-to-end suite's.)
	LightGBM struct {
		Raw         [][]answer `json:"raw"`
		Predictions [][]answer `json:"predictions"`
	} `json:"lightgbm"`
}

// answer is one of LightGBM's answers: a number, or "Infinity",
// "-Infinity" or "NaN" as a string.
type answer float64

func (a *answer) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := strconv.ParseFloat(s, 64)
		*a = answer(v)
		return err
	}
	var v float64
	err := json.Unmarshal(b, &v)
	*a = answer(v)
	return err
}

func readFixture(t testing.TB, dir, name string) *fixture {
	t.Helper()
	var f fixture
	modeltest.ReadFixture(t, dir, name, &f)
	if len(f.Rows) == 0 || len(f.Rows) != len(f.LightGBM.Raw) || len(f.Rows) != len(f.LightGBM.Predictions) {
		t.Fatalf("%s.rows.json: %d rows, %d raw scores, %d predictions", name, len(f.Rows), len(f.LightGBM.Raw), len(f.LightGBM.Predictions))
	}
	return &f
}

// table builds rows first..last-1 as a client's request would arrive: a
// column for each input some row has, of the schema's kind, missing where
// a row has null or no key, in the reverse of the model's order (the
// reader matches columns by name), plus a text column the model does not
// read.
func (f *fixture) table(t testing.TB, inputs []process.ColumnSpec, first, last int) *process.Table {
	t.Helper()
	n := last - first
	var cols []process.Column
	for j := len(inputs) - 1; j >= 0; j-- {
		in := inputs[j]
		present := false
		missing := make([]bool, n)
		nums, texts := make([]float64, n), make([]string, n)
		for i := range n {
			v, ok := f.Rows[first+i][in.Name]
			present = present || ok
			switch v := v.(type) {
			case nil:
				missing[i] = true
			case float64:
				nums[i] = v
			case string:
				switch {
				case in.Kind == process.Text:
					texts[i] = v
				case v == "Infinity":
					nums[i] = math.Inf(1)
				case v == "-Infinity":
					nums[i] = math.Inf(-1)
				default:
					t.Fatalf("%s: row %d: %s is %q", f.Model, first+i, in.Name, v)
				}
			}
		}
		if !present {
			continue
		}
		if in.Kind == process.Text {
			cols = append(cols, process.TextColumn(in.Name, texts, missing))
		} else {
			cols = append(cols, process.NumberColumn(in.Name, nums, missing))
		}
	}
	return modeltest.Table(t, first, last, cols...)
}

func loadFixture(t testing.TB, dir, name string) (*model, *process.LoadedModel) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !(Format{}).Detect(b) {
		t.Fatalf("Detect(%s.txt) = false", name)
	}
	m, lm, err := Format{}.load(b, process.ModelMetadata{})
	if err != nil {
		t.Fatalf("Load(%s.txt): %v", name, err)
	}
	return m, lm
}

func TestFixtures(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkFixture(t, "testdata", name)
		})
	}
}

// checkFixture scores the rows of fixture NAME in dir, as one table and
// each row on its own, and holds the raw scores and predictions to
// LightGBM's, to the last bit: the reader splits, sums and transforms as
// LightGBM does, in float64, with an exp rounded as the C library's is
// (see exp). A confidence of class 0 of a binary model is 1 minus
// LightGBM's prediction, computed in the test the same way.
func checkFixture(t *testing.T, dir, name string) {
	f := readFixture(t, dir, name)
	m, lm := loadFixture(t, dir, name)
	table := func(first, last int) *process.Table { return f.table(t, lm.Schema.Inputs, first, last) }

	// Raw scores: the same trees, the same splits, the same sums in the
	// same order, so the same doubles.
	for _, span := range [][2]int{{0, len(f.Rows)}, {len(f.Rows) - 1, len(f.Rows)}} {
		err := m.rawScores(context.Background(), table(span[0], span[1]), func(first int, out []float64) {
			for j, v := range out {
				i, k := span[0]+first+j/m.outputs, j%m.outputs
				if want := float64(f.LightGBM.Raw[i][k]); math.Float64bits(v) != math.Float64bits(want) && !(v == 0 && want == 0) {
					t.Errorf("row %d: raw score %d = %v, LightGBM's is %v (off by %.3g)", i, k, v, want, v-want)
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	modeltest.ScoreEachWay(t, lm, len(f.Rows), table, func(got *process.Table, first int) {
		comparePredictions(t, lm.Schema, f, got, first)
	})
}

func comparePredictions(t *testing.T, s process.ModelSchema, f *fixture, got *process.Table, first int) {
	t.Helper()
	check := func(col string, r int, want float64) {
		t.Helper()
		c, ok := got.Lookup(col)
		if !ok {
			t.Fatalf("no column %q", col)
		}
		v := c.Numbers[r]
		switch {
		case math.Float64bits(v) == math.Float64bits(want), math.IsNaN(v) && math.IsNaN(want):
		default:
			t.Errorf("row %d: %s = %v, LightGBM predicts %v (off by %.3g)", first+r, col, v, want, v-want)
		}
	}
	for r := range got.Rows() {
		want := f.LightGBM.Predictions[first+r]
		if s.Task == process.Regression {
			check(s.Outputs[0].Name, r, float64(want[0]))
			continue
		}
		if len(want) == 1 {
			check("confidence("+s.Classes[1]+")", r, float64(want[0]))
			check("confidence("+s.Classes[0]+")", r, 1-float64(want[0]))
			continue
		}
		for k, p := range want {
			check("confidence("+s.Classes[k]+")", r, float64(p))
		}
	}
}

func TestFixturesRowWise(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			f := readFixture(t, "testdata", name)
			_, lm := loadFixture(t, "testdata", name)
			if !lm.RowWise || !lm.ProcessInfo(name).RowWise {
				t.Errorf("the model is not RowWise")
			}
			big := *f
			for len(big.Rows) < 1000 {
				big.Rows = append(big.Rows, f.Rows...)
			}
			modeltest.CheckRowWise(t, lm.Process, big.table(t, lm.Schema.Inputs, 0, len(big.Rows)), 7)
		})
	}
}

// TestSample: the sample row of every fixture model scores, and holds a
// value of each input's kind from the middle of its training range.
func TestSample(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			_, lm := loadFixture(t, "testdata", name)
			var rows []map[string]any
			if err := json.Unmarshal(lm.Sample, &rows); err != nil || len(rows) != 1 {
				t.Fatalf("sample %s: %v", lm.Sample, err)
			}
			f := &fixture{Model: name, Rows: rows}
			modeltest.Score(t, lm, f.table(t, lm.Schema.Inputs, 0, 1))
		})
	}
}
