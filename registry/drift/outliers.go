package drift

import (
	"math"
	"slices"
	"strings"

	"github.com/scorehub/scorehub/registry/process"
)

// Outliers flags the rows whose values lie outside a profile's
// reference: a number below its Min or above its Max, or, of a
// categorical number, none of its values; a text its reference never
// had. It is made once per profile ([NewOutliers]) and
// is safe for concurrent use.
type Outliers struct {
	cols []outlierColumn
}

type outlierColumn struct {
	name   string
	kind   process.Kind
	lo, hi float64
	known  map[string]bool
	values []float64 // a categorical Number's known values, ascending; nil for others
}

// NewOutliers returns the Outliers of p's features (not its prediction).
// p must not be modified afterwards.
func NewOutliers(p *Profile) *Outliers {
	o := &Outliers{cols: make([]outlierColumn, len(p.Features))}
	for i := range p.Features {
		f := &p.Features[i]
		c := outlierColumn{name: f.Name, kind: f.Kind, lo: f.Min, hi: f.Max, values: f.Values}
		if f.Kind == process.Text {
			c.known = make(map[string]bool, len(f.Categories)+len(f.Others))
			for _, v := range f.Categories {
				c.known[v] = true
			}
			for _, v := range f.Others {
				c.known[v] = true
			}
		}
		o.cols[i] = c
	}
	return o
}

// Flag returns, for each row of t, the names of its profiled columns
// whose values are outside the reference, joined by ", ", in the
// profile's order; and which rows have none (their text is ""). A column
// absent from t, or of another kind than the profile's, and a missing
// value flag nothing: missing values are measured as a rate, not per row.
func (o *Outliers) Flag(t *process.Table) (names []string, none []bool) {
	rows := t.Rows()
	names, none = make([]string, rows), make([]bool, rows)
	var flagged [][]string // per row; nil until a row is flagged
	for ci := range o.cols {
		oc := &o.cols[ci]
		c, ok := t.Lookup(oc.name)
		if !ok || c.Kind != oc.kind {
			continue
		}
		for r := range rows {
			if c.Missing != nil && c.Missing[r] {
				continue
			}
			var out bool
			if oc.kind == process.Number {
				v := c.Numbers[r]
				if out = !math.IsNaN(v) && (v < oc.lo || v > oc.hi); !out && oc.values != nil && !math.IsNaN(v) {
					_, known := slices.BinarySearch(oc.values, v)
					out = !known
				}
			} else {
				out = !oc.known[c.Texts[r]]
			}
			if !out {
				continue
			}
			if flagged == nil {
				flagged = make([][]string, rows)
			}
			flagged[r] = append(flagged[r], oc.name)
		}
	}
	for r := range rows {
		if flagged == nil || flagged[r] == nil {
			none[r] = true
			continue
		}
		names[r] = strings.Join(flagged[r], ", ")
	}
	return names, none
}
