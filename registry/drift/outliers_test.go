package drift_test

import (
	"slices"
	"testing"

	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
)

// TestOutliersFlag: a row is flagged with the names of its inputs outside
// the reference, in the profile's order: a number out of [Min, Max], a
// category the reference never had (rare ones in Others count as seen),
// a value between a categorical number's known values; missing values
// and absent columns flag nothing.
func TestOutliersFlag(t *testing.T) {
	ref := table(t,
		num("age", 20, 30, 40, 50),
		text("plan", "gold", "gold", "basic", "trial"))
	p, err := drift.BuildProfile(ref, []process.ColumnSpec{{Name: "age", Kind: process.Number}, {Name: "plan", Kind: process.Text}},
		drift.Options{Categories: 1}) // trial and basic in Others
	if err != nil {
		t.Fatal(err)
	}
	o := drift.NewOutliers(p)
	live := table(t,
		num("age", 20, 19, 50.5, 35, nan, 99),
		text("plan", "gold", "trial", "gold", "platinum", "", "free"))
	names, none := o.Flag(live)
	want := []string{"", "age", "age", "plan", "", "age, plan"}
	if !slices.Equal(names, want) {
		t.Errorf("flags %q, want %q", names, want)
	}
	for i, n := range none {
		if n != (want[i] == "") {
			t.Errorf("row %d: none %v with flags %q", i, n, names[i])
		}
	}
	if names, none := o.Flag(table(t, text("other", "x"))); names[0] != "" || !none[0] {
		t.Errorf("a table without the profiled columns: %q %v, want nothing flagged", names, none)
	}

	declared, err := drift.DeclaredProfile(process.ModelSchema{
		Inputs:  []process.ColumnSpec{{Name: "code", Kind: process.Number}},
		Domains: []process.Domain{{Name: "code", Numbers: []float64{1, 3, 5}}},
	}, drift.Options{})
	if err != nil {
		t.Fatal(err)
	}
	names, _ = drift.NewOutliers(declared).Flag(table(t, num("code", 1, 2, 5, 7, 0)))
	if want := []string{"", "code", "", "code", "code"}; !slices.Equal(names, want) {
		t.Errorf("categorical numbers: flags %q, want %q", names, want)
	}
}

// TestMost: a profile cut to n features keeps the n most important when
// every feature has an importance, else the first n, in the profile's
// order, and names those it leaves out.
func TestMost(t *testing.T) {
	ref := table(t, num("a", 1, 2), num("b", 1, 2), num("c", 1, 2))
	specs := []process.ColumnSpec{{Name: "a", Kind: process.Number}, {Name: "b", Kind: process.Number}, {Name: "c", Kind: process.Number}}
	p, err := drift.BuildProfile(ref, specs, drift.Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := func(p *drift.Profile) []string {
		var out []string
		for _, f := range p.Features {
			out = append(out, f.Name)
		}
		return out
	}
	if q, left := p.Most(2); !slices.Equal(names(q), []string{"a", "b"}) || !slices.Equal(left, []string{"c"}) || p.RankedBy() != "order" {
		t.Errorf("without importance: kept %v, left %v, ranked by %s", names(q), left, p.RankedBy())
	}
	for i, v := range []float64{0.1, 0.5, 0.3} {
		p.Features[i].Importance = &v
	}
	if q, left := p.Most(2); !slices.Equal(names(q), []string{"b", "c"}) || !slices.Equal(left, []string{"a"}) || p.RankedBy() != "importance" {
		t.Errorf("by importance: kept %v, left %v, ranked by %s", names(q), left, p.RankedBy())
	}
	if q, left := p.Most(3); q != p || left != nil {
		t.Errorf("n as large as the profile: %v %v, want the profile itself", names(q), left)
	}
}
