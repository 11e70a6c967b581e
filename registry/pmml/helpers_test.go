package pmml

import (
	"context"
	"encoding/xml"
	"math"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// parse decodes body wrapped in a PMML 4.4 root, failing the test on error.
func parse(t *testing.T, body string) *document {
	t.Helper()
	doc, err := decode([]byte(`<PMML xmlns="http://www.dmg.org/PMML-4_4" version="4.4"><Header/>`+body+`</PMML>`), Limits{}.withDefaults())
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return doc
}

// num and txt build values for tables of expected answers.
func num(x float64) value     { return numValue(x) }
func txt(s string) value      { return textValue(s) }
func row(vs ...value) []value { return vs }

// loadPMML loads a document body wrapped in a PMML 4.4 root.
func loadPMML(t *testing.T, body string) *process.LoadedModel {
	t.Helper()
	lm, err := Format{}.Load([]byte(wrap(body)), process.ModelMetadata{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return lm
}

// loadPMMLErr loads a document body and returns its error.
func loadPMMLErr(body string) error {
	_, err := Format{}.Load([]byte(wrap(body)), process.ModelMetadata{})
	return err
}

func wrap(body string) string {
	return `<PMML xmlns="http://www.dmg.org/PMML-4_4" version="4.4"><Header><Application name="hand" version="1"/></Header>` + body + `</PMML>`
}

// scoreRow scores one row given as name/value pairs (float64, string or
// nil for missing) and returns the result columns by name: a float64, a
// string, or nil when missing.
func scoreRow(t *testing.T, lm *process.LoadedModel, kv ...any) map[string]any {
	t.Helper()
	var cols []process.Column
	for i := 0; i < len(kv); i += 2 {
		name := kv[i].(string)
		switch v := kv[i+1].(type) {
		case float64:
			cols = append(cols, process.NumberColumn(name, []float64{v}, nil))
		case int:
			cols = append(cols, process.NumberColumn(name, []float64{float64(v)}, nil))
		case string:
			cols = append(cols, process.TextColumn(name, []string{v}, nil))
		case nil:
			cols = append(cols, process.NumberColumn(name, []float64{0}, []bool{true}))
		default:
			t.Fatalf("value %v of %s has type %T", v, name, v)
		}
	}
	res, err := lm.Process.Score(context.Background(), process.Input{Table: tabletest.Must(1, cols...)})
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	out := make(map[string]any)
	for i := range res.NumColumns() {
		c := res.Column(i)
		switch {
		case c.IsMissing(0):
			out[c.Name] = nil
		case c.Kind == process.Number:
			out[c.Name] = c.Numbers[0]
		default:
			out[c.Name] = c.Texts[0]
		}
	}
	return out
}

// near reports whether got is want (a string, nil, or a float64 within
// 1e-9).
func near(got, want any) bool {
	g, gok := got.(float64)
	w, wok := want.(float64)
	if gok && wok {
		return math.Abs(g-w) <= 1e-9
	}
	return got == want
}

// checkRow compares the columns of a scored row with want.
func checkRow(t *testing.T, got map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || !near(g, w) {
			t.Errorf("%s = %v, want %v (all: %v)", k, g, w, got)
		}
	}
}

func xmlName(local string) xml.Name { return xml.Name{Local: local} }

func registryMeta() process.ModelMetadata { return process.ModelMetadata{} }
