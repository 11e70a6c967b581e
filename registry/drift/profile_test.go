package drift_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
)

func TestBuildProfileNumbers(t *testing.T) {
	tests := []struct {
		name     string
		values   []float64
		bins     int
		edges    []float64
		counts   []int64
		missing  int64
		min, max float64
	}{
		{
			name:   "1 to 10 in 5 bins",
			values: []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1},
			bins:   5,
			// lower quantiles at 0.2, 0.4, 0.6, 0.8 of 9 steps: ranks 1, 3, 5, 7
			edges:  []float64{2, 4, 6, 8},
			counts: []int64{2, 2, 2, 2, 2},
			min:    1, max: 10,
		},
		{
			name:   "ties collapse edges",
			values: []float64{0, 0, 0, 0, 0, 0, 0, 1, 2, 3},
			bins:   5,
			edges:  []float64{0, 1},
			counts: []int64{7, 1, 2},
			min:    0, max: 3,
		},
		{
			name:   "a constant is one open bin",
			values: []float64{4, 4, 4},
			bins:   10,
			edges:  nil,
			counts: []int64{3},
			min:    4, max: 4,
		},
		{
			name:    "missing, NaN and infinities are missing",
			values:  []float64{nan, 1, math.Inf(1), 2, math.Inf(-1), 3, 4},
			bins:    2,
			edges:   []float64{2},
			counts:  []int64{2, 2},
			missing: 3,
			min:     1, max: 4,
		},
		{
			name:   "a maximum that repeats keeps the last bin",
			values: []float64{1, 2, 9, 9, 9, 9, 9, 9},
			bins:   4,
			edges:  []float64{2},
			counts: []int64{2, 6},
			min:    1, max: 9,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := table(t, num("x", tt.values...))
			p, err := drift.BuildProfile(tab, []process.ColumnSpec{{Name: "x", Kind: process.Number}}, drift.Options{Bins: tt.bins})
			if err != nil {
				t.Fatal(err)
			}
			want := drift.Feature{Name: "x", Kind: process.Number, Edges: tt.edges, Min: tt.min, Max: tt.max,
				Reference: drift.Histogram{Name: "x", Counts: tt.counts, Missing: tt.missing}}
			if diff := cmp.Diff(want, p.Features[0]); diff != "" {
				t.Errorf("feature (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildProfileCategories(t *testing.T) {
	tab := table(t,
		text("city", "b", "a", "c", "a", "b", "a", "d", "", "e", "c"),
		text("prediction(churn)", "no", "no", "yes", "no", "no", "yes", "no", "no", "no", "yes"),
	)
	p, err := drift.BuildProfile(tab, []process.ColumnSpec{{Name: "city", Kind: process.Text}},
		drift.Options{Categories: 2, Prediction: process.ColumnSpec{Name: "prediction(churn)", Kind: process.Text}})
	if err != nil {
		t.Fatal(err)
	}
	want := &drift.Profile{
		Features: []drift.Feature{{
			Name: "city", Kind: process.Text,
			// a 3, then b and c tie at 2 and b comes first; d and e are
			// "other" and remembered as seen.
			Categories: []string{"a", "b"},
			Others:     []string{"c", "d", "e"},
			Reference:  drift.Histogram{Name: "city", Counts: []int64{3, 2, 4}, Missing: 1},
		}},
		Prediction: &drift.Feature{
			Name: "prediction(churn)", Kind: process.Text,
			Categories: []string{"no", "yes"},
			Reference:  drift.Histogram{Name: "prediction(churn)", Counts: []int64{7, 3, 0}},
		},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("profile (-want +got):\n%s", diff)
	}
}

func TestBuildProfileErrors(t *testing.T) {
	tab := table(t, num("x", 1, 2, 3), num("empty", nan, nan, nan), text("t", "a", "b", "a"))
	x := []process.ColumnSpec{{Name: "x", Kind: process.Number}}
	tests := []struct {
		name     string
		features []process.ColumnSpec
		opts     drift.Options
		want     string
	}{
		{"absent column", []process.ColumnSpec{{Name: "y", Kind: process.Number}}, drift.Options{}, `column "y" is not in the reference rows`},
		{"wrong kind", []process.ColumnSpec{{Name: "t", Kind: process.Number}}, drift.Options{}, `column "t" is text in the reference rows, want number`},
		{"no value", []process.ColumnSpec{{Name: "empty", Kind: process.Number}}, drift.Options{}, `column "empty" has no value`},
		{"one bin", x, drift.Options{Bins: 1}, "1 bins asked for"},
		{"too many bins", x, drift.Options{Bins: drift.MaxBins + 1}, "bins asked for"},
		{"too many categories", x, drift.Options{Categories: drift.MaxCategories + 1}, "categories asked for"},
		{"feature twice", append(x, x...), drift.Options{}, `names feature "x" twice`},
		{"absent prediction", x, drift.Options{Prediction: process.ColumnSpec{Name: "p", Kind: process.Text}}, `column "p" is not in the reference rows`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := drift.BuildProfile(tab, tt.features, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "drift: ") {
				t.Fatalf("BuildProfile: %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// TestProfileJSON: a profile survives being stored as JSON, and a
// damaged one is refused where it is decoded.
func TestProfileJSON(t *testing.T) {
	tab := table(t, num("x", 1, 2, 3, 4, nan), text("t", "a", "b", "a", "", "c"), num("prediction", 0.1, 0.2, 0.3, 0.4, 0.5))
	p, err := drift.BuildProfile(tab, []process.ColumnSpec{{Name: "x", Kind: process.Number}, {Name: "t", Kind: process.Text}},
		drift.Options{Bins: 2, Categories: 1, Prediction: process.ColumnSpec{Name: "prediction", Kind: process.Number}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back drift.Profile
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	if diff := cmp.Diff(p, &back); diff != "" {
		t.Errorf("decoded profile (-built +decoded):\n%s", diff)
	}

	good := string(b)
	damage := []struct {
		name, old, new, want string
	}{
		{"edges out of order", `"edges":[2]`, `"edges":[2,1]`, "ascending"},
		{"counts of other bins", `"counts":[2,2]`, `"counts":[2,2,1]`, "has 3 counts, want 2"},
		{"negative count", `"counts":[2,2]`, `"counts":[2,-2]`, "negative count"},
		{"unknown kind", `"kind":"text"`, `"kind":"date"`, "unknown kind"},
		{"category twice", `"others":["b","c"]`, `"others":["b","a"]`, `category "a" twice`},
		{"range backwards", `"min":1,"max":4`, `"min":4,"max":1`, "range [4, 1]"},
		{"histogram of another column", `"reference":{"name":"x"`, `"reference":{"name":"y"`, `histogram "y" where feature "x"`},
	}
	for _, d := range damage {
		t.Run(d.name, func(t *testing.T) {
			if !strings.Contains(good, d.old) {
				t.Fatalf("profile JSON %s has no %s", good, d.old)
			}
			var q drift.Profile
			err := json.Unmarshal([]byte(strings.Replace(good, d.old, d.new, 1)), &q)
			if err == nil || !strings.Contains(err.Error(), d.want) {
				t.Fatalf("decoding a profile with %s: %v, want an error saying %q", d.name, err, d.want)
			}
		})
	}
}
