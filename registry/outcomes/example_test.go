package outcomes_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/process"
)

// The scoring path appends what the champion and a shadow challenger
// answered for rows with IDs; the outcomes come back a day later, and
// the joined records hold both models' answers beside the actual class.
func Example() {
	ctx := context.Background()
	s := outcomes.NewMemStore(outcomes.Options{Retention: 90 * 24 * time.Hour})
	defer s.Close()

	ep := process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "live"}
	scored := time.Now()
	classes := []string{"no", "yes"}
	err := s.Append(ctx, []outcomes.Prediction{
		{Endpoint: ep, RowID: "c-1001", Model: "churn@3", Role: "champion", Label: "yes", Classes: classes, Confidences: []float64{0.3, 0.7}, At: scored},
		{Endpoint: ep, RowID: "c-1001", Model: "churn@4", Role: "shadow", Label: "no", Classes: classes, Confidences: []float64{0.6, 0.4}, At: scored},
		{Endpoint: ep, RowID: "c-1002", Model: "churn@3", Role: "champion", Label: "no", Classes: classes, Confidences: []float64{0.9, 0.1}, At: scored},
	})
	if err != nil {
		log.Fatal(err)
	}

	applied, err := s.Feedback(ctx, ep, []outcomes.Outcome{
		{RowID: "c-1001", IsLabel: true, Label: "yes"},
		{RowID: "c-9999", IsLabel: true, Label: "no"}, // never scored with this ID
	}, scored.Add(24*time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("matched %d, unknown %d %v\n", applied.Matched, applied.Unknown, applied.UnknownIDs)

	joined, err := s.Joined(ctx, ep, time.Time{})
	if err != nil {
		log.Fatal(err)
	}
	for _, j := range joined {
		fmt.Printf("%s: %s (%s) said %s, it was %s\n", j.RowID, j.Model, j.Role, j.Label, j.Actual.Label)
	}
	pending, err := s.Pending(ctx, ep)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rows waiting for an outcome:", pending)
	// Output:
	// matched 1, unknown 1 [c-9999]
	// c-1001: churn@3 (champion) said yes, it was yes
	// c-1001: churn@4 (shadow) said no, it was yes
	// rows waiting for an outcome: 1
}

// A FileStore keeps the log in a directory; what Feedback recorded is on
// disk when it returns, and opening the directory again finds it.
func ExampleOpenFileStore() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "outcomes-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ep := process.EndpointRef{Group: "DEFAULT", Path: "spend", Alias: "live"}
	s, err := outcomes.OpenFileStore(dir, outcomes.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Append(ctx, []outcomes.Prediction{{Endpoint: ep, RowID: "42", Model: "spend@1", Role: "champion", Value: 118.5, At: time.Now()}}); err != nil {
		log.Fatal(err)
	}
	if _, err := s.Feedback(ctx, ep, []outcomes.Outcome{{RowID: "42", Value: 120}}, time.Now()); err != nil {
		log.Fatal(err)
	}
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}

	s, err = outcomes.OpenFileStore(dir, outcomes.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	joined, err := s.Joined(ctx, ep, time.Time{})
	if err != nil {
		log.Fatal(err)
	}
	for _, j := range joined {
		fmt.Printf("row %s: predicted %g, actual %g\n", j.RowID, j.Value, j.Actual.Value)
	}
	// Output:
	// row 42: predicted 118.5, actual 120
}
