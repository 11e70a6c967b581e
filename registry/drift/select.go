package drift

import (
	"cmp"
	"slices"
)

// Most returns a profile of at most n of p's features, and the names of
// those it leaves out: the n most important when every feature carries
// an importance, the first n otherwise; in p's order, with p's
// prediction. It returns p itself, and no names, when p has n features
// or fewer. The profile shares p's features, which must not be modified.
func (p *Profile) Most(n int) (*Profile, []string) {
	if n < 0 || len(p.Features) <= n {
		return p, nil
	}
	keep := make([]int, len(p.Features))
	for i := range keep {
		keep[i] = i
	}
	if p.ranked() {
		slices.SortStableFunc(keep, func(a, b int) int {
			return cmp.Compare(*p.Features[b].Importance, *p.Features[a].Importance)
		})
	}
	keep = keep[:n]
	slices.Sort(keep)
	out := *p // with every other field of p's
	out.Features = make([]Feature, 0, n)
	var left []string
	k := 0
	for i, f := range p.Features {
		if k < len(keep) && keep[k] == i {
			out.Features = append(out.Features, f)
			k++
			continue
		}
		left = append(left, f.Name)
	}
	return &out, left
}

// ranked reports whether every feature of p carries an importance, so
// that [Profile.Most] picks by it.
func (p *Profile) ranked() bool {
	for i := range p.Features {
		if p.Features[i].Importance == nil {
			return false
		}
	}
	return len(p.Features) > 0
}

// RankedBy says what [Profile.Most] picks features by: "importance" or
// "order".
func (p *Profile) RankedBy() string {
	if p.ranked() {
		return "importance"
	}
	return "order"
}
