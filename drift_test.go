package scorehub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
)

// driftAnswer is GET …/drift as a test reads it.
type driftAnswer struct {
	Version  string
	Rows     int64
	Features []struct {
		Name  string
		PSI   *float64
		Edges []float64
		Live  struct{ Counts []int64 }
	}
	Prediction *struct {
		Name       string
		PSI        *float64
		Categories []string
	}
}

// TestDriftAgainstTheVerificationRows: a version uploaded with
// verification rows is measured against them: rows drawn as they were
// keep every PSI under 0.1, rows of one input shifted push that input's
// PSI and the prediction's over 0.25 and leave the other's low; a version
// without verification rows, and a process endpoint, have no drift.
func TestDriftAgainstTheVerificationRows(t *testing.T) {
	h := newService(t, Config{AdminPassword: adminPassword, Formats: []process.ModelFormat{&registrytest.LinearFormat{}}}).Handler()
	admin := signIn(t, h, "admin", adminPassword)
	rng := rand.New(rand.NewPCG(4, 2))
	draw := func(n int, shift float64) []map[string]float64 {
		rows := make([]map[string]float64, n)
		for i := range rows {
			rows[i] = map[string]float64{"x": rng.NormFloat64() + shift, "y": rng.NormFloat64()}
		}
		return rows
	}
	reference := draw(400, 0)
	var expected []string
	for _, r := range reference {
		expected = append(expected, map[bool]string{true: "yes", false: "no"}[r["x"] > 0])
	}
	file := filepath.Join(t.TempDir(), "churn.linear")
	if err := os.WriteFile(file, registrytest.LinearArtifact(0, []string{"x", "y"}, []float64{1, 0}), 0o600); err != nil {
		t.Fatal(err)
	}
	admin.upload("churn", file, map[string]any{"classes": []string{"no", "yes"}, "verification": map[string]any{"rows": reference, "expected": expected}})
	admin.upload("churn", file, map[string]any{"classes": []string{"no", "yes"}, "description": "no verification"})
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[
		{"alias":"score","model":"churn@1"},{"alias":"blind","model":"churn@2"}]}`, http.StatusCreated, nil)
	score := func(rows []map[string]float64) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"data": rows})
		admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/score", string(b), http.StatusOK, nil)
		admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/blind", string(b), http.StatusOK, nil)
	}
	read := func() driftAnswer {
		t.Helper()
		var d driftAnswer
		admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/score/drift", "", http.StatusOK, &d)
		return d
	}
	psi := func(d driftAnswer, name string) float64 {
		for _, f := range d.Features {
			if f.Name == name && f.PSI != nil {
				return *f.PSI
			}
		}
		t.Fatalf("no PSI of %s in %+v", name, d)
		return 0
	}

	score(draw(2000, 0))
	d := read()
	if d.Version != "churn@1" || d.Rows != 2000 || d.Prediction == nil || d.Prediction.Name != "prediction(label)" {
		t.Fatalf("drift of %s over %d rows with prediction %+v, want churn@1's over 2000 rows and its prediction", d.Version, d.Rows, d.Prediction)
	}
	if a, b := psi(d, "x"), psi(d, "y"); a >= 0.1 || b >= 0.1 || *d.Prediction.PSI >= 0.1 {
		t.Errorf("rows drawn as the reference: PSI of x %v, y %v, the prediction %v, want each under 0.1", a, b, *d.Prediction.PSI)
	}
	if f := d.Features[0]; len(f.Live.Counts) != len(f.Edges)+1 {
		t.Errorf("x's live histogram has %d bins for %d edges", len(f.Live.Counts), len(f.Edges))
	}
	score(draw(20_000, 1.5))
	d = read()
	if a, b := psi(d, "x"), psi(d, "y"); a <= 0.25 || b >= 0.1 || *d.Prediction.PSI <= 0.25 {
		t.Errorf("rows with x shifted: PSI of x %v, y %v, the prediction %v, want x's and the prediction's over 0.25, y's under 0.1", a, b, *d.Prediction.PSI)
	}
	_, metrics := admin.do("GET", "/metrics", "")
	if !strings.Contains(metrics, `scorehub_drift_features_shifted{alias="score",group="DEFAULT",model="churn@1",path="churn"} 1`) {
		t.Errorf("the metrics lack the one feature shifted")
	}
	if max := metricValue(t, metrics, `scorehub_drift_max_psi{alias="score",group="DEFAULT",model="churn@1",path="churn"}`); math.Abs(max-psi(d, "x")) > 1e-9 {
		t.Errorf("scorehub_drift_max_psi is %v, want x's PSI %v", max, psi(d, "x"))
	}
	for _, path := range []string{"/api/v1/endpoints/DEFAULT/churn/blind/drift", "/api/v1/endpoints/DEFAULT/nowhere/score/drift"} {
		if code, body := admin.do("GET", path, ""); code != http.StatusNotFound {
			t.Errorf("GET %s: %d %s, want 404", path, code, body)
		}
	}
}

// metricValue returns the value of the series line that starts with
// series in metrics.
func metricValue(t *testing.T, metrics, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			if err := json.Unmarshal([]byte(v), &f); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("the metrics lack %s", series)
	return 0
}

// BenchmarkMonitoredEndpoint measures a 1-row and a 10,000-row request
// to an endpoint whose version has a reference (its drift measured) and
// to one on a version without, both of a linear model of 30 features.
func BenchmarkMonitoredEndpoint(b *testing.B) {
	h := newService(b, Config{AdminPassword: adminPassword, Formats: []process.ModelFormat{&registrytest.LinearFormat{}}}).Handler()
	admin := signIn(b, h, "admin", adminPassword)
	features := make([]string, 30)
	weights := make([]float64, 30)
	for i := range features {
		features[i], weights[i] = "f"+strconv.Itoa(i), 1/float64(i+1)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	row := func() map[string]float64 {
		r := map[string]float64{}
		for _, f := range features {
			r[f] = rng.NormFloat64()
		}
		return r
	}
	var reference []map[string]float64
	var expected []string
	for range 300 {
		reference = append(reference, row())
		expected = append(expected, "no") // replaced below by what the model answers
	}
	file := filepath.Join(b.TempDir(), "m.linear")
	os.WriteFile(file, registrytest.LinearArtifact(0, features, weights), 0o600)
	// The expected classes, as the model computes them.
	for i, r := range reference {
		s := 0.0
		for k, f := range features {
			s += weights[k] * r[f]
		}
		if s > 0 {
			expected[i] = "yes"
		}
	}
	admin.upload("m", file, map[string]any{"classes": []string{"no", "yes"}, "verification": map[string]any{"rows": reference, "expected": expected}})
	admin.upload("m", file, map[string]any{"classes": []string{"no", "yes"}, "description": "no reference"})
	if code, body := admin.do("PUT", "/api/v1/deployments/DEFAULT/m", `{"enabled":true,"endpoints":[{"alias":"monitored","model":"m@1"},{"alias":"plain","model":"m@2"}]}`); code != http.StatusCreated {
		b.Fatalf("deploy: %d %s", code, body)
	}
	for _, rows := range []int{1, 10_000} {
		data := make([]map[string]float64, rows)
		for i := range data {
			data[i] = row()
		}
		body, _ := json.Marshal(map[string]any{"data": data})
		for _, alias := range []string{"plain", "monitored"} {
			b.Run(fmt.Sprintf("%s/rows=%d", alias, rows), func(b *testing.B) {
				for b.Loop() {
					mustScore(b, h, "/webapi/DEFAULT/api/v1/services/m/"+alias, body)
				}
			})
		}
	}
}

// mustScore posts body, a scoring request, to path on h and fails b
// unless it is answered 200: the loop of a benchmark of an endpoint.
func mustScore(b testing.TB, h http.Handler, path string, body []byte) {
	b.Helper()
	r := httptest.NewRequest("POST", path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		b.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
