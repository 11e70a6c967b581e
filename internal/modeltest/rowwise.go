package modeltest

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// CheckRowWise proves what [process.ProcessInfo].RowWise promises of p on
// in: it scores in whole, then scores parts disjoint ranges of its rows,
// all at once, each from a goroutine of its own and as a table of its
// rows only (as the scoring engine does for a large request), and fails t
// unless every range answers the same columns, of the same kinds, with
// the same values bit for bit and the same missing ones, as the whole
// answers for those rows. Run it with -race, on a table large enough that
// each range holds many rows.
func CheckRowWise(t testing.TB, p process.Process, in *process.Table, parts int) {
	t.Helper()
	whole, err := p.Score(context.Background(), process.Input{Table: in})
	if err != nil {
		t.Fatalf("scoring %d rows whole: %v", in.Rows(), err)
	}
	n := in.Rows()
	got := make([]*process.Table, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for k := range parts {
		lo, hi := n*k/parts, n*(k+1)/parts
		wg.Go(func() {
			got[k], errs[k] = p.Score(context.Background(), process.Input{Table: in.Slice(lo, hi)})
		})
	}
	wg.Wait()
	for k := range parts {
		lo, hi := n*k/parts, n*(k+1)/parts
		if errs[k] != nil {
			t.Fatalf("scoring rows %d to %d: %v", lo, hi, errs[k])
		}
		g := got[k]
		if g.Rows() != hi-lo || g.NumColumns() != whole.NumColumns() {
			t.Fatalf("rows %d to %d: %d rows of %d columns, want %d of %d", lo, hi, g.Rows(), g.NumColumns(), hi-lo, whole.NumColumns())
		}
		for c := range whole.NumColumns() {
			a, b := whole.Column(c), g.Column(c)
			if a.Name != b.Name || a.Kind != b.Kind {
				t.Fatalf("rows %d to %d: column %d is %q (%s), whole %q (%s)", lo, hi, c, b.Name, b.Kind, a.Name, a.Kind)
			}
			for r := lo; r < hi; r++ {
				if a.IsMissing(r) != b.IsMissing(r-lo) {
					t.Fatalf("row %d, %q: missing %v in a range, %v whole", r, a.Name, b.IsMissing(r-lo), a.IsMissing(r))
				}
				if a.IsMissing(r) {
					continue
				}
				if a.Kind == process.Number && math.Float64bits(a.Numbers[r]) != math.Float64bits(b.Numbers[r-lo]) {
					t.Fatalf("row %d, %q: %v in a range, %v whole", r, a.Name, b.Numbers[r-lo], a.Numbers[r])
				}
				if a.Kind == process.Text && a.Texts[r] != b.Texts[r-lo] {
					t.Fatalf("row %d, %q: %q in a range, %q whole", r, a.Name, b.Texts[r-lo], a.Texts[r])
				}
			}
		}
	}
}
