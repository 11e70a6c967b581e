package process_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
)

// fakeFormat claims files starting with its name and loads what load
// returns.
type fakeFormat struct {
	name string
	load func() (*process.LoadedModel, error)
}

func (f fakeFormat) Name() string         { return f.name }
func (f fakeFormat) Detect(b []byte) bool { return strings.HasPrefix(string(b), f.name) }
func (f fakeFormat) Load(b []byte, _ process.ModelMetadata) (*process.LoadedModel, error) {
	return f.load()
}

func model(inputs, outputs []process.ColumnSpec) *process.LoadedModel {
	return &process.LoadedModel{Schema: process.ModelSchema{Inputs: inputs, Outputs: outputs}, Process: echo}
}

func TestCatalogLoadModel(t *testing.T) {
	num := func(name string) process.ColumnSpec { return process.ColumnSpec{Name: name, Kind: process.Number} }
	cat := process.NewCatalog()
	for _, f := range []process.ModelFormat{
		&registrytest.LinearFormat{},
		fakeFormat{"noprocess", func() (*process.LoadedModel, error) {
			return &process.LoadedModel{Schema: process.ModelSchema{Outputs: []process.ColumnSpec{num("p")}}}, nil
		}},
		fakeFormat{"nooutputs", func() (*process.LoadedModel, error) { return model(nil, nil), nil }},
		fakeFormat{"twice", func() (*process.LoadedModel, error) {
			return model([]process.ColumnSpec{num("x"), num("x")}, []process.ColumnSpec{num("p")}), nil
		}},
		fakeFormat{"untyped", func() (*process.LoadedModel, error) { return model(nil, []process.ColumnSpec{{Name: "p"}}), nil }},
		fakeFormat{"nil", func() (*process.LoadedModel, error) { return nil, nil }},
		fakeFormat{"bytes", func() (*process.LoadedModel, error) {
			return model([]process.ColumnSpec{num("x"), num("sepal_lengt\xff")}, []process.ColumnSpec{num("p")}), nil
		}},
		fakeFormat{"good", func() (*process.LoadedModel, error) {
			return model([]process.ColumnSpec{num("x")}, []process.ColumnSpec{num("p")}), nil
		}},
		fakeFormat{"three", func() (*process.LoadedModel, error) {
			return model([]process.ColumnSpec{num("a"), num("b"), num("c")}, []process.ColumnSpec{num("p")}), nil
		}},
	} {
		if err := cat.RegisterFormat(f); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, file string
		meta       process.ModelMetadata
		kind       error  // nil: a plain error (the format's fault)
		want       string // in the message
	}{
		{"pickle", "\x80\x04\x95\x00", process.ModelMetadata{}, process.ErrModelFormat, "a Python pickle (or joblib) file"},
		{"joblib zlib", "\x78\x9c junk", process.ModelMetadata{}, process.ErrModelFormat, "zlib-compressed (joblib)"},
		{"gzip", "\x1f\x8b\x08", process.ModelMetadata{}, process.ErrModelFormat, "gzip-compressed"},
		{"zip", "PK\x03\x04rest", process.ModelMetadata{}, process.ErrModelFormat, "ZIP archive"},
		{"unknown", "{\"what\": 1}", process.ModelMetadata{}, process.ErrModelFormat, "(linear, noprocess, nooutputs, twice, untyped, nil, bytes, good, three)"},
		{"an optional feature that is no input", "three", process.ModelMetadata{OptionalFeatures: []string{"b", "z", "y"}}, process.ErrModelInvalid,
			`optionalFeatures name ["y" "z"], which the model has no input of`},
		{"no process", "noprocess", process.ModelMetadata{}, nil, `format "noprocess" loaded no process`},
		{"no outputs", "nooutputs", process.ModelMetadata{}, nil, "without outputs"},
		{"a column twice", "twice", process.ModelMetadata{}, nil, `repeated or untyped column "x"`},
		{"an untyped column", "untyped", process.ModelMetadata{}, nil, `untyped column "p"`},
		{"nil model", "nil", process.ModelMetadata{}, nil, "loaded no process"},
		{"a column not UTF-8", "bytes", process.ModelMetadata{}, process.ErrModelInvalid, `model's input column "sepal_lengt\xff" is not UTF-8`},
		{"a description not UTF-8", "good", process.ModelMetadata{Description: "caf\xe9"}, process.ErrModelInvalid, `metadata's description "caf\xe9" is not UTF-8`},
		{"a class not UTF-8", "good", process.ModelMetadata{Classes: []string{"a", "\xc3("}}, process.ErrModelInvalid, `metadata's class "\xc3(" is not UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cat.LoadModel([]byte(tt.file), tt.meta)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("LoadModel = %v, want an error saying %q", err, tt.want)
			}
			if tt.kind != nil && !errors.Is(err, tt.kind) {
				t.Errorf("error %v does not match %v", err, tt.kind)
			}
		})
	}

	m, err := cat.LoadModel([]byte("good"), process.ModelMetadata{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Schema.Format != "good" {
		t.Errorf("Schema.Format = %q, want the format's name", m.Schema.Format)
	}
	p := m.ProcessInfo("good")
	if err := process.NewCatalog().Register(p); err != nil {
		t.Errorf("a loaded model's ProcessInfo does not register: %v", err)
	}
	var sample []map[string]any
	if err := json.Unmarshal(p.Sample, &sample); err != nil || len(sample) != 1 || sample[0]["x"] != 0.0 {
		t.Errorf("sample %s (%v), want one row with x: 0", p.Sample, err)
	}
	if _, err := p.Process.Score(context.Background(), process.Input{Table: tabletest.Must(0)}); err != nil {
		t.Error(err)
	}

	if _, err := process.NewCatalog().LoadModel([]byte("good"), process.ModelMetadata{}); !errors.Is(err, process.ErrModelFormat) || !strings.Contains(err.Error(), "reads no model formats") {
		t.Errorf("LoadModel with no formats: %v", err)
	}
}

func TestRegisterFormat(t *testing.T) {
	cat := process.NewCatalog()
	if err := cat.RegisterFormat(&registrytest.LinearFormat{}); err != nil {
		t.Fatal(err)
	}
	if err := cat.RegisterFormat(&registrytest.LinearFormat{}); !errors.Is(err, process.ErrExists) {
		t.Errorf("a second format named linear: %v, want ErrExists", err)
	}
	if err := cat.RegisterFormat(nil); err == nil {
		t.Error("a nil format registered")
	}
	if err := cat.RegisterFormat(fakeFormat{name: "../x"}); !errors.Is(err, process.ErrInvalid) {
		t.Errorf("a format with an invalid name: %v, want ErrInvalid", err)
	}
	if got := cat.Formats(); len(got) != 1 || got[0].Name() != "linear" {
		t.Errorf("Formats() = %v, want the one registered", got)
	}
}

// TestLoadedModelRequiresItsInputs: a loaded model's process requires
// every input its metadata does not make optional, and the schema stays
// the file's.
func TestLoadedModelRequiresItsInputs(t *testing.T) {
	num := func(name string) process.ColumnSpec { return process.ColumnSpec{Name: name, Kind: process.Number} }
	cat := process.NewCatalog()
	if err := cat.RegisterFormat(fakeFormat{"three", func() (*process.LoadedModel, error) {
		return model([]process.ColumnSpec{num("a"), num("b"), num("c")}, []process.ColumnSpec{num("p")}), nil
	}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		meta process.ModelMetadata
		want []bool // Required of a, b and c
	}{
		{"by default", process.ModelMetadata{}, []bool{true, true, true}},
		{"b optional", process.ModelMetadata{OptionalFeatures: []string{"b"}}, []bool{true, false, true}},
		{"lenient", process.ModelMetadata{Lenient: true}, []bool{false, false, false}},
	} {
		m, err := cat.LoadModel([]byte("three"), c.meta)
		if err != nil {
			t.Fatal(err)
		}
		var got []bool
		for _, in := range m.ProcessInfo("x").Input {
			got = append(got, in.Required)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: Required = %v, want %v", c.name, got, c.want)
		}
		for _, in := range m.Schema.Inputs {
			if in.Required {
				t.Errorf("%s: the schema's input %q is marked Required; the schema is the file's", c.name, in.Name)
			}
		}
	}
}
