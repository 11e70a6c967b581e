package drift_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/testenv"
	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
)

// population draws n rows of three numbers (normal, uniform,
// exponential), a city and a predicted label; shift moves income's mean
// by one standard deviation.
func population(t testing.TB, rng *rand.Rand, n int, shift float64) *process.Table {
	t.Helper()
	cities := []string{"berlin", "paris", "rome", "madrid", "vienna"}
	weights := []float64{0.4, 0.25, 0.15, 0.12, 0.08}
	income := numbers(n, func(int) float64 { return 50 + 10*rng.NormFloat64() + 10*shift })
	age := numbers(n, func(int) float64 { return 18 + 62*rng.Float64() })
	visits := numbers(n, func(int) float64 {
		if rng.Float64() < 0.05 {
			return nan
		}
		return rng.ExpFloat64() * 3
	})
	city := make([]string, n)
	label := make([]string, n)
	for i := range city {
		u := rng.Float64()
		k := 0
		for ; k < len(weights)-1 && u >= weights[k]; k++ {
			u -= weights[k]
		}
		city[i] = cities[k]
		label[i] = "no"
		if rng.Float64() < 0.2 {
			label[i] = "yes"
		}
	}
	return table(t, num("income", income...), num("age", age...), num("visits", visits...),
		text("city", city...), text("prediction(churn)", label...))
}

var populationFeatures = []process.ColumnSpec{
	{Name: "income", Kind: process.Number},
	{Name: "age", Kind: process.Number},
	{Name: "visits", Kind: process.Number},
	{Name: "city", Kind: process.Text},
}

func populationProfile(t testing.TB, rng *rand.Rand) *drift.Profile {
	t.Helper()
	p, err := drift.BuildProfile(population(t, rng, 20000, 0), populationFeatures,
		drift.Options{Prediction: process.ColumnSpec{Name: "prediction(churn)", Kind: process.Text}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDriftDetected: rows drawn from the reference distribution keep
// every PSI under 0.1; rows whose income is shifted by one standard
// deviation push income's PSI over 0.25 and leave the others under 0.1.
func TestDriftDetected(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 1))
	p := populationProfile(t, rng)
	tests := []struct {
		name    string
		shift   float64
		drifted string
	}{
		{"reference distribution", 0, ""},
		{"income shifted", 1, "income"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLive(t, p, drift.Window{Duration: time.Hour, Now: newClock().Now})
			for range 50 {
				if err := l.Observe(population(t, rng, 100, tt.shift)); err != nil {
					t.Fatal(err)
				}
			}
			r, err := drift.Compare(p, l.Snapshot())
			if err != nil {
				t.Fatal(err)
			}
			if r.Rows != 5000 {
				t.Errorf("report of %d rows, want 5000", r.Rows)
			}
			for _, f := range append(r.Features, *r.Prediction) {
				switch {
				case f.PSI == nil:
					t.Errorf("%s: no PSI", f.Name)
				case f.Name == tt.drifted && *f.PSI <= 0.25:
					t.Errorf("%s: PSI %.4f, want over 0.25 for the shifted feature", f.Name, *f.PSI)
				case f.Name != tt.drifted && *f.PSI >= 0.1:
					t.Errorf("%s: PSI %.4f, want under 0.1", f.Name, *f.PSI)
				}
			}
		})
	}
}

// sciPyScript reads pairs of bin counts and writes their PSI, computed
// with NumPy with the package's smoothing, and their Jensen–Shannon
// distance from scipy.spatial.distance.jensenshannon.
const sciPyScript = `
import json, sys
import numpy as np
from scipy.spatial.distance import jensenshannon
EPS = 1e-4
def shares(c):
    p = np.asarray(c, dtype=np.float64)
    p = p / p.sum()
    p = np.where(p == 0, EPS, p)
    return p / p.sum()
out = []
for ref, live in json.load(sys.stdin):
    r, l = shares(ref), shares(live)
    out.append({"psi": float(np.sum((l - r) * np.log(l / r))),
                "js": float(jensenshannon(np.asarray(ref, dtype=np.float64), np.asarray(live, dtype=np.float64)))})
json.dump(out, sys.stdout)
`

// TestPSIAndJSAgreeWithSciPy: on the bins of the drift test, and on
// histograms with empty bins on either side, PSI and JS equal NumPy's and
// SciPy's within 1e-9.
func TestPSIAndJSAgreeWithSciPy(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import numpy, scipy").Run(); err != nil {
		testenv.SkipOrFail(t, "%s cannot import numpy and scipy: install python3-numpy and python3-scipy to check PSI and JS against them", python)
	}
	pairs := [][2][]int64{
		{{10, 20, 30}, {10, 20, 30}},
		{{1, 2, 3, 4}, {4, 3, 2, 1}},
		{{5, 0, 5}, {1, 1, 8}},
		{{5, 3, 2}, {0, 0, 10}},
		{{1}, {7}},
		{{1000000, 1, 0, 3}, {2, 0, 0, 999999}},
	}
	rng := rand.New(rand.NewPCG(40, 2))
	p := populationProfile(t, rng)
	for _, shift := range []float64{0, 0.5, 1} {
		l := newLive(t, p, drift.Window{Rows: 1 << 20, Now: newClock().Now})
		if err := l.Observe(population(t, rng, 3000, shift)); err != nil {
			t.Fatal(err)
		}
		h := l.Snapshot()
		for i, f := range p.Features {
			pairs = append(pairs, [2][]int64{f.Reference.Counts, h.Features[i].Counts})
		}
	}
	in, err := json.Marshal(pairs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-c", sciPyScript)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("%s: %v\n%s", python, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var want []struct{ PSI, JS float64 }
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(pairs) {
		t.Fatalf("SciPy's answer %s: %v", out, err)
	}
	for i, pair := range pairs {
		psi, js := drift.PSI(pair[0], pair[1]), drift.JS(pair[0], pair[1])
		if math.Abs(psi-want[i].PSI) > 1e-9 || math.Abs(js-want[i].JS) > 1e-9 {
			t.Errorf("%v vs %v: PSI %.12g and JS %.12g, NumPy and SciPy say %.12g and %.12g",
				pair[0], pair[1], psi, js, want[i].PSI, want[i].JS)
		}
	}
}

