package drift

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/scorehub/scorehub/registry/process"
)

// The bounds of a profile's size, which bound a [Live]'s memory.
const (
	// MaxBins is the most bins a numeric histogram may ask for.
	MaxBins = 100
	// MaxCategories is the most categories a text histogram keeps as
	// bins of their own.
	MaxCategories = 100
	// MaxKnown is the most reference categories beyond the kept ones
	// that a profile remembers, to tell the rare from the unseen.
	MaxKnown = 10000
)

// Options shape the histograms of [BuildProfile] and [DeclaredProfile].
// The zero value asks for the defaults.
type Options struct {
	// Bins is how many numeric bins to aim for, 2 to MaxBins; zero means
	// 10. A feature gets fewer where quantiles coincide.
	Bins int
	// Categories is how many of the most frequent text categories get a
	// bin of their own, 1 to MaxCategories; zero means 20, or for
	// DeclaredProfile every declared value up to MaxCategories. The rest
	// share the "other" bin.
	Categories int
	// Prediction, when its Name is set, is the model's answer column in
	// the reference table (a classifier's predicted label, Text; a
	// regressor's prediction, Number), profiled like a feature. A
	// declared profile has none.
	Prediction process.ColumnSpec
}

// Profile is the reference distribution of a model version's features
// and prediction. It is built once ([BuildProfile]), stored with the
// model version as JSON, and read by [NewLive] and [Compare]. Decoding
// JSON into a Profile checks it as NewLive does.
//
// A Profile must not be modified once a Live uses it; a Profile that is
// not modified is safe for concurrent use.
type Profile struct {
	Features []Feature `json:"features"`
	// Prediction is nil when the profile has none.
	Prediction *Feature `json:"prediction,omitempty"`
	// Declared says the profile is from the model's declarations alone
	// ([DeclaredProfile]): its figures check ranges and categories, not
	// shapes. Its reference histograms count nothing.
	Declared bool `json:"declared,omitempty"`
}

// Feature is one column's bins and its reference histogram.
//
// A Number feature has len(Edges)+1 bins: bin 0 holds v ≤ Edges[0], bin
// i holds Edges[i-1] < v ≤ Edges[i], the last bin holds v >
// Edges[len-1], so that every live value falls in a bin. A Text feature
// has len(Categories)+1 bins: one per category, then "other".
type Feature struct {
	Name string       `json:"name"`
	Kind process.Kind `json:"kind"`
	// Edges are the inner bin edges of a Number feature, ascending and
	// distinct: reference values at the quantiles i/Bins (the lower of
	// two neighbours, NumPy's method="lower"), except those at or above
	// Max, so that every reference bin holds a value. A declared
	// profile's are of equal widths, or its categories
	// ([DeclaredProfile]).
	Edges []float64 `json:"edges,omitempty"`
	// Min and Max bound a Number feature's reference values (a declared
	// profile's: its declared range).
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Categories are a Text feature's most frequent reference values,
	// most frequent first (ties by value); a declared profile's, its
	// declared values in the order declared.
	Categories []string `json:"categories,omitempty"`
	// Others are the next most frequent reference values, at most
	// MaxKnown of them: live values in "other" that are neither here nor
	// in Categories count as unseen.
	Others []string `json:"others,omitempty"`
	// Values, when set, are a categorical Number feature's known values,
	// ascending, at most MaxKnown of them (a model's declared categories,
	// see [DeclaredProfile]): a live value that is none of them counts as
	// unseen. Nil for other features.
	Values []float64 `json:"values,omitempty"`
	// Reference holds the counts of the reference rows.
	Reference Histogram `json:"reference"`
	// Importance, when the model explains its predictions, is the mean
	// absolute contribution of the feature to the reference rows'
	// margins: how much the model leans on it, to read its drift by.
	// Nil for the prediction and for a model that does not explain.
	Importance *float64 `json:"importance,omitempty"`
}

// bins returns the number of bins of f.
func (f *Feature) bins() int {
	if f.Kind == process.Text {
		return len(f.Categories) + 1
	}
	return len(f.Edges) + 1
}

