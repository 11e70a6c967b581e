package pmml

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"bare", `<PMML version="4.4"/>`, true},
		{"declaration and comment", "\xef\xbb\xbf<?xml version=\"1.0\"?>\n<!-- by hand -->\n<PMML xmlns=\"http://www.dmg.org/PMML-4_4\">", true},
		{"prefixed", `<p:PMML xmlns:p="http://www.dmg.org/PMML-4_3">`, true},
		{"other root", `<?xml version="1.0"?><html>`, false},
		{"json", `{"learner":{}}`, false},
		{"root named longer", `<PMMLX/>`, false},
		{"unterminated comment", `<!-- <PMML>`, false},
		{"empty", ``, false},
		{"doctype of PMML, for Load to refuse", `<?xml version="1.0"?><!DOCTYPE PMML [<!ENTITY a "b">]><PMML/>`, true},
		{"doctype of another root", `<!DOCTYPE html><html>`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Format{}).Detect([]byte(tt.in)); got != tt.want {
				t.Errorf("Detect(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// loadErr loads doc with lim and returns the error's client message and
// whether it is an invalid-model or a limit error.
func loadErr(t *testing.T, lim Limits, doc string) (msg string, kind error) {
	t.Helper()
	_, err := Format{Limits: lim}.Load([]byte(doc), process.ModelMetadata{})
	if err == nil {
		t.Fatalf("Load succeeded, want an error")
	}
	for _, k := range []error{process.ErrModelInvalid, process.ErrModelLimit} {
		if errors.Is(err, k) {
			return err.Error(), k
		}
	}
	t.Fatalf("Load error %v matches neither ErrModelInvalid nor ErrModelLimit", err)
	return "", nil
}

func TestLoadRefuses(t *testing.T) {
	const dd = `<Header/><DataDictionary><DataField name="x" optype="continuous" dataType="double"/></DataDictionary>`
	tests := []struct {
		name string
		lim  Limits
		doc  string
		kind error
		want string
	}{
		{"doctype", Limits{}, `<?xml version="1.0"?><!DOCTYPE PMML [<!ENTITY a "x">]><PMML version="4.4"/>`, process.ErrModelInvalid, "DOCTYPE"},
		{"latin-1", Limits{}, `<?xml version="1.0" encoding="ISO-8859-1"?><PMML version="4.4"/>`, process.ErrModelInvalid, `encoding "ISO-8859-1" is not supported`},
		{"version 3.2", Limits{}, `<PMML xmlns="http://www.dmg.org/PMML-3_2" version="3.2">` + dd + `</PMML>`, process.ErrModelInvalid, "PMML version 3.2 is not supported"},
		{"version attribute 5.0", Limits{}, `<PMML version="5.0">` + dd + `</PMML>`, process.ErrModelInvalid, "PMML version 5.0 is not supported"},
		{"foreign namespace", Limits{}, `<PMML xmlns="urn:other" version="4.4"/>`, process.ErrModelInvalid, `namespace "urn:other"`},
		{"not well-formed", Limits{}, `<PMML version="4.4"><DataDictionary></PMML>`, process.ErrModelInvalid, "not well-formed XML"},
		{"unknown model", Limits{}, `<PMML version="4.4">` + dd + `<BaselineModel functionName="regression"/></PMML>`, process.ErrModelInvalid, "PMML element BaselineModel is not supported"},
		{"no model", Limits{}, `<PMML version="4.4">` + dd + `</PMML>`, process.ErrModelInvalid, "holds no model"},
		{"no data dictionary", Limits{}, `<PMML version="4.4"><Header/><TreeModel/></PMML>`, process.ErrModelInvalid, "no DataDictionary"},
		{"bytes", Limits{MaxBytes: 10}, `<PMML version="4.4"/>`, process.ErrModelLimit, "more than the limit of 10"},
		{"depth", Limits{MaxDepth: 3}, `<PMML version="4.4"><a><b><c/></b></a></PMML>`, process.ErrModelLimit, "nest more than 3 deep"},
		{"nodes", Limits{MaxNodes: 3}, `<PMML version="4.4"><a/><b/><c/></PMML>`, process.ErrModelLimit, "more than 3 XML elements"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, kind := loadErr(t, tt.lim, tt.doc)
			if kind != tt.kind || !strings.Contains(msg, tt.want) {
				t.Errorf("Load error %q (%v), want %v containing %q", msg, kind, tt.kind, tt.want)
			}
		})
	}
}

// TestBillionLaughs checks that the classic entity-expansion bomb is refused
// at its DOCTYPE, before anything is expanded.
func TestBillionLaughs(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><!DOCTYPE PMML [<!ENTITY lol0 "lol">`)
	for i := 1; i < 10; i++ {
		b.WriteString(`<!ENTITY lol` + string(rune('0'+i)) + ` "`)
		for range 10 {
			b.WriteString(`&lol` + string(rune('0'+i-1)) + `;`)
		}
		b.WriteString(`">`)
	}
	b.WriteString(`]><PMML version="4.4"><Header description="&lol9;"/></PMML>`)
	allocs := testing.AllocsPerRun(1, func() {
		msg, kind := loadErr(t, Limits{}, b.String())
		if kind != process.ErrModelInvalid || !strings.Contains(msg, "DOCTYPE") {
			t.Errorf("Load error %q, want one refusing the DOCTYPE", msg)
		}
	})
	if allocs > 1000 {
		t.Errorf("refusing the bomb made %v allocations, want few", allocs)
	}
}

func TestLoadVersions(t *testing.T) {
	body := regressionTree
	for _, v := range []string{"4_0", "4_1", "4_2", "4_3", "4_4"} {
		t.Run(v, func(t *testing.T) {
			doc := `<PMML xmlns="http://www.dmg.org/PMML-` + v + `" version="` + strings.Replace(v, "_", ".", 1) + `"><Header/>` + body + `</PMML>`
			lm, err := Format{}.Load([]byte(doc), process.ModelMetadata{})
			if err != nil {
				t.Fatal(err)
			}
			if lm.Schema.Task != process.Regression {
				t.Errorf("task %s", lm.Schema.Task)
			}
		})
	}
}

func TestLoadLimitsClasses(t *testing.T) {
	_, err := Format{Limits: Limits{MaxClasses: 1}}.Load([]byte(wrap(strings.Replace(classTree, "%s", "", 1))), process.ModelMetadata{})
	if !errors.Is(err, process.ErrModelLimit) || !strings.Contains(err.Error(), "2 classes, more than the limit of 1") {
		t.Errorf("error %v, want the class limit", err)
	}
}

func TestLoadMetadata(t *testing.T) {
	doc := []byte(wrap(strings.Replace(classTree, "%s", "", 1)))
	lm, err := Format{}.Load(doc, process.ModelMetadata{Label: "answer"})
	if err != nil {
		t.Fatal(err)
	}
	if lm.Schema.Label != "answer" || lm.Schema.Outputs[0].Name != "prediction(answer)" {
		t.Errorf("schema %+v, want the metadata's label", lm.Schema)
	}
	for _, meta := range []process.ModelMetadata{{Classes: []string{"no", "yes"}}, {Features: []string{"c", "x"}}} {
		if _, err := (Format{}).Load(doc, meta); !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), "a PMML file names its own") {
			t.Errorf("metadata %+v: error %v, want names other than the file's refused", meta, err)
		}
	}
	if _, err := (Format{}).Load(doc, process.ModelMetadata{Classes: []string{"yes", "no"}, Features: []string{"x", "c"}}); err != nil {
		t.Errorf("metadata repeating the file's names: %v", err)
	}
}

