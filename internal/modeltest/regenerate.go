package modeltest

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// SameFixtureNames fails t unless the generator script wrote into out
// the fixtures that dir holds, and returns their names.
func SameFixtureNames(t testing.TB, script, dir, out string) []string {
	t.Helper()
	committed := FixtureNames(t, dir)
	if fresh := FixtureNames(t, out); !slices.Equal(fresh, committed) {
		t.Fatalf("%s writes the fixtures %q; %s holds %q (run it to update %[3]s)", script, fresh, dir, committed)
	}
	return committed
}

// number matches a number as a generator script writes one (Python's
// repr of a float, or an integer).
var number = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?`)

// SameText fails t unless the files at want and got are the same text
// around their numbers and the same numbers within 1e-9 relative; script
// is the generator that wrote got.
func SameText(t testing.TB, script, want, got string) {
	t.Helper()
	var texts [2]string
	for i, p := range []string{want, got} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[i] = string(b)
	}
	if what := textDiff(texts[0], texts[1]); what != "" {
		t.Errorf("%s now writes %s differently: %s (run it to update testdata if that is on purpose)", script, filepath.Base(want), what)
	}
}

// textDiff describes the first difference between a and b that SameText
// does not allow, or returns "".
func textDiff(a, b string) string {
	an, bn := number.FindAllStringIndex(a, -1), number.FindAllStringIndex(b, -1)
	if len(an) != len(bn) {
		return fmt.Sprintf("%d numbers, was %d", len(bn), len(an))
	}
	pa, pb := 0, 0
	for i := range an {
		if a[pa:an[i][0]] != b[pb:bn[i][0]] {
			return fmt.Sprintf("the text before number %d changed", i+1)
		}
		x, errX := strconv.ParseFloat(a[an[i][0]:an[i][1]], 64)
		y, errY := strconv.ParseFloat(b[bn[i][0]:bn[i][1]], 64)
		if errX != nil || errY != nil || math.Abs(x-y) > 1e-9*math.Max(1, math.Abs(x)) {
			return fmt.Sprintf("number %d is %s, was %s", i+1, b[bn[i][0]:bn[i][1]], a[an[i][0]:an[i][1]])
		}
		pa, pb = an[i][1], bn[i][1]
	}
	if a[pa:] != b[pb:] {
		return "the text after the last number changed"
	}
	return ""
}
