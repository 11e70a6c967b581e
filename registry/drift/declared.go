package drift

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/scorehub/scorehub/registry/process"
)

// ErrUndeclared reports a model whose schema declares nothing
// [DeclaredProfile] can profile: no input has a domain, or none it can
// bin.
var ErrUndeclared = errors.New("drift: the model declares no input's values")

// DeclaredProfile profiles a model from what its file declares of its
// inputs' values (schema.Domains, see [process.Domain]) alone, for a
// model version that has no rows to build a profile from. Each input of
// schema with a domain becomes a feature, in the order of the inputs:
//
//   - a Number input bounded on both sides gets opts.Bins bins of equal
//     width between its Min and Max (its edges strictly inside), which
//     are the feature's: a live value outside them is out of range. The
//     feature's Min or Max of an open bound is the nearest float64
//     inside it, so that the bound itself is out of range. An input
//     bounded on one side only is left out;
//   - a categorical Number input (its domain's Numbers, such as
//     LightGBM's category codes) gets a bin per category, ascending, up to
//     MaxBins bins (beyond that, neighbouring categories share bins of
//     about as many each): bin 0 holds the smallest category and
//     everything below, bin i the values above category i−1 up to
//     category i. Its Min and Max are its smallest and largest category,
//     so that a value beyond them is out of range, and its Values are its
//     categories (the first MaxKnown declared), so that a value that is
//     none of them (between two categories, or 1.5 beside 1 and 2) is
//     unseen;
//   - a Text input gets its declared values as categories, in the order
//     declared, each a bin up to opts.Categories (zero means every one up
//     to MaxCategories), the rest remembered in Others up to MaxKnown: a
//     value that is none of them is unseen.
//
// The reference histograms count nothing, and the profile is Declared: a
// [Report] on it has no PSI or JS, for a file declares no distribution,
// and a reference missing rate of 0; its out-of-range and unseen shares
// are measured as on any profile. It has no prediction: a model's
// answers lie within what it can answer by construction, so only their
// shape could tell, and a file declares none.
//
// DeclaredProfile fails with ErrUndeclared when no input gets a
// feature, and with another error when opts or the domains are invalid
// (a domain that names no input, or declares values of another kind).
func DeclaredProfile(schema process.ModelSchema, opts Options) (*Profile, error) {
	bins, cats := opts.Bins, opts.Categories
	if bins == 0 {
		bins = 10
	}
	if cats == 0 {
		cats = MaxCategories
	}
	if bins < 2 || bins > MaxBins {
		return nil, fmt.Errorf("drift: %d bins asked for, want 2 to %d", opts.Bins, MaxBins)
	}
	if cats < 1 || cats > MaxCategories {
		return nil, fmt.Errorf("drift: %d categories asked for, want 1 to %d", opts.Categories, MaxCategories)
	}
	if opts.Prediction.Name != "" {
		return nil, fmt.Errorf("drift: a declared profile has no prediction, and %q was asked for", opts.Prediction.Name)
	}
	inputs := make(map[string]bool, len(schema.Inputs))
	for _, in := range schema.Inputs {
		inputs[in.Name] = true
	}
	domains := make(map[string]*process.Domain, len(schema.Domains))
	for i := range schema.Domains {
		d := &schema.Domains[i]
		switch {
		case !inputs[d.Name]:
			return nil, fmt.Errorf("drift: the schema declares the domain of %q, which is not an input", d.Name)
		case domains[d.Name] != nil:
			return nil, fmt.Errorf("drift: the schema declares the domain of %q twice", d.Name)
		}
		domains[d.Name] = d
	}
	p := &Profile{Declared: true}
	for _, in := range schema.Inputs {
		d := domains[in.Name]
		if d == nil {
			continue
		}
		f, ok, err := declaredFeature(in, d, bins, cats)
		if err != nil {
			return nil, err
		}
		if ok {
			p.Features = append(p.Features, f)
		}
	}
	if len(p.Features) == 0 {
		return nil, ErrUndeclared
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// declaredFeature is the feature of input in, whose domain is d; ok is
// false when d declares nothing it can bin.
func declaredFeature(in process.ColumnSpec, d *process.Domain, bins, cats int) (f Feature, ok bool, err error) {
	f = Feature{Name: in.Name, Kind: in.Kind, Reference: Histogram{Name: in.Name}}
	ranged := d.Min != nil || d.Max != nil
	switch {
	case in.Kind == process.Text && !ranged && d.Numbers == nil:
		values := distinct(d.Values)
		if len(values) == 0 {
			return f, false, nil
		}
		k := min(cats, len(values))
		f.Categories = values[:k:k]
		if rest := values[k:]; len(rest) > 0 {
			f.Others = rest[:min(len(rest), MaxKnown)]
		}
	case in.Kind == process.Number && d.Values == nil && d.Numbers != nil && !ranged:
		if slices.ContainsFunc(d.Numbers, func(v float64) bool { return !finite(v) }) {
			return f, false, fmt.Errorf("drift: input %q declares a category that is not a finite number", in.Name)
		}
		all := distinct(d.Numbers)
		f.Values = slices.Clone(all[:min(len(all), MaxKnown)])
		slices.Sort(f.Values)
		slices.Sort(all)
		f.Min, f.Max = all[0], all[len(all)-1]
		n := min(len(all), MaxBins)
		for j := 1; j < n; j++ {
			f.Edges = append(f.Edges, all[j*len(all)/n-1])
		}
	case in.Kind == process.Number && d.Values == nil && d.Numbers == nil:
		if d.Min == nil || d.Max == nil {
			return f, false, nil
		}
		lo, hi := *d.Min, *d.Max
		if d.MinOpen {
			lo = math.Nextafter(lo, math.Inf(1))
		}
		if d.MaxOpen {
			hi = math.Nextafter(hi, math.Inf(-1))
		}
		if !finite(lo) || !finite(hi) || lo > hi {
			return f, false, fmt.Errorf("drift: input %q declares the range %v to %v, which holds no finite number", in.Name, *d.Min, *d.Max)
		}
		// The edges of the declared bounds, not of the numbers inside
		// them: 0.5 halves (0, 1).
		f.Min, f.Max, f.Edges = lo, hi, equalWidth(*d.Min, *d.Max, bins)
	default:
		return f, false, fmt.Errorf("drift: %s input %q declares values of another kind", in.Kind, in.Name)
	}
	f.Reference.Counts = make([]int64, f.bins())
	return f, true, nil
}

// equalWidth returns the inner edges of n bins of equal width between lo
// and hi: those strictly inside, as rounding leaves them, so none for a
// range too narrow to split.
func equalWidth(lo, hi float64, n int) []float64 {
	var edges []float64
	w := hi - lo
	for i := 1; i < n; i++ {
		e := lo + w*float64(i)/float64(n)
		if math.IsInf(w, 0) { // a range wider than a float64
			e = lo/float64(n)*float64(n-i) + hi/float64(n)*float64(i)
		}
		if e > lo && e < hi && (len(edges) == 0 || e > edges[len(edges)-1]) {
			edges = append(edges, e)
		}
	}
	return edges
}

// distinct returns the values of s without repeats, in their order.
func distinct[T comparable](s []T) []T {
	out := make([]T, 0, len(s))
	seen := make(map[T]bool, len(s))
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
