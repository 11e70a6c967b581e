package models

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixtureDirs hold the fixtures of each format: per model, its files and
// <stem>.rows.json with the rows, the metadata to upload and the
// producer's own predictions.
var fixtureDirs = []struct {
	dir, format string
	// exts are the model's files: XGBoost's JSON and UBJSON saves, PMML,
	// ONNX, LightGBM's text model.
	exts []string
}{
	{"../../registry/xgboost/testdata", "xgboost", []string{".json", ".ubj"}},
	{"../../registry/pmml/testdata", "pmml", []string{".pmml"}},
	{"../../registry/onnx/testdata", "onnx", []string{".onnx"}},
	{"../../registry/lightgbm/testdata", "lightgbm", []string{".txt"}},
}

// fixture is one model of fixtureDirs.
type fixture struct {
	stem     string
	dir      string         // where its files are
	format   string         // the format the server reads them as
	files    []string       // the model's files, such as .json and .ubj
	metadata map[string]any // the upload's metadata part
	features []string       // the input columns, in the model's order
	label    string
	classes  []string // empty for a regressor
	rows     []map[string]any
	// want holds the producer's prediction per row: a probability per class
	// for a classifier, one value for a regressor.
	want [][]float64
	// clusters holds a clustering model's cluster per row; want is nil.
	clusters []string
}

// fixtureFile is what <stem>.rows.json holds (registry/xgboost/testdata/gen.py,
// registry/pmml/testdata/export.py, registry/onnx/testdata/export.py and
// registry/lightgbm/testdata/gen.py write it).
type fixtureFile struct {
	Metadata map[string]any `json:"metadata"`
	// Schema is what the reader derives from the file and the metadata.
	Schema struct {
		Task string `json:"task"`
		// Label is a PMML model's target, its label unless the
		// metadata gives another.
		Label   string   `json:"label"`
		Inputs  []string `json:"inputs"`
		Classes []string `json:"classes"`
	} `json:"schema"`
	Rows []map[string]any `json:"rows"`
	// Predictions are the producer's: per row the confidences in class order
	// for a classifier, a number for a regressor, the cluster's name for a
	// clustering.
	Predictions []json.RawMessage `json:"predictions"`
	// ONNXRuntime holds, for an ONNX model, ONNX Runtime's predictions in
	// the same shapes: what a model is held to where it computes otherwise
	// than scikit-learn (a tree with float32 thresholds).
	ONNXRuntime struct {
		Predictions []json.RawMessage `json:"predictions"`
	} `json:"onnxruntime"`
}

// loadFixtures reads every fixture of fixtureDirs; it fails t when a
// directory has none, so that a moved directory cannot pass unnoticed.
func loadFixtures(t testing.TB) []*fixture {
	t.Helper()
	var out []*fixture
	for _, d := range fixtureDirs {
		paths, err := filepath.Glob(filepath.Join(d.dir, "*.rows.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) == 0 {
			t.Fatalf("no fixtures (*.rows.json) in %s", d.dir)
		}
		for _, p := range paths {
			out = append(out, readFixture(t, p, d.format, d.exts))
		}
	}
	return out
}

func readFixture(t testing.TB, path, format string, exts []string) *fixture {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f fixtureFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	fx := &fixture{stem: strings.TrimSuffix(filepath.Base(path), ".rows.json"), dir: filepath.Dir(path), format: format,
		metadata: f.Metadata, rows: f.Rows}
	for _, ext := range exts {
		if _, err := os.Stat(filepath.Join(fx.dir, fx.stem+ext)); err == nil {
			fx.files = append(fx.files, fx.stem+ext)
		}
	}
	if len(fx.files) == 0 {
		t.Fatalf("%s: no model file %s%q beside it", path, fx.stem, exts)
	}
	// The label is the metadata's, else the PMML target's, else XGBoost's
	// default.
	fx.label, _ = f.Metadata["label"].(string)
	if fx.label == "" {
		fx.label = f.Schema.Label
	}
	if fx.label == "" {
		fx.label = "label"
	}
	fx.features, fx.classes = f.Schema.Inputs, f.Schema.Classes
	if len(fx.features) == 0 || (f.Schema.Task == "classification") != (len(fx.classes) > 0) {
		t.Fatalf("%s: a %s model with inputs %q and classes %q", path, f.Schema.Task, fx.features, fx.classes)
	}
	if f.Schema.Task == "clustering" {
		for i, p := range f.Predictions {
			var c string
			if err := json.Unmarshal(p, &c); err != nil {
				t.Fatalf("%s: prediction %d is %s, not a cluster's name", path, i, p)
			}
			fx.clusters = append(fx.clusters, c)
		}
		if len(fx.clusters) != len(fx.rows) {
			t.Fatalf("%s: %d clusters for %d rows", path, len(fx.clusters), len(fx.rows))
		}
		return fx
	}
	predictions := f.Predictions
	if format == "onnx" {
		predictions = f.ONNXRuntime.Predictions
	}
	if format == "lightgbm" {
		fx.rows, predictions = sendable(fx.rows, predictions)
	}
	for i, p := range predictions {
		var one float64
		var many []float64
		switch {
		case json.Unmarshal(p, &one) == nil:
			fx.want = append(fx.want, []float64{one})
		case json.Unmarshal(p, &many) == nil:
			fx.want = append(fx.want, many)
		default:
			t.Fatalf("%s: prediction %d is %s, neither a number nor numbers", path, i, p)
		}
	}
	if len(fx.want) != len(fx.rows) {
		t.Fatalf("%s: %d predictions for %d rows", path, len(fx.want), len(fx.rows))
	}
	return fx
}

// sendable leaves out the rows a JSON body cannot carry and those without
// a prediction: LightGBM's fixtures test infinite inputs, which they spell
// "Infinity" and "-Infinity", and have null where LightGBM answers no
// finite number.
func sendable(rows []map[string]any, predictions []json.RawMessage) ([]map[string]any, []json.RawMessage) {
	var r []map[string]any
	var p []json.RawMessage
	for i, row := range rows {
		ok := string(predictions[i]) != "null"
		for _, v := range row {
			if v == "Infinity" || v == "-Infinity" {
				ok = false
			}
		}
		if ok {
			r, p = append(r, row), append(p, predictions[i])
		}
	}
	return r, p
}

// modelName is the name file is deployed under: the fixture's stem and
// its file's extension, each character a name may not hold a '-'.
func (fx *fixture) modelName(file string) string {
	name := []byte(strings.ReplaceAll(file, ".", "-"))
	for i, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			name[i] = '-'
		}
	}
	return string(name)
}

