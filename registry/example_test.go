package registry_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math"
	"os"
	"strings"

	"github.com/scorehub/scorehub/registry"
)

func ExampleNewTable() {
	t, err := registry.NewTable(3,
		registry.NumberColumn("age", []float64{41, math.NaN(), 7}, nil),
		registry.TextColumn("city", []string{"Oslo", "Lima", ""}, []bool{false, false, true}),
	)
	if err != nil {
		log.Fatal(err)
	}
	for i := range t.Rows() {
		age, hasAge := t.Row(i).Number("age")
		city, hasCity := t.Row(i).Text("city")
		fmt.Printf("row %d: age=%v (%v) city=%q (%v)\n", i, age, hasAge, city, hasCity)
	}
	// Output:
	// row 0: age=41 (true) city="Oslo" (true)
	// row 1: age=0 (false) city="Lima" (true)
	// row 2: age=7 (true) city="" (false)
}

func ExampleClassifier() {
	// A toy churn model: the older the customer, the likelier to stay.
	churn, err := registry.Classifier("churn", []string{"yes", "no"},
		func(_ context.Context, in registry.Input, probs []float64) error {
			age, _ := in.Table.Lookup("age")
			for i := range in.Table.Rows() {
				a, ok := age.Number(i)
				if !ok {
					probs[2*i], probs[2*i+1] = math.NaN(), math.NaN()
					continue
				}
				stay := math.Min(a/100, 1)
				probs[2*i], probs[2*i+1] = 1-stay, stay
			}
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	in, err := registry.NewTable(3, registry.NumberColumn("age", []float64{25, 80, 0}, []bool{false, false, true}))
	if err != nil {
		log.Fatal(err)
	}
	out, err := churn.Score(context.Background(), registry.Input{Table: in})
	if err != nil {
		log.Fatal(err)
	}
	var names []string
	for c := range out.NumColumns() {
		names = append(names, out.Column(c).Name)
	}
	fmt.Println(strings.Join(names, ", "))
	for i := range out.Rows() {
		label, ok := out.Row(i).Text("prediction(churn)")
		yes, _ := out.Row(i).Number("confidence(yes)")
		fmt.Printf("row %d: %q %v confidence(yes)=%.2f\n", i, label, ok, yes)
	}
	// Output:
	// prediction(churn), confidence(yes), confidence(no)
	// row 0: "yes" true confidence(yes)=0.75
	// row 1: "no" true confidence(yes)=0.20
	// row 2: "" false confidence(yes)=0.00
}

func ExampleSnapshot_Resolve() {
	ctx := context.Background()
	catalog := registry.NewCatalog()
	err := catalog.Register(registry.ProcessInfo{
		Name: "double",
		Process: registry.ProcessFunc(func(_ context.Context, in registry.Input) (*registry.Table, error) {
			x, _ := in.Table.Lookup("x")
			out := make([]float64, in.Table.Rows())
			for i := range out {
				out[i] = 2 * x.Numbers[i]
			}
			return registry.NewTable(len(out), registry.NumberColumn("y", out, nil))
		}),
	})
	if err != nil {
		log.Fatal(err)
	}
	store := registry.NewMemStore(registry.StoreOptions{})
	defer store.Close()
	reg, err := registry.New(ctx, catalog, store)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()

	_, err = reg.PutDeployment(ctx, registry.Deployment{
		Group: registry.DefaultGroup, Path: "math", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "double", Process: "double"}},
	})
	if err != nil {
		log.Fatal(err)
	}

	// What the scoring handler does for POST /DEFAULT/api/v1/services/math/double.
	target, err := reg.Snapshot().Resolve("DEFAULT", "math", "double")
	if err != nil {
		log.Fatal(err)
	}
	in, err := registry.NewTable(2, registry.NumberColumn("x", []float64{1.5, 4}, nil))
	if err != nil {
		log.Fatal(err)
	}
	out, err := target.Process.Process.Score(ctx, registry.Input{Table: in})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("queue:", target.Queue.Name)
	fmt.Println("y:", out.Column(0).Numbers)

	// Names that are not valid are never looked up.
	_, err = reg.Snapshot().Resolve("DEFAULT", "math", "..")
	fmt.Println("..:", errors.Is(err, registry.ErrNotFound))
	// Output:
	// queue: DEFAULT
	// y: [3 8]
	// ..: true
}

func ExampleOpenFileStore() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "scorehub-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := registry.OpenFileStore(dir, registry.StoreOptions{})
	if err != nil {
		log.Fatal(err)
	}
	reg, err := registry.New(ctx, registry.NewCatalog(), store)
	if err != nil {
		log.Fatal(err)
	}
	g, err := reg.PutGroup(ctx, registry.Group{Name: "fraud", Description: "Card fraud models"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored", g.Name, "at revision", g.Revision)
	reg.Close()
	if err := store.Close(); err != nil {
		log.Fatal(err)
	}

	// A restart: the group is still there.
	store, err = registry.OpenFileStore(dir, registry.StoreOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	reg, err = registry.New(ctx, registry.NewCatalog(), store)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	g, ok := reg.Snapshot().State().Group("fraud")
	fmt.Println("reopened:", ok, g.Description, "revision", g.Revision)
	// Output:
	// stored fraud at revision 1
	// reopened: true Card fraud models revision 1
}

// A process that reads the same columns in every row looks their positions
// up once per table.
func ExampleTable_Index() {
	t, err := registry.NewTable(2,
		registry.NumberColumn("age", []float64{34, 51}, nil),
		registry.TextColumn("city", []string{"Oslo", "Lyon"}, nil),
	)
	if err != nil {
		log.Fatal(err)
	}
	age := t.Column(t.Index("age"))
	for i := range t.Rows() {
		v, _ := age.Number(i)
		fmt.Println(v)
	}
	fmt.Println(t.Index("income"))
	// Output:
	// 34
	// 51
	// -1
}

func ExampleTable_Slice() {
	tab, err := registry.NewTable(4,
		registry.NumberColumn("x", []float64{10, 20, 30, 40}, nil),
		registry.TextColumn("name", []string{"a", "b", "c", "d"}, nil),
	)
	if err != nil {
		log.Fatal(err)
	}
	part := tab.Slice(1, 3) // rows 1 and 2, sharing tab's memory
	x, _ := part.Lookup("x")
	name, _ := part.Lookup("name")
	fmt.Println(part.Rows(), x.Numbers, name.Texts)
	// Output: 2 [20 30] [b c]
}
