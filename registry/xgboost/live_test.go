package xgboost_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
)

// python is the interpreter with the XGBoost that wrote the fixtures, and
// the scikit-learn and pandas gen.py prepares their data with.
var python = modeltest.Python{
	Path:     "/usr/bin/python3",
	Imports:  []string{"sklearn", "pandas", "xgboost"},
	Packages: "python3-xgboost python3-sklearn python3-pandas",
	Module:   "xgboost",
	Library:  "XGBoost",
	Version:  "1.7",
}

// TestRegenerate runs testdata/gen.py against the installed XGBoost and
// checks that it writes the committed fixtures and example model again: the
// same files, the same trees and the same predictions (within 1e-6), and
// that the reader agrees with the freshly computed predictions too.
func TestRegenerate(t *testing.T) {
	python.Require(t)
	out, examples := t.TempDir(), t.TempDir()
	python.Run(t, filepath.Join("testdata", "gen.py"), "--out", out, "--examples", examples)

	committed := modeltest.SameFixtureNames(t, "gen.py", "testdata", out)
	for _, name := range committed {
		t.Run(name, func(t *testing.T) {
			sameJSONFile(t, filepath.Join("testdata", name+".rows.json"), filepath.Join(out, name+".rows.json"))
			sameJSONFile(t, filepath.Join("testdata", name+".json"), filepath.Join(out, name+".json"))
			f := readFixture(t, out, name)
			for _, ext := range []string{".json", ".ubj"} {
				checkFixture(t, out, name, ext, f)
			}
		})
	}
	for _, name := range []string{"iris.json", "iris.metadata.json", "iris.verification.json"} {
		sameJSONFile(t, filepath.Join("..", "..", "examples", "models", name), filepath.Join(examples, name))
	}
}

// nanValue matches a NaN where JSON has a value, and what precedes it.
var nanValue = regexp.MustCompile(`([\[,:])NaN\b`)

// sameJSONFile fails t unless the JSON documents at want and got are equal,
// numbers within 1e-6 relative (XGBoost writes its float32s in as few digits
// as identify them, which another build may choose differently).
func sameJSONFile(t *testing.T, want, got string) {
	t.Helper()
	var docs [2]any
	for i, p := range []string{want, got} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// XGBoost writes the split condition of a categorical split as
		// NaN, which JSON lacks; null stands in for it here.
		b = nanValue.ReplaceAll(b, []byte("${1}null"))
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(&docs[i]); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if diff := jsonDiff("", docs[0], docs[1]); diff != "" {
		t.Errorf("gen.py now writes %s differently: %s (run it to update testdata if XGBoost changed on purpose)", filepath.Base(want), diff)
	}
}

// jsonDiff describes the first difference between decoded JSON documents a
// and b, or returns "".
func jsonDiff(path string, a, b any) string {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: an object became %T", path, b)
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok {
				return fmt.Sprintf("%s/%s is gone", path, k)
			}
			if d := jsonDiff(path+"/"+k, v, w); d != "" {
				return d
			}
		}
		for k := range b {
			if _, ok := a[k]; !ok {
				return fmt.Sprintf("%s/%s is new", path, k)
			}
		}
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return fmt.Sprintf("%s: an array of %d became %v", path, len(a), describe(b))
		}
		for i := range a {
			if d := jsonDiff(fmt.Sprintf("%s/%d", path, i), a[i], b[i]); d != "" {
				return d
			}
		}
	case json.Number:
		n, ok := b.(json.Number)
		if !ok {
			return fmt.Sprintf("%s: %s became %v", path, a, b)
		}
		x, errX := a.Float64()
		y, errY := n.Float64()
		if errX != nil || errY != nil || math.Abs(x-y) > 1e-6*math.Max(1, math.Abs(x)) {
			return fmt.Sprintf("%s: %s became %s", path, a, n)
		}
	default:
		if a != b {
			return fmt.Sprintf("%s: %v became %v", path, a, b)
		}
	}
	return ""
}

func describe(v any) string {
	if a, ok := v.([]any); ok {
		return fmt.Sprintf("an array of %d", len(a))
	}
	return fmt.Sprintf("%T", v)
}