// artifact is the content of the fixture's file.
func (fx *fixture) artifact(t testing.TB, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fx.dir, file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// subset is the fixture with only the rows idx.
func (fx *fixture) subset(idx []int) *fixture {
	out := *fx
	out.rows, out.want, out.clusters = nil, nil, nil
	for _, i := range idx {
		out.rows = append(out.rows, fx.rows[i])
		if fx.clusters != nil {
			out.clusters = append(out.clusters, fx.clusters[i])
		} else {
			out.want = append(out.want, fx.want[i])
		}
	}
	return &out
}

// check compares the rows an endpoint of the fixture's model answered
// with its producer's predictions: each class's confidence within 1e-6 and
// the most probable class as the prediction, a regressor's value within
// 1e-6 relative, or a clustering's cluster.
func (fx *fixture) check(t testing.TB, name string, got []map[string]any) {
	t.Helper()
	if len(got) != len(fx.rows) {
		t.Errorf("%s: %d rows answered, want %d", name, len(got), len(fx.rows))
		return
	}
	bad := 0
	for i, row := range got {
		if fx.clusters != nil {
			if row["cluster"] != fx.clusters[i] {
				bad++
				if bad <= 5 {
					t.Errorf("%s: row %d: cluster = %v, its producer's %s", name, i, row["cluster"], fx.clusters[i])
				}
			}
			continue
		}
		want := fx.want[i]
		pred := row["prediction("+fx.label+")"]
		if len(fx.classes) == 0 {
			v, ok := pred.(float64)
			if !ok || math.Abs(v-want[0]) > 1e-6*max(1, math.Abs(want[0])) {
				bad++
				if bad <= 5 {
					t.Errorf("%s: row %d: prediction(%s) = %v, its producer's %v", name, i, fx.label, pred, want[0])
				}
			}
			continue
		}
		if len(want) != len(fx.classes) {
			t.Fatalf("%s: row %d: %d probabilities for %d classes", name, i, len(want), len(fx.classes))
		}
		for j, class := range fx.classes {
			v, ok := row["confidence("+class+")"].(float64)
			if !ok || math.Abs(v-want[j]) > 1e-6 {
				bad++
				if bad <= 5 {
					t.Errorf("%s: row %d: confidence(%s) = %v, its producer's %v", name, i, class, row["confidence("+class+")"], want[j])
				}
			}
		}
		best := argmax(want)
		if tied(want, best) {
			continue // a tie within the tolerance may go either way
		}
		if pred != fx.classes[best] {
			bad++
			if bad <= 5 {
				t.Errorf("%s: row %d: prediction(%s) = %v, its producer's most probable class %s", name, i, fx.label, pred, fx.classes[best])
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d differences in all", name, bad)
	}
}

// tied reports whether a class other than best is within 1e-6 of it.
func tied(p []float64, best int) bool {
	for i, v := range p {
		if i != best && p[best]-v < 1e-6 {
			return true
		}
	}
	return false
}

func argmax(v []float64) int {
	best := 0
	for i := range v {
		if v[i] > v[best] {
			best = i
		}
	}
	return best
}

// fixtureWithMissing returns a fixture whose rows have missing values.
func fixtureWithMissing(t testing.TB) *fixture {
	t.Helper()
	for _, fx := range loadFixtures(t) {
		for _, r := range fx.rows {
			for _, v := range r {
				if v == nil {
					return fx
				}
			}
		}
	}
	t.Fatalf("no fixture in %v has a missing value", fixtureDirs)
	return nil
}

// promotionPair returns two classifiers of the same features whose
// predictions of one of their rows differ clearly, and that row.
func promotionPair(t testing.TB) (v1, v2 *fixture, row map[string]any) {
	t.Helper()
	fixtures := loadFixtures(t)
	for _, a := range fixtures {
		for _, b := range fixtures {
			if a == b || !slices.Equal(a.features, b.features) || !slices.Equal(a.classes, b.classes) || len(a.classes) == 0 {
				continue
			}
			for i, r := range a.rows {
				if j := slices.IndexFunc(b.rows, func(s map[string]any) bool { return rowsEqual(r, s) }); j >= 0 && differ(a.want[i], b.want[j]) {
					return a, b, r
				}
			}
		}
	}
	t.Fatalf("no two classifier fixtures in %v share their features and a row they predict differently", fixtureDirs)
	return nil, nil, nil
}

// differ reports whether two predictions differ by more than 1e-3.
func differ(a, b []float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-3 {
			return true
		}
	}
	return false
}

func rowsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func jsonBody(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jsonDecode(r io.Reader, v any) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	return json.NewDecoder(bytes.NewReader(b)).Decode(v)
}
