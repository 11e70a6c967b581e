package pmml_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/registry/process"
)

// xgboostDir holds XGBoost models written as PMML the way JPMML-XGBoost
// writes them, every model element computing in float32
// (x-mathContext="float"), by testdata/xgboost/export.py.
var xgboostDir = filepath.Join("testdata", "xgboost")

// xgboostPython is the interpreter with the XGBoost that trained them.
var xgboostPython = modeltest.Python{
	Path:     "/usr/bin/python3",
	Imports:  []string{"xgboost", "sklearn"},
	Packages: "python3-xgboost python3-sklearn",
	Module:   "xgboost",
	Library:  "XGBoost",
	Version:  "1.7",
}

// xgboostTolerance is how far, relatively, an answer may be from
// XGBoost's. The document and XGBoost add the same float32 leaves, reached
// by the same walk, but not in the same order: XGBoost starts from the base
// margin and adds every tree where it stands, the document (as
// JPMML-XGBoost writes it) sums the grown trees and adds the base margin
// and the one-leaf trees last, as its Target's rescaleConstant. Each of a
// fixture's at most 31 additions may then round differently by half a
// float32 step, 2^-24 (6e-8) of its partial sum: at most 31 × 6e-8 ≈ 2e-6
// of the sums' size. A regression answering the margin is off by that,
// relatively; exp, a sigmoid or a softmax turns the margin's absolute
// error into a relative one of the answer, and the margins here are below
// 6: 2e-6 × 6 ≈ 1.1e-5. 2e-5 bounds both; the fixtures come within 2e-6. The answers are
// held exactly to the document's own float32 arithmetic
// (checkXGBoostRow).
const xgboostTolerance = 2e-5

// TestXGBoostFloatFixtures scores XGBoost's models as PMML in float32
// arithmetic: every answer is the document's float32 result exactly, and
// within xgboostTolerance of XGBoost's own prediction.
func TestXGBoostFloatFixtures(t *testing.T) {
	for _, name := range modeltest.FixtureNames(t, xgboostDir) {
		f := readFixture(t, xgboostDir, name)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkXGBoostFixture(t, xgboostDir, name, f)
		})
	}
}

// checkXGBoostFixture loads dir/NAME.pmml, checks its schema against f's
// and its answers for f's rows, the whole table at once and every row on
// its own.
func checkXGBoostFixture(t *testing.T, dir, name string, f *fixture) {
	if len(f.DocumentPredictions) != len(f.Rows) {
		t.Fatalf("%s.rows.json: %d rows, %d document predictions", name, len(f.Rows), len(f.DocumentPredictions))
	}
	m := loadFixtureModel(t, dir, name, f)
	checkSchema(t, f, m.Schema)
	worst := 0.0
	modeltest.ScoreEachWay(t, m, len(f.Rows), func(first, last int) *process.Table { return f.table(t, first, last) },
		func(got *process.Table, first int) {
			for r := range got.Rows() {
				worst = max(worst, checkXGBoostRow(t, f, got, r, first+r))
			}
		})
	t.Logf("%s: at most %.2g (relative) from XGBoost", name, worst)
}

// checkXGBoostRow checks row r of got, fixture row i: every number equal
// to the document's float32 result (both are the same IEEE float32
// operations in the same order, so equal to the bit) and within
// xgboostTolerance of XGBoost's; a classifier's class the most probable.
// It returns the largest relative difference from XGBoost.
func checkXGBoostRow(t *testing.T, f *fixture, got *process.Table, r, i int) float64 {
	t.Helper()
	cols := f.outputs()
	var want, doc []float64
	if f.Schema.Task == process.Regression {
		want = []float64{modeltest.Value(t, f.Model, i, f.Predictions[i])}
		doc = []float64{modeltest.Value(t, f.Model, i, f.DocumentPredictions[i])}
	} else {
		n := len(f.Schema.Classes)
		want = modeltest.Confidences(t, f.Model, i, f.Predictions[i], n)
		doc = modeltest.Confidences(t, f.Model, i, f.DocumentPredictions[i], n)
		if !modeltest.Tied(doc) {
			modeltest.CheckClass(t, "the document", got, cols[0], r, i, doc, f.Schema.Classes[modeltest.MostProbable(doc)])
		}
		cols = cols[1:]
	}
	worst := 0.0
	for k := range want {
		col, ok := got.Lookup(cols[k])
		if !ok {
			t.Fatalf("no column %q in the answer", cols[k])
		}
		v, ok := col.Number(r)
		if !ok {
			t.Errorf("row %d: %s missing, XGBoost says %v", i, cols[k], want[k])
			continue
		}
		if v != doc[k] {
			t.Errorf("row %d: %s = %v, the document's float32 arithmetic gives %v", i, cols[k], v, doc[k])
		}
		d := math.Abs(v-want[k]) / math.Max(math.Abs(want[k]), 1e-3)
		worst = max(worst, d)
		if d > xgboostTolerance {
			t.Errorf("row %d: %s = %v, XGBoost says %v (relative difference %.2g)", i, cols[k], v, want[k], d)
		}
	}
	return worst
}

// TestRegenerateXGBoost runs testdata/xgboost/export.py against the
// installed XGBoost and checks that it writes the committed fixtures
// again: the same PMML and the same predictions, numbers within
// modeltest.Tolerance. The reader is then checked against the freshly
// computed predictions too.
func TestRegenerateXGBoost(t *testing.T) {
	xgboostPython.Require(t)
	out := t.TempDir()
	xgboostPython.Run(t, filepath.Join(xgboostDir, "export.py"), "--out", out)

	committed := modeltest.SameFixtureNames(t, "export.py", xgboostDir, out)
	for _, name := range committed {
		t.Run(name, func(t *testing.T) {
			modeltest.SameXML(t, "export.py", filepath.Join(xgboostDir, name+".pmml"), filepath.Join(out, name+".pmml"))
			modeltest.SameJSON(t, "export.py", filepath.Join(xgboostDir, name+".rows.json"), filepath.Join(out, name+".rows.json"))
			checkXGBoostFixture(t, out, name, readFixture(t, out, name))
		})
	}
}
