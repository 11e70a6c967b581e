package process_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry/process"
)

// echo is a process that returns no result columns.
var echo = process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
	return process.NewTable(in.Table.Rows())
})

func TestCatalogRegisterErrors(t *testing.T) {
	tests := []struct {
		name string
		p    process.ProcessInfo
		want string
	}{
		{"invalid name", process.ProcessInfo{Name: "../etc", Process: echo}, "not a valid name"},
		{"empty name", process.ProcessInfo{Process: echo}, "not a valid name"},
		{"nil process", process.ProcessInfo{Name: "p"}, "nil Process"},
		{"unnamed input column", process.ProcessInfo{Name: "p", Process: echo, Input: []process.ColumnSpec{{Kind: process.Number}}}, "empty or repeated"},
		{"repeated output column", process.ProcessInfo{Name: "p", Process: echo, Output: []process.ColumnSpec{{Name: "a", Kind: process.Text}, {Name: "a", Kind: process.Text}}}, "empty or repeated"},
		{"column without kind", process.ProcessInfo{Name: "p", Process: echo, Input: []process.ColumnSpec{{Name: "a"}}}, "invalid kind"},
		{"sample is an object", process.ProcessInfo{Name: "p", Process: echo, Sample: json.RawMessage(`{"a":1}`)}, "sample"},
		{"sample holds numbers", process.ProcessInfo{Name: "p", Process: echo, Sample: json.RawMessage(`[1,2]`)}, "sample"},
		{"sample is not JSON", process.ProcessInfo{Name: "p", Process: echo, Sample: json.RawMessage(`[{"a":1},]`)}, "sample"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := process.NewCatalog()
			err := c.Register(tt.p)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Register error = %v, want one mentioning %q", err, tt.want)
			}
			if n := len(c.List()); n != 0 {
				t.Errorf("a refused process was registered (%d in the catalog)", n)
			}
		})
	}
}

func TestCatalogDuplicate(t *testing.T) {
	c := process.NewCatalog()
	if err := c.Register(process.ProcessInfo{Name: "churn", Description: "first", Process: echo}); err != nil {
		t.Fatal(err)
	}
	err := c.Register(process.ProcessInfo{Name: "churn", Description: "second", Process: echo})
	if !errors.Is(err, process.ErrExists) {
		t.Fatalf("second Register error = %v, want ErrExists", err)
	}
	if p, _ := c.Lookup("churn"); p.Description != "first" {
		t.Errorf("the refused registration replaced the first: description %q", p.Description)
	}
}

func TestCatalogLookupAndList(t *testing.T) {
	c := process.NewCatalog()
	sample := json.RawMessage(`[{"age":41,"city":"Oslo"}]`)
	input := []process.ColumnSpec{{Name: "age", Kind: process.Number, Required: true}}
	for _, name := range []string{"zeta", "Alpha", "mid", "alpha"} {
		if err := c.Register(process.ProcessInfo{Name: name, Process: echo, Sample: sample, Input: input}); err != nil {
			t.Fatal(err)
		}
	}
	// The catalog keeps its own copies of what the caller passed.
	sample[2] = 'X'
	input[0].Name = "changed"

	var names []string
	for _, p := range c.List() {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"Alpha", "alpha", "mid", "zeta"}, names); diff != "" {
		t.Errorf("List order (-want +got):\n%s", diff)
	}
	p, ok := c.Lookup("mid")
	if !ok {
		t.Fatal(`Lookup("mid") found nothing`)
	}
	if string(p.Sample) != `[{"age":41,"city":"Oslo"}]` {
		t.Errorf("Sample = %s, changed with the caller's slice", p.Sample)
	}
	if p.Input[0].Name != "age" {
		t.Errorf("Input[0].Name = %q, changed with the caller's slice", p.Input[0].Name)
	}
	if _, ok := c.Lookup("missing"); ok {
		t.Error(`Lookup("missing") found a process`)
	}
	if _, ok := c.Lookup("MID"); ok {
		t.Error("Lookup ignores case; names are case-sensitive")
	}
}

func TestCatalogZeroValue(t *testing.T) {
	var c process.Catalog
	if _, ok := c.Lookup("p"); ok {
		t.Error("Lookup found a process in an empty catalog")
	}
	if got := c.List(); len(got) != 0 {
		t.Errorf("List of an empty catalog = %v", got)
	}
	if err := c.Register(process.ProcessInfo{Name: "p", Process: echo}); err != nil {
		t.Fatalf("Register on a zero Catalog: %v", err)
	}
	if _, ok := c.Lookup("p"); !ok || len(c.List()) != 1 {
		t.Error("the registered process is not in the catalog")
	}
}
