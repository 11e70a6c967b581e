package lightgbm

import "github.com/scorehub/scorehub/registry/process"

// domains returns what feature_infos declares of the named features'
// values: a numerical feature's training range [lo:hi]; a categorical
// one's codes, most frequent in training first as LightGBM lists them,
// without the negative code it lists for missing values (LightGBM reads
// any negative category as missing); for a categorical feature with
// pandas_categorical, the names of those codes in that order, then
// pandas' other categories, which the model reads too (as a category it
// did not bin). A feature training found nothing to split on ("none")
// declares nothing.
func (m *model) domains() []process.Domain {
	var out []process.Domain
	for _, f := range m.feats {
		d := process.Domain{Name: f.name}
		switch {
		case f.ranged:
			d.Min, d.Max = &f.lo, &f.hi
		case f.cats != nil && f.names != nil:
			listed := make([]bool, len(f.nameOrder))
			for _, c := range f.cats {
				if c >= 0 && c < len(f.nameOrder) && !listed[c] {
					listed[c] = true
					d.Values = append(d.Values, f.nameOrder[c])
				}
			}
			for c, name := range f.nameOrder {
				if !listed[c] {
					d.Values = append(d.Values, name)
				}
			}
		case f.cats != nil:
			seen := make(map[int]bool, len(f.cats))
			for _, c := range f.cats {
				if c >= 0 && !seen[c] {
					seen[c] = true
					d.Numbers = append(d.Numbers, float64(c))
				}
			}
		}
		if d.Min != nil || d.Values != nil || d.Numbers != nil {
			out = append(out, d)
		}
	}
	return out
}
