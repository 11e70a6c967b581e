package drift

import (
	"errors"
	"fmt"
)

// ErrMismatch reports histograms that do not have the bins of the
// profile or of the histograms they are combined with.
var ErrMismatch = errors.New("drift: histograms do not match")

// Histogram is one column's counts over a profile's bins. Every row
// counts once: in Missing when it has no value, else in its bin. The
// values outside the reference are counted a second time, in OutOfRange
// or Unseen, and have their bin too (the first or last bin, "other"; a
// categorical number between two categories, the bin of the next).
type Histogram struct {
	Name string `json:"name"`
	// Counts has one count per bin, in the order of the feature's bins.
	Counts  []int64 `json:"counts"`
	Missing int64   `json:"missing"`
	// OutOfRange counts a Number column's values below the reference's
	// Min or above its Max.
	OutOfRange int64 `json:"outOfRange"`
	// Unseen counts a Text column's values the reference never had (as
	// far as the profile remembers: its Categories and Others), and a
	// categorical Number column's values that are none of its Values.
	Unseen int64 `json:"unseen"`
}

// present returns the number of values h counts in a bin.
func (h *Histogram) present() int64 {
	var n int64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

func (h *Histogram) check(name string, bins int) error {
	if h.Name != name {
		return fmt.Errorf("%w: histogram %q where feature %q was expected", ErrMismatch, h.Name, name)
	}
	if len(h.Counts) != bins {
		return fmt.Errorf("%w: feature %q has %d counts, want %d", ErrMismatch, name, len(h.Counts), bins)
	}
	for _, c := range h.Counts {
		if c < 0 {
			return fmt.Errorf("drift: feature %q has a negative count", name)
		}
	}
	if h.Missing < 0 || h.OutOfRange < 0 || h.Unseen < 0 {
		return fmt.Errorf("drift: feature %q has a negative count", name)
	}
	return nil
}

func (h *Histogram) clone() Histogram {
	c := *h
	c.Counts = append([]int64(nil), h.Counts...)
	return c
}

func (h *Histogram) add(o *Histogram) {
	for i, c := range o.Counts {
		h.Counts[i] += c
	}
	h.Missing += o.Missing
	h.OutOfRange += o.OutOfRange
	h.Unseen += o.Unseen
}

// Histograms are the live counts of a window ([Live.Snapshot]), one
// Histogram per profile feature in the profile's order, and the
// prediction's. They are plain values, safe to read concurrently and
// to send as JSON; two replicas' Histograms of one profile add up with
// [Merge].
type Histograms struct {
	// Rows is the number of rows the window holds.
	Rows       int64       `json:"rows"`
	Features   []Histogram `json:"features"`
	Prediction *Histogram  `json:"prediction,omitempty"`
}

// Merge returns the sum of a and b, the histograms of two windows (two
// replicas, say) of the same profile. It fails with ErrMismatch when
// their features or bins differ. Neither argument is modified.
func Merge(a, b *Histograms) (*Histograms, error) {
	if len(a.Features) != len(b.Features) || (a.Prediction == nil) != (b.Prediction == nil) {
		return nil, fmt.Errorf("%w: %d and %d features", ErrMismatch, len(a.Features), len(b.Features))
	}
	sum := &Histograms{Rows: a.Rows + b.Rows, Features: make([]Histogram, len(a.Features))}
	pairs := make([][3]*Histogram, 0, len(a.Features)+1)
	for i := range a.Features {
		sum.Features[i] = a.Features[i].clone()
		pairs = append(pairs, [3]*Histogram{&sum.Features[i], &a.Features[i], &b.Features[i]})
	}
	if a.Prediction != nil {
		p := a.Prediction.clone()
		sum.Prediction = &p
		pairs = append(pairs, [3]*Histogram{sum.Prediction, a.Prediction, b.Prediction})
	}
	for _, p := range pairs {
		if err := p[2].check(p[1].Name, len(p[1].Counts)); err != nil {
			return nil, err
		}
		p[0].add(p[2])
	}
	return sum, nil
}
