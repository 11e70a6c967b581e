package drift

import (
	"errors"
	"fmt"
	"math"

	"github.com/scorehub/scorehub/registry/process"
)

// ErrNoRows reports a live window that holds no rows to compare.
var ErrNoRows = errors.New("drift: the live window holds no rows")

// Epsilon replaces a bin's share of 0 in [PSI], whose logarithm would
// otherwise be infinite; the shares are then renormalised to sum to 1.
const Epsilon = 1e-4

// Report compares a live window with its reference profile, feature by
// feature. It is a plain value, ready to send as JSON.
type Report struct {
	// Rows is the number of rows in the live window.
	Rows       int64           `json:"rows"`
	Features   []FeatureReport `json:"features"`
	Prediction *FeatureReport  `json:"prediction,omitempty"`
}

// FeatureReport holds one column's figures. Shares are of the column's
// values (its rows less the missing ones); a figure that is not defined
// is nil (JSON null): PSI, JS, OutOfRange and Unseen when the live
// window has no value of the column, PSI and JS on a declared profile
// (whose reference counts nothing), OutOfRange of a Text column and
// Unseen of a Number column other than a categorical one (a feature with
// Values).
type FeatureReport struct {
	Name string       `json:"name"`
	Kind process.Kind `json:"kind"`
	// PSI is the population stability index of the bin shares (see
	// [PSI]). Rules of thumb read under 0.1 as stable and over 0.25 as
	// shifted.
	PSI *float64 `json:"psi"`
	// JS is the Jensen–Shannon distance of the bin shares (see [JS]),
	// from 0 (the same) to sqrt(ln 2) (disjoint).
	JS          *float64    `json:"js"`
	MissingRate MissingRate `json:"missingRate"`
	// OutOfRange is the share of live values below the reference's Min
	// or above its Max.
	OutOfRange *float64 `json:"outOfRange"`
	// Unseen is the share of live values the reference never had.
	Unseen    *float64  `json:"unseen"`
	Reference Histogram `json:"reference"`
	Live      Histogram `json:"live"`
}

// MissingRate is the share of rows without a value, in the reference and
// in the live window; 0 where there are no rows (a declared profile's
// reference).
type MissingRate struct {
	Reference float64 `json:"reference"`
	Live      float64 `json:"live"`
}

// Compare reports how live, a [Live.Snapshot] of ref (or a [Merge] of
// several), differs from ref. It fails with ErrMismatch when live's
// histograms are not ref's and with ErrNoRows when live is empty.
func Compare(ref *Profile, live *Histograms) (*Report, error) {
	if err := ref.validate(); err != nil {
		return nil, err
	}
	if len(live.Features) != len(ref.Features) || (live.Prediction == nil) != (ref.Prediction == nil) {
		return nil, fmt.Errorf("%w: live has %d features, the profile %d", ErrMismatch, len(live.Features), len(ref.Features))
	}
	if live.Rows == 0 {
		return nil, ErrNoRows
	}
	r := &Report{Rows: live.Rows, Features: make([]FeatureReport, len(ref.Features))}
	for i := range ref.Features {
		fr, err := compareFeature(&ref.Features[i], &live.Features[i], ref.Declared)
		if err != nil {
			return nil, err
		}
		r.Features[i] = fr
	}
	if ref.Prediction != nil {
		fr, err := compareFeature(ref.Prediction, live.Prediction, ref.Declared)
		if err != nil {
			return nil, err
		}
		r.Prediction = &fr
	}
	return r, nil
}

// compareFeature reports on one column; declared says f's profile
// counts no reference row.
func compareFeature(f *Feature, live *Histogram, declared bool) (FeatureReport, error) {
	if err := live.check(f.Name, f.bins()); err != nil {
		return FeatureReport{}, err
	}
	fr := FeatureReport{Name: f.Name, Kind: f.Kind, Reference: f.Reference.clone(), Live: live.clone()}
	refValues, liveValues := f.Reference.present(), live.present()
	if rows := refValues + f.Reference.Missing; rows > 0 {
		fr.MissingRate.Reference = float64(f.Reference.Missing) / float64(rows)
	}
	if rows := liveValues + live.Missing; rows > 0 {
		fr.MissingRate.Live = float64(live.Missing) / float64(rows)
	}
	if liveValues == 0 {
		return fr, nil
	}
	if !declared {
		psi, js := PSI(f.Reference.Counts, live.Counts), JS(f.Reference.Counts, live.Counts)
		fr.PSI, fr.JS = &psi, &js
	}
	share := func(n int64) *float64 {
		s := float64(n) / float64(liveValues)
		return &s
	}
	if f.Kind == process.Number {
		fr.OutOfRange = share(live.OutOfRange)
	}
	if f.Kind == process.Text || len(f.Values) > 0 {
		fr.Unseen = share(live.Unseen)
	}
	return fr, nil
}

// PSI returns the population stability index of two histograms over the
// same bins, Σ (l − r)·ln(l/r) over the bins' shares r of ref and l of
// live. A share of 0 is replaced by [Epsilon] and the shares of that
// histogram renormalised to sum to 1, so that the figure stays finite.
// It returns NaN when the lengths differ or a histogram is empty.
func PSI(ref, live []int64) float64 {
	r, l := shares(ref, live)
	if r == nil {
		return math.NaN()
	}
	smooth(r)
	smooth(l)
	var psi float64
	for i := range r {
		psi += (l[i] - r[i]) * math.Log(l[i]/r[i])
	}
	return psi
}

// JS returns the Jensen–Shannon distance of two histograms over the same
// bins: the square root of the Jensen–Shannon divergence with natural
// logarithms, as scipy.spatial.distance.jensenshannon computes it. It
// needs no smoothing: a bin empty on one side adds its finite share. It
// returns NaN when the lengths differ or a histogram is empty.
func JS(ref, live []int64) float64 {
	p, q := shares(ref, live)
	if p == nil {
		return math.NaN()
	}
	var d float64
	for i := range p {
		m := (p[i] + q[i]) / 2
		if p[i] > 0 {
			d += p[i] * math.Log(p[i]/m)
		}
		if q[i] > 0 {
			d += q[i] * math.Log(q[i]/m)
		}
	}
	return math.Sqrt(max(d/2, 0))
}

// shares returns a's and b's counts as shares of their totals, or nil
// when they cannot be compared.
func shares(a, b []int64) ([]float64, []float64) {
	if len(a) != len(b) || len(a) == 0 {
		return nil, nil
	}
	var sa, sb int64
	for i := range a {
		sa += a[i]
		sb += b[i]
	}
	if sa <= 0 || sb <= 0 {
		return nil, nil
	}
	pa, pb := make([]float64, len(a)), make([]float64, len(b))
	for i := range a {
		pa[i] = float64(a[i]) / float64(sa)
		pb[i] = float64(b[i]) / float64(sb)
	}
	return pa, pb
}

// smooth replaces the zeros of shares p by Epsilon and renormalises.
func smooth(p []float64) {
	var sum float64
	for i, v := range p {
		if v == 0 {
			p[i] = Epsilon
		}
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
}
