package payloads_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/scorehub/scorehub/registry/payloads"
	"github.com/scorehub/scorehub/registry/process"
)

// The scoring path appends the sampled rows of two endpoints with what
// they answered; the payload route reads one endpoint's log a page at a
// time, the last seq of a page the cursor of the next.
func Example() {
	ctx := context.Background()
	s := payloads.NewMemStore(payloads.Options{Retention: 24 * time.Hour})
	defer s.Close()

	live := process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "live"}
	test := process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "test"}
	now := time.Now()
	err := s.Append(ctx, []payloads.Record{
		{Endpoint: live, Model: "churn@3", At: now, Row: json.RawMessage(`{"tenure": 3, "prediction(churn)": "yes"}`)},
		{Endpoint: test, Model: "churn@4", At: now, Row: json.RawMessage(`{"tenure": 40, "prediction(churn)": "no"}`)},
		{Endpoint: live, Model: "churn@3", At: now, Row: json.RawMessage(`{"tenure": 12, "prediction(churn)": "no"}`)},
		{Endpoint: live, Model: "churn@3", At: now, Row: json.RawMessage(`{"tenure": 7, "prediction(churn)": "yes"}`)},
	})
	if err != nil {
		log.Fatal(err)
	}

	var after int64
	for page := 1; ; page++ {
		rs, more, err := s.Page(ctx, live, after, 2)
		if err != nil {
			log.Fatal(err)
		}
		for _, r := range rs {
			fmt.Printf("page %d: seq %d, %s: %s\n", page, r.Seq, r.Model, r.Row)
		}
		if !more {
			break
		}
		after = rs[len(rs)-1].Seq
	}
	// Output:
	// page 1: seq 1, churn@3: {"tenure":3,"prediction(churn)":"yes"}
	// page 1: seq 3, churn@3: {"tenure":12,"prediction(churn)":"no"}
	// page 2: seq 4, churn@3: {"tenure":7,"prediction(churn)":"yes"}
}

// A FileStore keeps the log as JSON Lines files in a directory; what
// Flush wrote is there after a crash, and opening the directory again
// finds it.
func ExampleOpenFileStore() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "payloads-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ep := process.EndpointRef{Group: "DEFAULT", Path: "spend", Alias: "live"}
	s, err := payloads.OpenFileStore(dir, payloads.Options{})
	if err != nil {
		log.Fatal(err)
	}
	at := time.Now()
	if err := s.Append(ctx, []payloads.Record{{Endpoint: ep, Model: "spend@1", At: at, Row: json.RawMessage(`{"visits": 4, "prediction": 118.5}`)}}); err != nil {
		log.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range names {
		fmt.Println(e.Name())
	}

	s, err = payloads.OpenFileStore(dir, payloads.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	rs, _, err := s.Page(ctx, ep, 0, payloads.MaxPage)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rs {
		fmt.Printf("seq %d: %s\n", r.Seq, r.Row)
	}
	// Output:
	// payloads-0000000000000001.jsonl
	// payloads.lock
	// seq 1: {"visits":4,"prediction":118.5}
}
