package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/registrytest"
)

// fakeFormat claims files starting with its name and loads what load
// returns.
type fakeFormat struct {
	name string
	load func() (*registry.LoadedModel, error)
}

func (f fakeFormat) Name() string         { return f.name }
func (f fakeFormat) Detect(b []byte) bool { return strings.HasPrefix(string(b), f.name) }
func (f fakeFormat) Load(b []byte, _ registry.ModelMetadata) (*registry.LoadedModel, error) {
	return f.load()
}

func model(inputs, outputs []registry.ColumnSpec) *registry.LoadedModel {
	return &registry.LoadedModel{Schema: registry.ModelSchema{Inputs: inputs, Outputs: outputs}, Process: echo}
}

func TestCatalogLoadModel(t *testing.T) {
	num := func(name string) registry.ColumnSpec { return registry.ColumnSpec{Name: name, Kind: registry.Number} }
	cat := registry.NewCatalog()
	for _, f := range []registry.ModelFormat{
		&registrytest.LinearFormat{},
		fakeFormat{"noprocess", func() (*registry.LoadedModel, error) {
			return &registry.LoadedModel{Schema: registry.ModelSchema{Outputs: []registry.ColumnSpec{num("p")}}}, nil
		}},
		fakeFormat{"nooutputs", func() (*registry.LoadedModel, error) { return model(nil, nil), nil }},
		fakeFormat{"twice", func() (*registry.LoadedModel, error) {
			return model([]registry.ColumnSpec{num("x"), num("x")}, []registry.ColumnSpec{num("p")}), nil
		}},
		fakeFormat{"untyped", func() (*registry.LoadedModel, error) { return model(nil, []registry.ColumnSpec{{Name: "p"}}), nil }},
		fakeFormat{"nil", func() (*registry.LoadedModel, error) { return nil, nil }},
		fakeFormat{"bytes", func() (*registry.LoadedModel, error) {
			return model([]registry.ColumnSpec{num("x"), num("sepal_lengt\xff")}, []registry.ColumnSpec{num("p")}), nil
		}},
		fakeFormat{"good", func() (*registry.LoadedModel, error) {
			return model([]registry.ColumnSpec{num("x")}, []registry.ColumnSpec{num("p")}), nil
		}},
	} {
		if err := cat.RegisterFormat(f); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, file string
		meta       registry.ModelMetadata
		kind       error  // nil: a plain error (the format's fault)
		want       string // in the message
	}{
		{"pickle", "\x80\x04\x95\x00", registry.ModelMetadata{}, registry.ErrModelFormat, "a Python pickle (or joblib) file"},
		{"joblib zlib", "\x78\x9c junk", registry.ModelMetadata{}, registry.ErrModelFormat, "zlib-compressed (joblib)"},
		{"gzip", "\x1f\x8b\x08", registry.ModelMetadata{}, registry.ErrModelFormat, "gzip-compressed"},
		{"zip", "PK\x03\x04rest", registry.ModelMetadata{}, registry.ErrModelFormat, "ZIP archive"},
		{"unknown", "{\"what\": 1}", registry.ModelMetadata{}, registry.ErrModelFormat, "(linear, noprocess, nooutputs, twice, untyped, nil, bytes, good)"},
		{"no process", "noprocess", registry.ModelMetadata{}, nil, `format "noprocess" loaded no process`},
		{"no outputs", "nooutputs", registry.ModelMetadata{}, nil, "without outputs"},
		{"a column twice", "twice", registry.ModelMetadata{}, nil, `repeated or untyped column "x"`},
		{"an untyped column", "untyped", registry.ModelMetadata{}, nil, `untyped column "p"`},
		{"nil model", "nil", registry.ModelMetadata{}, nil, "loaded no process"},
		{"a column not UTF-8", "bytes", registry.ModelMetadata{}, registry.ErrModelInvalid, `model's input column "sepal_lengt\xff" is not UTF-8`},
		{"a description not UTF-8", "good", registry.ModelMetadata{Description: "caf\xe9"}, registry.ErrModelInvalid, `metadata's description "caf\xe9" is not UTF-8`},
		{"a class not UTF-8", "good", registry.ModelMetadata{Classes: []string{"a", "\xc3("}}, registry.ErrModelInvalid, `metadata's class "\xc3(" is not UTF-8`},
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

	m, err := cat.LoadModel([]byte("good"), registry.ModelMetadata{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Schema.Format != "good" {
		t.Errorf("Schema.Format = %q, want the format's name", m.Schema.Format)
	}
	p := m.ProcessInfo("good")
	if err := registry.NewCatalog().Register(p); err != nil {
		t.Errorf("a loaded model's ProcessInfo does not register: %v", err)
	}
	var sample []map[string]any
	if err := json.Unmarshal(p.Sample, &sample); err != nil || len(sample) != 1 || sample[0]["x"] != 0.0 {
		t.Errorf("sample %s (%v), want one row with x: 0", p.Sample, err)
	}
	if _, err := p.Process.Score(context.Background(), registry.Input{Table: tabletest.Must(0)}); err != nil {
		t.Error(err)
	}

	if _, err := registry.NewCatalog().LoadModel([]byte("good"), registry.ModelMetadata{}); !errors.Is(err, registry.ErrModelFormat) || !strings.Contains(err.Error(), "reads no model formats") {
		t.Errorf("LoadModel with no formats: %v", err)
	}
}

func TestRegisterFormat(t *testing.T) {
	cat := registry.NewCatalog()
	if err := cat.RegisterFormat(&registrytest.LinearFormat{}); err != nil {
		t.Fatal(err)
	}
	if err := cat.RegisterFormat(&registrytest.LinearFormat{}); !errors.Is(err, registry.ErrExists) {
		t.Errorf("a second format named linear: %v, want ErrExists", err)
	}
	if err := cat.RegisterFormat(nil); err == nil {
		t.Error("a nil format registered")
	}
	if err := cat.RegisterFormat(fakeFormat{name: "../x"}); !errors.Is(err, registry.ErrInvalid) {
		t.Errorf("a format with an invalid name: %v, want ErrInvalid", err)
	}
	if got := cat.Formats(); len(got) != 1 || got[0].Name() != "linear" {
		t.Errorf("Formats() = %v, want the one registered", got)
	}
}
