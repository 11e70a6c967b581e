package drift_test

import (
	"fmt"
	"log"
	"time"

	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
)

// A model version's profile is built from its training rows; the scoring
// path observes each request; a management route compares the last hour
// with the profile.
func Example() {
	ref, err := process.NewTable(8,
		process.NumberColumn("age", []float64{21, 25, 30, 34, 41, 47, 52, 60}, nil),
		process.TextColumn("plan", []string{"basic", "basic", "basic", "pro", "pro", "basic", "pro", "basic"}, nil),
	)
	if err != nil {
		log.Fatal(err)
	}
	profile, err := drift.BuildProfile(ref, []process.ColumnSpec{
		{Name: "age", Kind: process.Number},
		{Name: "plan", Kind: process.Text},
	}, drift.Options{Bins: 4})
	if err != nil {
		log.Fatal(err)
	}

	live, err := drift.NewLive(profile, drift.Window{Duration: time.Hour, Rows: 100000})
	if err != nil {
		log.Fatal(err)
	}
	// One request: older customers, a plan the model never saw, one age
	// missing.
	req, err := process.NewTable(4,
		process.NumberColumn("age", []float64{58, 63, 70, 0}, []bool{false, false, false, true}),
		process.TextColumn("plan", []string{"pro", "pro", "enterprise", "basic"}, nil),
	)
	if err != nil {
		log.Fatal(err)
	}
	if err := live.Observe(req); err != nil {
		log.Fatal(err)
	}

	report, err := drift.Compare(profile, live.Snapshot())
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range report.Features {
		fmt.Printf("%s: PSI %.2f, JS %.2f, missing %.2f → %.2f", f.Name, *f.PSI, *f.JS, f.MissingRate.Reference, f.MissingRate.Live)
		if f.OutOfRange != nil {
			fmt.Printf(", out of range %.2f", *f.OutOfRange)
		}
		if f.Unseen != nil {
			fmt.Printf(", unseen %.2f", *f.Unseen)
		}
		fmt.Println()
	}
	// Output:
	// age: PSI 6.90, JS 0.62, missing 0.00 → 0.25, out of range 0.67
	// plan: PSI 2.33, JS 0.36, missing 0.00 → 0.00, unseen 0.25
}

// A model version uploaded without rows is profiled from what its file
// declares (here a LightGBM model's feature_infos: a range for age, the
// category codes of shop, pandas' names of plan); its report checks
// ranges and categories, not shapes.
func ExampleDeclaredProfile() {
	lo, hi := 18.0, 80.0
	schema := process.ModelSchema{
		Inputs: []process.ColumnSpec{
			{Name: "age", Kind: process.Number},
			{Name: "shop", Kind: process.Number},
			{Name: "plan", Kind: process.Text},
		},
		Domains: []process.Domain{
			{Name: "age", Min: &lo, Max: &hi},
			{Name: "shop", Numbers: []float64{3, 0, 1, 2}},
			{Name: "plan", Values: []string{"basic", "pro"}},
		},
	}
	profile, err := drift.DeclaredProfile(schema, drift.Options{Bins: 4})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range profile.Features {
		if f.Kind == process.Number {
			fmt.Printf("%s: range [%v, %v], edges %v\n", f.Name, f.Min, f.Max, f.Edges)
		} else {
			fmt.Printf("%s: categories %q\n", f.Name, f.Categories)
		}
	}

	live, err := drift.NewLive(profile, drift.Window{Duration: time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	req, err := process.NewTable(4,
		process.NumberColumn("age", []float64{17, 30, 45, 91}, nil),
		process.NumberColumn("shop", []float64{0, 2, 7, 1.5}, nil),
		process.TextColumn("plan", []string{"pro", "basic", "enterprise", "pro"}, nil),
	)
	if err != nil {
		log.Fatal(err)
	}
	if err := live.Observe(req); err != nil {
		log.Fatal(err)
	}
	report, err := drift.Compare(profile, live.Snapshot())
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range report.Features {
		fmt.Printf("%s: PSI %v", f.Name, f.PSI)
		if f.OutOfRange != nil {
			fmt.Printf(", out of range %.2f", *f.OutOfRange)
		}
		if f.Unseen != nil {
			fmt.Printf(", unseen %.2f", *f.Unseen)
		}
		fmt.Println()
	}
	// Output:
	// age: range [18, 80], edges [33.5 49 64.5]
	// shop: range [0, 3], edges [0 1 2]
	// plan: categories ["basic" "pro"]
	// age: PSI <nil>, out of range 0.50
	// shop: PSI <nil>, out of range 0.25, unseen 0.50
	// plan: PSI <nil>, unseen 0.25
}
