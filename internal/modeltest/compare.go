package modeltest

import (
	"math"
	"slices"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// Tolerance is how far an answer may be from the training library's: an
// absolute difference for a confidence, a relative one (to values of at
// least 1) for a regression value. The libraries sum in float32 or in
// another order, so exact equality would fail on another build.
const Tolerance = 1e-6

// Close reports whether got is want within [Tolerance]: absolutely where
// |want| is below 1, relative to want above. A NaN is close to a NaN only,
// an infinity to the same infinity only.
func Close(want, got float64) bool {
	if want == got || math.IsNaN(want) && math.IsNaN(got) {
		return true
	}
	if math.IsInf(want, 0) {
		return false
	}
	return math.Abs(got-want) <= Tolerance*math.Max(1, math.Abs(want))
}

// CheckValue fails t unless column col of got, the answer whose row r is
// fixture row i, holds want within [Tolerance] (see [Close]), as library
// says.
func CheckValue(t testing.TB, library string, got *process.Table, col string, r, i int, want float64) {
	t.Helper()
	c := lookup(t, got, col)
	v, ok := c.Number(r)
	if !ok || !Close(want, v) {
		t.Errorf("row %d: %s = %v (present %v), %s says %v (off by %.3g)", i, col, v, ok, library, want, v-want)
	}
}

// CheckConfidences fails t unless got, the answer whose row r is fixture
// row i, has a column confidence(CLASS) for each of classes holding probs'
// value within [Tolerance], as library says.
func CheckConfidences(t testing.TB, library string, got *process.Table, r, i int, classes []string, probs []float64) {
	t.Helper()
	for c, want := range probs {
		name := "confidence(" + classes[c] + ")"
		col := lookup(t, got, name)
		v, ok := col.Number(r)
		if !ok || !Close(want, v) {
			t.Errorf("row %d: %s = %v (present %v), %s says %v (off by %.3g)", i, name, v, ok, library, want, v-want)
		}
	}
}

// CheckClass fails t unless column col of got, the answer whose row r is
// fixture row i, is the class library predicts, want. Where the two most
// probable of probs are within [Tolerance], a tie that may go either way,
// any class passes.
func CheckClass(t testing.TB, library string, got *process.Table, col string, r, i int, probs []float64, want string) {
	t.Helper()
	if Tied(probs) {
		return
	}
	if v, _ := lookup(t, got, col).Text(r); v != want {
		t.Errorf("row %d: %s = %q, %s predicts %q", i, col, v, library, want)
	}
}

// MostProbable returns the index of the largest of p, the first if several.
func MostProbable(p []float64) int {
	best := 0
	for i, v := range p {
		if v > p[best] {
			best = i
		}
	}
	return best
}

// Tied reports whether the two most probable of p are within [Tolerance].
func Tied(p []float64) bool {
	s := slices.Clone(p)
	slices.Sort(s)
	return len(s) > 1 && s[len(s)-1]-s[len(s)-2] < Tolerance
}

func lookup(t testing.TB, got *process.Table, name string) *process.Column {
	t.Helper()
	c, ok := got.Lookup(name)
	if !ok {
		t.Fatalf("no column %q in the answer", name)
	}
	return c
}