func TestPSIAndJS(t *testing.T) {
	tests := []struct {
		name      string
		ref, live []int64
		psi, js   float64
	}{
		{"identical shares", []int64{1, 2, 3}, []int64{10, 20, 30}, 0, 0},
		// (0.75−0.25)·ln 3 + (0.25−0.75)·ln(1/3)
		{"swapped halves", []int64{1, 3}, []int64{3, 1}, math.Log(3), math.Sqrt(0.75*math.Log(1.5) + 0.25*math.Log(0.5))},
		// Disjoint: JS reaches sqrt(ln 2); PSI is finite through the
		// smoothing: shares become 1/(1+ε) and ε/(1+ε).
		{"disjoint", []int64{4, 0}, []int64{0, 4}, 2 * (1 - 1e-4) / (1 + 1e-4) * math.Log(1e4), math.Sqrt(math.Ln2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if psi := drift.PSI(tt.ref, tt.live); math.Abs(psi-tt.psi) > 1e-12 {
				t.Errorf("PSI %v, want %v", psi, tt.psi)
			}
			if js := drift.JS(tt.ref, tt.live); math.Abs(js-tt.js) > 1e-12 {
				t.Errorf("JS %v, want %v", js, tt.js)
			}
		})
	}
	for _, bad := range [][2][]int64{{{1, 2}, {1}}, {{0, 0}, {1, 1}}, {nil, nil}} {
		if psi, js := drift.PSI(bad[0], bad[1]), drift.JS(bad[0], bad[1]); !math.IsNaN(psi) || !math.IsNaN(js) {
			t.Errorf("PSI and JS of %v and %v: %v and %v, want NaN", bad[0], bad[1], psi, js)
		}
	}
}

func TestCompare(t *testing.T) {
	p := smallProfile(t)
	l := newLive(t, p, drift.Window{Rows: 1000, Now: newClock().Now})
	if _, err := drift.Compare(p, l.Snapshot()); !errors.Is(err, drift.ErrNoRows) {
		t.Fatalf("Compare of an empty window: %v, want ErrNoRows", err)
	}
	err := l.Observe(table(t,
		num("x", 0, 1, 3, 5, 7, nan, nan, nan),
		text("city", "a", "b", "c", "zz", "", "", "", ""),
	))
	if err != nil {
		t.Fatal(err)
	}
	r, err := drift.Compare(p, l.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float64) *float64 { return &v }
	x, city := r.Features[0], r.Features[1]
	want := []struct {
		name      string
		got, want any
	}{
		{"x missing rate", x.MissingRate, drift.MissingRate{Reference: 0, Live: 3.0 / 8}},
		{"x out of range", x.OutOfRange, f(2.0 / 5)},
		{"x unseen", x.Unseen, (*float64)(nil)},
		{"x live counts", x.Live.Counts, []int64{2, 1, 2}},
		{"x reference counts", x.Reference.Counts, []int64{2, 2, 2}},
		{"x PSI", x.PSI, f(drift.PSI([]int64{2, 2, 2}, []int64{2, 1, 2}))},
		{"city missing rate", city.MissingRate, drift.MissingRate{Reference: 0, Live: 4.0 / 8}},
		{"city unseen", city.Unseen, f(1.0 / 4)},
		{"city out of range", city.OutOfRange, (*float64)(nil)},
		{"city JS", city.JS, f(drift.JS([]int64{3, 2, 1}, []int64{1, 1, 2}))},
		// Every row lacks a prediction: its rate is 1, its shares are
		// not defined.
		{"prediction missing rate", r.Prediction.MissingRate, drift.MissingRate{Reference: 0, Live: 1}},
		{"prediction PSI", r.Prediction.PSI, (*float64)(nil)},
		{"prediction unseen", r.Prediction.Unseen, (*float64)(nil)},
	}
	for _, w := range want {
		if diff := cmp.Diff(w.want, w.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", w.name, diff)
		}
	}

	b, err := json.Marshal(r.Features[1])
	if err != nil {
		t.Fatal(err)
	}
	var wire map[string]any
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"name", "psi", "js", "missingRate", "outOfRange", "unseen", "reference", "live"} {
		if _, ok := wire[key]; !ok {
			t.Errorf("report JSON %s has no %q", b, key)
		}
	}

	other := newLive(t, &drift.Profile{Features: p.Features}, drift.Window{Rows: 10})
	if err := other.Observe(table(t, num("x", 1))); err != nil {
		t.Fatal(err)
	}
	if _, err := drift.Compare(p, other.Snapshot()); !errors.Is(err, drift.ErrMismatch) {
		t.Errorf("Compare of histograms without the profile's prediction: %v, want ErrMismatch", err)
	}
}
