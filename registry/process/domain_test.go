package process_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry/process"
)

func ptr(v float64) *float64 { return &v }

// TestModelSchemaCloneDomains: a clone's domains share no memory with
// the schema's, so that a caller changing one leaves the other alone.
func TestModelSchemaCloneDomains(t *testing.T) {
	s := process.ModelSchema{Domains: []process.Domain{
		{Name: "age", Min: ptr(0), Max: ptr(120)},
		{Name: "plan", Values: []string{"basic", "pro"}},
		{Name: "shop", Numbers: []float64{3, 1}},
	}}
	c := s.Clone()
	if diff := cmp.Diff(s, c); diff != "" {
		t.Fatalf("clone (-schema +clone):\n%s", diff)
	}
	*c.Domains[0].Min, *c.Domains[0].Max = -1, -1
	c.Domains[1].Values[0] = "changed"
	c.Domains[2].Numbers[0] = -1
	c.Domains[0].Name = "changed"
	want := []process.Domain{
		{Name: "age", Min: ptr(0), Max: ptr(120)},
		{Name: "plan", Values: []string{"basic", "pro"}},
		{Name: "shop", Numbers: []float64{3, 1}},
	}
	if diff := cmp.Diff(want, s.Domains); diff != "" {
		t.Errorf("the schema after its clone changed (-want +got):\n%s", diff)
	}
	if got := (process.ModelSchema{}).Clone().Domains; got != nil {
		t.Errorf("the clone of a schema without domains has %v", got)
	}
}

// TestDomainJSON: a domain's JSON holds what is declared and nothing
// else, so that a range from 0 keeps its 0 and an unbounded side reads as
// absent.
func TestDomainJSON(t *testing.T) {
	tests := []struct {
		name string
		d    process.Domain
		want string
	}{
		{"range from 0", process.Domain{Name: "x", Min: ptr(0), Max: ptr(1)}, `{"name":"x","min":0,"max":1}`},
		{"open lower bound only", process.Domain{Name: "x", Min: ptr(-2.5), MinOpen: true}, `{"name":"x","min":-2.5,"minOpen":true}`},
		{"text values", process.Domain{Name: "c", Values: []string{"a", ""}}, `{"name":"c","values":["a",""]}`},
		{"categorical numbers", process.Domain{Name: "n", Numbers: []float64{2, 0, 1}}, `{"name":"n","numbers":[2,0,1]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.d)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("JSON %s, want %s", b, tt.want)
			}
			var back process.Domain
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.d, back); diff != "" {
				t.Errorf("decoded (-encoded +decoded):\n%s", diff)
			}
		})
	}
}

// TestLoadModelChecksDomains: a format whose domains do not fit its
// inputs, or that JSON cannot hold, is refused by LoadModel as a fault of
// the format, before a schema that cannot be stored reaches a store.
func TestLoadModelChecksDomains(t *testing.T) {
	inputs := []process.ColumnSpec{{Name: "x", Kind: process.Number}, {Name: "c", Kind: process.Text}}
	tests := []struct {
		name    string
		domains []process.Domain
		want    string // "" when the model loads
	}{
		{"none", nil, ""},
		{"range and values", []process.Domain{{Name: "x", Min: ptr(0), Max: ptr(1)}, {Name: "c", Values: []string{"a"}}}, ""},
		{"an open upper bound only", []process.Domain{{Name: "x", Max: ptr(1), MaxOpen: true}}, ""},
		{"categorical number", []process.Domain{{Name: "x", Numbers: []float64{1, 2}}}, ""},
		{"no such input", []process.Domain{{Name: "y", Min: ptr(0)}}, `the domain of "y" names no input`},
		{"out of order", []process.Domain{{Name: "c", Values: []string{"a"}}, {Name: "x", Min: ptr(0)}}, `the domain of "x" names no input, or is out of the inputs' order`},
		{"twice", []process.Domain{{Name: "x", Min: ptr(0)}, {Name: "x", Max: ptr(1)}}, `out of the inputs' order`},
		{"nothing declared", []process.Domain{{Name: "x"}}, `the domain of "x" declares nothing`},
		{"text bounds", []process.Domain{{Name: "c", Min: ptr(0)}}, `text input "c" declares values of another kind`},
		{"number texts", []process.Domain{{Name: "x", Values: []string{"a"}}}, `number input "x" declares values of another kind`},
		{"range and numbers", []process.Domain{{Name: "x", Min: ptr(0), Numbers: []float64{1}}}, `declares values of another kind`},
		{"open bound unset", []process.Domain{{Name: "x", Max: ptr(1), MinOpen: true}}, `open bound that is not set`},
		{"infinite bound", []process.Domain{{Name: "x", Max: ptr(math.Inf(1))}}, `not finite`},
		{"NaN category", []process.Domain{{Name: "x", Numbers: []float64{1, math.NaN()}}}, `not finite`},
		{"backwards", []process.Domain{{Name: "x", Min: ptr(2), Max: ptr(1)}}, `bounds no number`},
		{"empty open", []process.Domain{{Name: "x", Min: ptr(1), Max: ptr(1), MaxOpen: true}}, `bounds no number`},
		{"value not UTF-8", []process.Domain{{Name: "c", Values: []string{"caf\xe9"}}}, `valid value of input c "caf\xe9" is not UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat := process.NewCatalog()
			err := cat.RegisterFormat(fakeFormat{"domains", func() (*process.LoadedModel, error) {
				m := model(inputs, []process.ColumnSpec{{Name: "p", Kind: process.Number}})
				m.Schema.Domains = tt.domains
				return m, nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			m, err := cat.LoadModel([]byte("domains"), process.ModelMetadata{})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := json.Marshal(m.Schema); err != nil {
					t.Errorf("the schema does not encode: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("LoadModel = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}