// TestIntegerTargetNamed: metadata names the classes of a target whose
// values are the integers 0..k-1, as it names an XGBoost classifier's;
// other classes it can only repeat.
func TestIntegerTargetNamed(t *testing.T) {
	doc := func(dataType, first, second string) []byte {
		return []byte(wrap(`<DataDictionary>
 <DataField name="x" optype="continuous" dataType="double"/>
 <DataField name="y" optype="categorical" dataType="` + dataType + `"><Value value="` + first + `"/><Value value="` + second + `"/></DataField>
</DataDictionary>
<TreeModel functionName="classification">
 <MiningSchema><MiningField name="x"/><MiningField name="y" usageType="target"/></MiningSchema>
 <Node><True/>
  <Node score="` + first + `"><SimplePredicate field="x" operator="lessThan" value="0"/></Node>
  <Node score="` + second + `"><True/></Node>
 </Node>
</TreeModel>`))
	}
	lm, err := Format{}.Load(doc("integer", "0", "1"), process.ModelMetadata{Classes: []string{"benign", "malignant"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"benign", "malignant"}; !slices.Equal(lm.Schema.Classes, want) {
		t.Errorf("schema classes %q, want %q", lm.Schema.Classes, want)
	}
	checkRow(t, scoreRow(t, lm, "x", 1.0), map[string]any{"prediction(y)": "malignant", "confidence(malignant)": 1.0, "confidence(benign)": 0.0})
	checkRow(t, scoreRow(t, lm, "x", -1.0), map[string]any{"prediction(y)": "benign", "confidence(benign)": 1.0})

	for _, c := range []struct {
		name, dataType, first, second, words string
	}{
		{"integers from 1", "integer", "1", "2", "integers other than 0..1 in order"},
		{"integers out of order", "integer", "1", "0", "integers other than 0..1 in order"},
		{"text that looks like integers", "string", "0", "1", "a PMML file names its own"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Format{}.Load(doc(c.dataType, c.first, c.second), process.ModelMetadata{Classes: []string{"benign", "malignant"}})
			if !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("Load = %v, want an invalid model saying %q", err, c.words)
			}
		})
	}
}