// BuildProfile profiles the reference rows t: a histogram of each of
// features and of opts.Prediction. Every column must be in t with the
// kind named and hold at least one value. Missing values, NaN and ±Inf
// count as missing, not as a bin.
func BuildProfile(t *process.Table, features []process.ColumnSpec, opts Options) (*Profile, error) {
	bins, cats := opts.Bins, opts.Categories
	if bins == 0 {
		bins = 10
	}
	if cats == 0 {
		cats = 20
	}
	if bins < 2 || bins > MaxBins {
		return nil, fmt.Errorf("drift: %d bins asked for, want 2 to %d", opts.Bins, MaxBins)
	}
	if cats < 1 || cats > MaxCategories {
		return nil, fmt.Errorf("drift: %d categories asked for, want 1 to %d", opts.Categories, MaxCategories)
	}
	p := &Profile{Features: make([]Feature, 0, len(features))}
	for _, spec := range features {
		f, err := buildFeature(t, spec, bins, cats)
		if err != nil {
			return nil, err
		}
		p.Features = append(p.Features, f)
	}
	if opts.Prediction.Name != "" {
		f, err := buildFeature(t, opts.Prediction, bins, cats)
		if err != nil {
			return nil, err
		}
		p.Prediction = &f
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return p, nil
}

func buildFeature(t *process.Table, spec process.ColumnSpec, bins, cats int) (Feature, error) {
	c, ok := t.Lookup(spec.Name)
	if !ok {
		return Feature{}, fmt.Errorf("drift: column %q is not in the reference rows", spec.Name)
	}
	if c.Kind != spec.Kind {
		return Feature{}, fmt.Errorf("drift: column %q is %s in the reference rows, want %s", spec.Name, c.Kind, spec.Kind)
	}
	f := Feature{Name: spec.Name, Kind: spec.Kind, Reference: Histogram{Name: spec.Name}}
	var missing int64
	switch spec.Kind {
	case process.Number:
		values := make([]float64, 0, c.Len())
		for i := range c.Len() {
			v, ok := c.Number(i)
			if !ok || math.IsInf(v, 0) {
				missing++
				continue
			}
			values = append(values, v)
		}
		if len(values) == 0 {
			return Feature{}, fmt.Errorf("drift: column %q has no value in the reference rows", spec.Name)
		}
		slices.Sort(values)
		f.Min, f.Max = values[0], values[len(values)-1]
		for i := 1; i < bins; i++ {
			e := values[i*(len(values)-1)/bins]
			if e < f.Max && (len(f.Edges) == 0 || e > f.Edges[len(f.Edges)-1]) {
				f.Edges = append(f.Edges, e)
			}
		}
		f.Reference.Counts = make([]int64, len(f.Edges)+1)
		for _, v := range values {
			f.Reference.Counts[numberBin(f.Edges, v)]++
		}
	case process.Text:
		freq := map[string]int64{}
		for i := range c.Len() {
			v, ok := c.Text(i)
			if !ok {
				missing++
				continue
			}
			freq[v]++
		}
		if len(freq) == 0 {
			return Feature{}, fmt.Errorf("drift: column %q has no value in the reference rows", spec.Name)
		}
		all := make([]string, 0, len(freq))
		for v := range freq {
			all = append(all, v)
		}
		slices.SortFunc(all, func(a, b string) int {
			if c := cmp.Compare(freq[b], freq[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		k := min(cats, len(all))
		f.Categories = all[:k:k]
		if rest := all[k:]; len(rest) > 0 {
			f.Others = rest[:min(len(rest), MaxKnown)]
		}
		f.Reference.Counts = make([]int64, k+1)
		for i, v := range all {
			f.Reference.Counts[min(i, k)] += freq[v]
		}
	default:
		return Feature{}, fmt.Errorf("drift: column %q has invalid kind %d", spec.Name, spec.Kind)
	}
	f.Reference.Missing = missing
	return f, nil
}

// numberBin returns the bin of v among the inner edges: the number of
// edges below v, found by binary search.
func numberBin(edges []float64, v float64) int {
	lo, hi := 0, len(edges)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if edges[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// validate checks what NewLive and Compare rely on, for a profile that
// may have been decoded or written by hand.
func (p *Profile) validate() error {
	seen := map[string]bool{}
	check := func(f *Feature) error {
		if f.Name == "" {
			return fmt.Errorf("drift: profile has a feature without a name")
		}
		if seen[f.Name] {
			return fmt.Errorf("drift: profile names feature %q twice", f.Name)
		}
		seen[f.Name] = true
		switch f.Kind {
		case process.Number:
			if len(f.Categories) > 0 || len(f.Others) > 0 {
				return fmt.Errorf("drift: number feature %q has categories", f.Name)
			}
			if len(f.Values) > MaxKnown {
				return fmt.Errorf("drift: feature %q has %d values, more than %d", f.Name, len(f.Values), MaxKnown)
			}
			if len(f.Edges) > MaxBins-1 {
				return fmt.Errorf("drift: feature %q has %d edges, more than %d", f.Name, len(f.Edges), MaxBins-1)
			}
			if !finite(f.Min) || !finite(f.Max) || f.Min > f.Max {
				return fmt.Errorf("drift: feature %q has range [%v, %v]", f.Name, f.Min, f.Max)
			}
			for i, e := range f.Edges {
				if !finite(e) || (i > 0 && e <= f.Edges[i-1]) {
					return fmt.Errorf("drift: feature %q has edges that are not finite and ascending", f.Name)
				}
			}
			for i, v := range f.Values {
				if v < f.Min || v > f.Max || (i > 0 && v <= f.Values[i-1]) {
					return fmt.Errorf("drift: feature %q has values that are not ascending within its range", f.Name)
				}
			}
		case process.Text:
			if len(f.Edges) > 0 || len(f.Values) > 0 {
				return fmt.Errorf("drift: text feature %q has edges or values", f.Name)
			}
			if len(f.Categories) == 0 || len(f.Categories) > MaxCategories || len(f.Others) > MaxKnown {
				return fmt.Errorf("drift: feature %q has %d categories and %d others, want 1 to %d and at most %d",
					f.Name, len(f.Categories), len(f.Others), MaxCategories, MaxKnown)
			}
			known := make(map[string]bool, len(f.Categories)+len(f.Others))
			for _, list := range [][]string{f.Categories, f.Others} {
				for _, c := range list {
					if known[c] {
						return fmt.Errorf("drift: feature %q lists category %q twice", f.Name, c)
					}
					known[c] = true
				}
			}
		default:
			return fmt.Errorf("drift: feature %q has invalid kind %d", f.Name, f.Kind)
		}
		if f.Importance != nil && (!finite(*f.Importance) || *f.Importance < 0) {
			return fmt.Errorf("drift: feature %q has importance %v, want a finite number at least 0", f.Name, *f.Importance)
		}
		if err := f.Reference.check(f.Name, f.bins()); err != nil {
			return err
		}
		switch {
		case p.Declared && (f.Reference.present() != 0 || f.Reference.Missing != 0):
			return fmt.Errorf("drift: feature %q of a declared profile has reference counts", f.Name)
		case !p.Declared && f.Reference.present() == 0:
			return fmt.Errorf("drift: feature %q has no reference value", f.Name)
		}
		return nil
	}
	for i := range p.Features {
		if err := check(&p.Features[i]); err != nil {
			return err
		}
	}
	if p.Prediction != nil {
		return check(p.Prediction)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// UnmarshalJSON decodes a profile and checks it, so that a stored profile
// that is damaged is refused where it is read.
func (p *Profile) UnmarshalJSON(b []byte) error {
	type plain Profile
	var q plain
	if err := json.Unmarshal(b, &q); err != nil {
		return fmt.Errorf("drift: decode profile: %w", err)
	}
	if err := (*Profile)(&q).validate(); err != nil {
		return err
	}
	*p = Profile(q)
	return nil
}
