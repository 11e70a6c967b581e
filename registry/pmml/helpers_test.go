package pmml

import (
	"testing"
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
