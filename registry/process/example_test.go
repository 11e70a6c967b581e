package process_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"strings"

	"github.com/scorehub/scorehub/registry/process"
)

func ExampleNewTable() {
	t, err := process.NewTable(3,
		process.NumberColumn("age", []float64{41, math.NaN(), 7}, nil),
		process.TextColumn("city", []string{"Oslo", "Lima", ""}, []bool{false, false, true}),
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
	churn, err := process.Classifier("churn", []string{"yes", "no"},
		func(_ context.Context, in process.Input, probs []float64) error {
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
	in, err := process.NewTable(3, process.NumberColumn("age", []float64{25, 80, 0}, []bool{false, false, true}))
	if err != nil {
		log.Fatal(err)
	}
	out, err := churn.Score(context.Background(), process.Input{Table: in})
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

// A process that reads the same columns in every row looks their positions
// up once per table.
func ExampleTable_Index() {
	t, err := process.NewTable(2,
		process.NumberColumn("age", []float64{34, 51}, nil),
		process.TextColumn("city", []string{"Oslo", "Lyon"}, nil),
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
	tab, err := process.NewTable(4,
		process.NumberColumn("x", []float64{10, 20, 30, 40}, nil),
		process.TextColumn("name", []string{"a", "b", "c", "d"}, nil),
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
