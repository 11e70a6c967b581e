package pmml

import (
	"math"
	"strconv"
	"strings"

	"github.com/scorehub/scorehub/registry/process"
)

// domain returns what the DataDictionary declares of f's valid values,
// and whether it declares anything: a continuous field's Intervals bound
// their union (an open end of it is open in the domain; without
// Intervals, every number is valid); a categorical or ordinal field's
// valid Values (property valid, or none) are its values, numbers for a
// field of a numeric dataType, in the order declared and each once. A
// numeric field's Value that is no number is left out: no request can
// send it.
func (f *field) domain() (process.Domain, bool) {
	d := process.Domain{Name: f.name}
	switch {
	case f.optype == "continuous":
		lo, hi, ok := union(f.intervals)
		if !ok {
			return d, false
		}
		if lo.set {
			d.Min, d.MinOpen = &lo.at, lo.open
		}
		if hi.set {
			d.Max, d.MaxOpen = &hi.at, hi.open
		}
		return d, lo.set || hi.set
	case f.numeric:
		seen := make(map[float64]bool, len(f.valid))
		for _, v := range f.valid {
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || seen[x] {
				continue
			}
			seen[x] = true
			d.Numbers = append(d.Numbers, x)
		}
		return d, d.Numbers != nil
	default:
		seen := make(map[string]bool, len(f.valid))
		for _, v := range f.valid {
			if !seen[v] {
				seen[v] = true
				d.Values = append(d.Values, v)
			}
		}
		return d, d.Values != nil
	}
}

// bound is one end of a union of intervals: unset when the union reaches
// infinity there.
type bound struct {
	set, open bool
	at        float64
}

// union returns the ends of the union of ivs, as [interval.contains]
// reads each: a margin that is absent, NaN or the infinity on its side
// bounds nothing; an interval that holds no finite number (such as
// (1, 1), or one from +Inf) adds nothing. ok is false when no interval
// holds a finite number, or there are none.
func union(ivs []interval) (lo, hi bound, ok bool) {
	for _, iv := range ivs {
		l, r := end(iv.LeftMargin, math.Inf(-1)), end(iv.RightMargin, math.Inf(1))
		l.open = l.set && (iv.Closure == "openOpen" || iv.Closure == "openClosed")
		r.open = r.set && (iv.Closure == "openOpen" || iv.Closure == "closedOpen")
		switch {
		case l.set && math.IsInf(l.at, 1), r.set && math.IsInf(r.at, -1):
			continue // holds no finite number
		case l.set && r.set && l.at == r.at && (l.open || r.open):
			continue // empty
		}
		if !ok {
			lo, hi, ok = l, r, true
			continue
		}
		switch {
		case !lo.set || !l.set:
			lo = bound{}
		case l.at < lo.at:
			lo = l
		case l.at == lo.at:
			lo.open = lo.open && l.open
		}
		switch {
		case !hi.set || !r.set:
			hi = bound{}
		case r.at > hi.at:
			hi = r
		case r.at == hi.at:
			hi.open = hi.open && r.open
		}
	}
	return lo, hi, ok
}

// end is an interval's margin m as a bound: unset when m is absent, NaN
// or inf, the infinity on its side.
func end(m *float64, inf float64) bound {
	if m == nil || math.IsNaN(*m) || *m == inf {
		return bound{}
	}
	return bound{set: true, at: *m}
}
