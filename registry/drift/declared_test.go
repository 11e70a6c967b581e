package drift_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
)

func ptr(v float64) *float64 { return &v }

// declared is a schema of one input x of kind, declared d.
func declared(kind process.Kind, d process.Domain) process.ModelSchema {
	d.Name = "x"
	return process.ModelSchema{Inputs: []process.ColumnSpec{{Name: "x", Kind: kind}}, Domains: []process.Domain{d}}
}

func TestDeclaredProfile(t *testing.T) {
	many := make([]float64, 150)
	for i := range many {
		many[i] = float64(149 - i)
	}
	var manyEdges []float64
	for j := 1; j < drift.MaxBins; j++ {
		manyEdges = append(manyEdges, float64(j*150/drift.MaxBins-1))
	}
	sorted := make([]float64, 150)
	for i := range sorted {
		sorted[i] = float64(i)
	}
	tests := []struct {
		name   string
		schema process.ModelSchema
		opts   drift.Options
		want   drift.Feature // its Name, Kind and Reference are filled in
	}{
		{
			name:   "a range in equal bins",
			schema: declared(process.Number, process.Domain{Min: ptr(0), Max: ptr(10)}),
			opts:   drift.Options{Bins: 5},
			want:   drift.Feature{Edges: []float64{2, 4, 6, 8}, Min: 0, Max: 10},
		},
		{
			name:   "ten bins by default",
			schema: declared(process.Number, process.Domain{Min: ptr(1), Max: ptr(2)}),
			want:   drift.Feature{Edges: []float64{1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9}, Min: 1, Max: 2},
		},
		{
			// The bound of an open end is out of range: the range is
			// that of the numbers inside it.
			name:   "open ends",
			schema: declared(process.Number, process.Domain{Min: ptr(0), Max: ptr(1), MinOpen: true, MaxOpen: true}),
			opts:   drift.Options{Bins: 2},
			want:   drift.Feature{Edges: []float64{0.5}, Min: math.SmallestNonzeroFloat64, Max: math.Nextafter(1, 0)},
		},
		{
			name:   "a point is one bin",
			schema: declared(process.Number, process.Domain{Min: ptr(3), Max: ptr(3)}),
			want:   drift.Feature{Min: 3, Max: 3},
		},
		{
			name:   "a range too narrow to split",
			schema: declared(process.Number, process.Domain{Min: ptr(1), Max: ptr(math.Nextafter(1, 2))}),
			want:   drift.Feature{Min: 1, Max: math.Nextafter(1, 2)},
		},
		{
			name:   "a range wider than a float64",
			schema: declared(process.Number, process.Domain{Min: ptr(-math.MaxFloat64), Max: ptr(math.MaxFloat64)}),
			opts:   drift.Options{Bins: 2},
			want:   drift.Feature{Edges: []float64{0}, Min: -math.MaxFloat64, Max: math.MaxFloat64},
		},
		{
			// Each category is the top of its bin; the bins ignore
			// opts.Bins.
			name:   "categorical numbers",
			schema: declared(process.Number, process.Domain{Numbers: []float64{5, 1, 3, 1}}),
			opts:   drift.Options{Bins: 2},
			want:   drift.Feature{Edges: []float64{1, 3}, Min: 1, Max: 5, Values: []float64{1, 3, 5}},
		},
		{
			name:   "one category",
			schema: declared(process.Number, process.Domain{Numbers: []float64{7}}),
			want:   drift.Feature{Min: 7, Max: 7, Values: []float64{7}},
		},
		{
			name:   "more categories than bins share them",
			schema: declared(process.Number, process.Domain{Numbers: many}),
			want:   drift.Feature{Edges: manyEdges, Min: 0, Max: 149, Values: sorted},
		},
		{
			name:   "text values, each a bin",
			schema: declared(process.Text, process.Domain{Values: []string{"pro", "basic", "pro", "free"}}),
			opts:   drift.Options{Categories: 5},
			want:   drift.Feature{Categories: []string{"pro", "basic", "free"}},
		},
		{
			name:   "text values past the categories asked for",
			schema: declared(process.Text, process.Domain{Values: []string{"a", "b", "c", "d"}}),
			opts:   drift.Options{Categories: 2},
			want:   drift.Feature{Categories: []string{"a", "b"}, Others: []string{"c", "d"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := drift.DeclaredProfile(tt.schema, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.Name, want.Kind = "x", tt.schema.Inputs[0].Kind
			bins := len(want.Edges) + 1
			if want.Kind == process.Text {
				bins = len(want.Categories) + 1
			}
			want.Reference = drift.Histogram{Name: "x", Counts: make([]int64, bins)}
			if diff := cmp.Diff(&drift.Profile{Features: []drift.Feature{want}, Declared: true}, p); diff != "" {
				t.Errorf("profile (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeclaredProfileOfInputs: the features are the inputs with a
// domain it can bin, in the inputs' order.
func TestDeclaredProfileOfInputs(t *testing.T) {
	schema := process.ModelSchema{
		Inputs: []process.ColumnSpec{
			{Name: "plan", Kind: process.Text}, {Name: "free", Kind: process.Number},
			{Name: "half", Kind: process.Number}, {Name: "age", Kind: process.Number},
		},
		Domains: []process.Domain{
			{Name: "plan", Values: []string{"basic"}}, {Name: "half", Min: ptr(0)}, {Name: "age", Min: ptr(18), Max: ptr(99)},
		},
	}
	p, err := drift.DeclaredProfile(schema, drift.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range p.Features {
		names = append(names, f.Name)
	}
	if want := []string{"plan", "age"}; !cmp.Equal(names, want) {
		t.Errorf("features %q, want %q", names, want)
	}
	if p.Prediction != nil || !p.Declared {
		t.Errorf("prediction %v, declared %t: want none, and declared", p.Prediction, p.Declared)
	}
}

func TestDeclaredProfileErrors(t *testing.T) {
	x := []process.ColumnSpec{{Name: "x", Kind: process.Number}}
	tests := []struct {
		name   string
		schema process.ModelSchema
		opts   drift.Options
		want   string
		is     error
	}{
		{"no domain", process.ModelSchema{Inputs: x}, drift.Options{}, "declares no input's values", drift.ErrUndeclared},
		{"one bound only", declared(process.Number, process.Domain{Max: ptr(1)}), drift.Options{}, "declares no input's values", drift.ErrUndeclared},
		{"no values", declared(process.Text, process.Domain{}), drift.Options{}, "declares no input's values", drift.ErrUndeclared},
		{"a domain of no input", process.ModelSchema{Inputs: x, Domains: []process.Domain{{Name: "y", Min: ptr(0), Max: ptr(1)}}}, drift.Options{}, `domain of "y", which is not an input`, nil},
		{"a domain twice", process.ModelSchema{Inputs: x, Domains: []process.Domain{{Name: "x", Min: ptr(0), Max: ptr(1)}, {Name: "x", Numbers: []float64{1}}}}, drift.Options{}, `domain of "x" twice`, nil},
		{"text bounds", declared(process.Text, process.Domain{Min: ptr(0), Max: ptr(1)}), drift.Options{}, `text input "x" declares values of another kind`, nil},
		{"number texts", declared(process.Number, process.Domain{Values: []string{"a"}}), drift.Options{}, `number input "x" declares values of another kind`, nil},
		{"an open point", declared(process.Number, process.Domain{Min: ptr(1), Max: ptr(1), MinOpen: true}), drift.Options{}, "holds no finite number", nil},
		{"an infinite bound", declared(process.Number, process.Domain{Min: ptr(0), Max: ptr(math.Inf(1))}), drift.Options{}, "holds no finite number", nil},
		{"a NaN category", declared(process.Number, process.Domain{Numbers: []float64{1, math.NaN()}}), drift.Options{}, "not a finite number", nil},
		{"one bin", declared(process.Number, process.Domain{Min: ptr(0), Max: ptr(1)}), drift.Options{Bins: 1}, "1 bins asked for", nil},
		{"too many categories", declared(process.Text, process.Domain{Values: []string{"a"}}), drift.Options{Categories: drift.MaxCategories + 1}, "categories asked for", nil},
		{"a prediction", declared(process.Number, process.Domain{Min: ptr(0), Max: ptr(1)}), drift.Options{Prediction: process.ColumnSpec{Name: "p", Kind: process.Number}}, `no prediction, and "p" was asked for`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := drift.DeclaredProfile(tt.schema, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "drift: ") {
				t.Fatalf("DeclaredProfile: %v, want an error saying %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
		})
	}
}

// declaredProfile declares an age of 18 to 80 in 2 bins, a categorical
// shop of codes 0, 1, 2 and 5, and a plan basic or pro.
func declaredProfile(t testing.TB) *drift.Profile {
	t.Helper()
	p, err := drift.DeclaredProfile(process.ModelSchema{
		Inputs: []process.ColumnSpec{{Name: "age", Kind: process.Number}, {Name: "shop", Kind: process.Number}, {Name: "plan", Kind: process.Text}},
		Domains: []process.Domain{
			{Name: "age", Min: ptr(18), Max: ptr(80)},
			{Name: "shop", Numbers: []float64{5, 0, 2, 1}},
			{Name: "plan", Values: []string{"basic", "pro"}},
		},
	}, drift.Options{Bins: 2})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCompareDeclared: on a declared profile, a report measures the live
// values out of the declared ranges and the categories never declared,
// and no shape: PSI and JS are null.
func TestCompareDeclared(t *testing.T) {
	p := declaredProfile(t)
	l := newLive(t, p, drift.Window{Rows: 1000, Now: newClock().Now})
	err := l.Observe(table(t,
		num("age", 17, 18, 50, 80, 81, nan, 30, 40),
		// 3 between categories, 1.5 no integer, -1 and 6 beyond them.
		num("shop", 0, 1, 2, 5, 3, 1.5, -1, 6),
		text("plan", "basic", "pro", "pro", "free", "", "", "basic", "Pro"),
	))
	if err != nil {
		t.Fatal(err)
	}
	h := l.Snapshot()
	wantLive := []drift.Histogram{
		{Name: "age", Counts: []int64{4, 3}, Missing: 1, OutOfRange: 2},
		// Bins ≤0, (0, 1], (1, 2], >2: each category tops its bin.
		{Name: "shop", Counts: []int64{2, 1, 2, 3}, OutOfRange: 2, Unseen: 4},
		{Name: "plan", Counts: []int64{2, 2, 2}, Missing: 2, Unseen: 2},
	}
	if diff := cmp.Diff(wantLive, h.Features); diff != "" {
		t.Fatalf("live histograms (-want +got):\n%s", diff)
	}
	r, err := drift.Compare(p, h)
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float64) *float64 { return &v }
	none := (*float64)(nil)
	age, shop, plan := r.Features[0], r.Features[1], r.Features[2]
	want := []struct {
		name      string
		got, want any
	}{
		{"age PSI", age.PSI, none},
		{"age JS", age.JS, none},
		{"age missing rate", age.MissingRate, drift.MissingRate{Reference: 0, Live: 1.0 / 8}},
		{"age out of range", age.OutOfRange, f(2.0 / 7)},
		{"age unseen", age.Unseen, none},
		{"shop PSI", shop.PSI, none},
		{"shop out of range", shop.OutOfRange, f(2.0 / 8)},
		{"shop unseen", shop.Unseen, f(4.0 / 8)},
		{"plan JS", plan.JS, none},
		{"plan missing rate", plan.MissingRate, drift.MissingRate{Reference: 0, Live: 2.0 / 8}},
		{"plan unseen", plan.Unseen, f(2.0 / 6)},
		{"plan out of range", plan.OutOfRange, none},
	}
	for _, w := range want {
		if diff := cmp.Diff(w.want, w.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", w.name, diff)
		}
	}

	b, err := json.Marshal(r.Features[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"psi":null`, `"js":null`, `"missingRate":{"reference":0,`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("report JSON %s has no %s", b, s)
		}
	}

	// Two replicas' windows add up, the categorical number's unseen
	// values too.
	sum, err := drift.Merge(h, h)
	if err != nil {
		t.Fatal(err)
	}
	if got := sum.Features[1].Unseen; got != 8 {
		t.Errorf("merged unseen shop values %d, want 8", got)
	}
}

// TestDeclaredProfileJSON: a declared profile survives being stored as
// JSON; one that counts reference rows, or a profile from rows that
// counts none, is refused where it is decoded.
func TestDeclaredProfileJSON(t *testing.T) {
	p := declaredProfile(t)
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
		{"a reference count", `"counts":[0,0],"missing":0`, `"counts":[0,1],"missing":0`, `feature "age" of a declared profile has reference counts`},
		{"reference missing values", `"counts":[0,0],"missing":0`, `"counts":[0,0],"missing":3`, "of a declared profile has reference counts"},
		{"not declared", `"declared":true`, `"declared":false`, `feature "age" has no reference value`},
		{"values out of order", `"values":[0,1,2,5]`, `"values":[0,2,1,5]`, `feature "shop" has values that are not ascending within its range`},
		{"values out of range", `"values":[0,1,2,5]`, `"values":[0,1,2,6]`, "not ascending within its range"},
		{"values of a text", `"categories":["basic","pro"]`, `"categories":["basic","pro"],"values":[1]`, `text feature "plan" has edges or values`},
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
