package scorehub

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
)

// monitoringService is a service with the linear model churn, reading x
// and y, uploaded as version 1 without rows, and its file.
func monitoringService(t *testing.T) (*Service, client, string) {
	t.Helper()
	svc := newService(t, Config{AdminPassword: adminPassword, Formats: []process.ModelFormat{&registrytest.LinearFormat{}}})
	admin := signIn(t, svc.Handler(), "admin", adminPassword)
	file := filepath.Join(t.TempDir(), "churn.linear")
	if err := os.WriteFile(file, registrytest.LinearArtifact(0, []string{"x", "y"}, []float64{1, 0}), 0o600); err != nil {
		t.Fatal(err)
	}
	return svc, admin, file
}

// uploadParts posts a multipart upload of parts (name → body, with the
// Content-Type type) and returns the status and body.
func (c client) uploadParts(model string, parts ...[3]string) (int, string) {
	c.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for _, p := range parts {
		h := make(map[string][]string)
		h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name=%q; filename="part"`, p[0])}
		if p[2] != "" {
			h["Content-Type"] = []string{p[2]}
		}
		pw, _ := w.CreatePart(h)
		pw.Write([]byte(p[1]))
	}
	w.Close()
	r := httptest.NewRequest("POST", "/api/v1/models/"+model+"/versions", &body)
	r.Header.Set("Content-Type", w.FormDataContentType())
	r.Header.Set("Authorization", c.auth)
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	return rec.Code, rec.Body.String()
}

// versionReference is what a model version shows of its reference.
type versionReference struct {
	Reference *struct {
		Rows       int64
		Features   []string
		Prediction string
		Declared   bool
	}
}

// TestReferenceRows: reference rows uploaded with a version, as CSV or
// JSON, or put on it later, are what its drift is measured against, in
// preference to its verification rows; rows that cannot be profiled are
// refused with the column and row named, and store nothing.
func TestReferenceRows(t *testing.T) {
	_, admin, file := monitoringService(t)
	artifact, _ := os.ReadFile(file)
	rng := rand.New(rand.NewPCG(7, 7))
	var csv strings.Builder
	csv.WriteString("x,y,note\n")
	for range 500 {
		fmt.Fprintf(&csv, "%.4f,%.4f,n\n", 3+rng.NormFloat64(), rng.NormFloat64())
	}
	// Verification rows around 0, the reference around 3: the reference wins.
	meta := `{"classes":["no","yes"],"verification":{"rows":[{"x":0.1,"y":0},{"x":-0.2,"y":1}],"expected":["yes","no"]}}`
	code, body := admin.uploadParts("churn", [3]string{"artifact", string(artifact), ""}, [3]string{"metadata", meta, ""},
		[3]string{"reference", csv.String(), "text/csv"})
	if code != http.StatusCreated {
		t.Fatalf("upload with a CSV reference: %d %s", code, body)
	}
	var v versionReference
	json.Unmarshal([]byte(body), &v)
	if v.Reference == nil || v.Reference.Rows != 500 || strings.Join(v.Reference.Features, ",") != "x,y" || v.Reference.Prediction != "prediction(label)" || v.Reference.Declared {
		t.Fatalf("the version's reference is %+v, want 500 rows of x and y and the prediction", v.Reference)
	}
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[{"alias":"score","model":"churn@1"}]}`, http.StatusCreated, nil)
	score := func(shift float64, n int) {
		t.Helper()
		rows := make([]map[string]float64, n)
		for i := range rows {
			rows[i] = map[string]float64{"x": shift + rng.NormFloat64(), "y": rng.NormFloat64()}
		}
		b, _ := json.Marshal(map[string]any{"data": rows})
		admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/score", string(b), http.StatusOK, nil)
	}
	psiOf := func(name string) float64 {
		t.Helper()
		var d driftAnswer
		admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/score/drift", "", http.StatusOK, &d)
		for _, f := range d.Features {
			if f.Name == name && f.PSI != nil {
				return *f.PSI
			}
		}
		t.Fatalf("no PSI of %s", name)
		return 0
	}
	score(3, 2000)
	if p := psiOf("x"); p >= 0.1 {
		t.Errorf("rows like the reference rows: PSI of x %v, want under 0.1", p)
	}

	// A later reference, as JSON, around 0: the same rows now drift, and
	// the figures start again.
	var rows []map[string]float64
	for range 500 {
		rows = append(rows, map[string]float64{"x": rng.NormFloat64(), "y": rng.NormFloat64()})
	}
	b, _ := json.Marshal(map[string]any{"data": rows})
	admin.must("PUT", "/api/v1/models/churn/versions/1/reference", string(b), http.StatusOK, &v)
	if v.Reference == nil || v.Reference.Rows != 500 {
		t.Fatalf("after PUT the reference is %+v", v.Reference)
	}
	if code, body := admin.do("GET", "/api/v1/endpoints/DEFAULT/churn/score/drift", ""); code != http.StatusNotFound {
		t.Errorf("drift right after the reference changed: %d %s, want 404 until rows are scored", code, body)
	}
	score(3, 2000)
	if p := psiOf("x"); p <= 0.25 {
		t.Errorf("rows around 3 against a reference around 0: PSI of x %v, want over 0.25", p)
	}

	for _, tt := range []struct {
		name, contentType, body, want string
		status                        int
	}{
		{"a number column with text", "text/csv", "x,y\n1,2\nlots,3\n", `\"lots\" in row 2`, http.StatusBadRequest},
		{"no input of the model", "text/csv", "a,b\n1,2\n", "none of the model's inputs", http.StatusBadRequest},
		{"a ragged CSV", "text/csv", "x,y\n1,2\n3\n", "not valid CSV at line 3", http.StatusBadRequest},
		{"a header named twice", "text/csv", "x,x\n1,2\n", "named twice", http.StatusBadRequest},
		{"malformed JSON", "application/json", `{"data":[{"x":1}`, "", http.StatusBadRequest},
		{"text where x is a number", "application/json", `{"data":[{"x":"a"}]}`, `\"a\" in row 1; the model reads numbers`, http.StatusBadRequest},
		{"no rows", "application/json", `{"data":[]}`, "no rows", http.StatusBadRequest},
		{"another type", "application/xml", `<x/>`, "", http.StatusUnsupportedMediaType},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := admin.send("PUT", "/api/v1/models/churn/versions/1/reference", tt.contentType, tt.body)
			if code != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("%d %s, want %d saying %q", code, body, tt.status, tt.want)
			}
		})
	}
	admin.must("GET", "/api/v1/models/churn/versions/1", "", http.StatusOK, &v)
	if v.Reference == nil || v.Reference.Rows != 500 {
		t.Errorf("refused references changed the stored one: %+v", v.Reference)
	}
	if code, body := admin.uploadParts("churn", [3]string{"artifact", string(artifact), ""}, [3]string{"reference", "a\n1\n", ""}); code != http.StatusBadRequest ||
		!strings.Contains(body, "none of the model's inputs") {
		t.Errorf("an upload whose reference holds no input: %d %s, want 400", code, body)
	}
	var m struct{ Versions []any }
	admin.must("GET", "/api/v1/models/churn", "", http.StatusOK, &m)
	if len(m.Versions) != 1 {
		t.Errorf("a refused upload stored a version: %d versions", len(m.Versions))
	}
	if code, _ := admin.send("PUT", "/api/v1/models/churn/versions/9/reference", "text/csv", "x\n1\n"); code != http.StatusNotFound {
		t.Errorf("PUT the reference of a version that does not exist: %d, want 404", code)
	}
}

// TestMonitorSettings: an endpoint's monitor turns its drift off, or
// measures its inputs over the window and rows it names, the most
// important first when it names fewer features than the model has; the
// deployment shows what it set, and settings out of bounds are refused
// at their field.
func TestMonitorSettings(t *testing.T) {
	_, admin, file := monitoringService(t)
	var rows []map[string]float64
	var expected []string
	for i := range 200 {
		x := float64(i%20) - 10
		rows = append(rows, map[string]float64{"x": x, "y": float64(i % 7)})
		expected = append(expected, map[bool]string{true: "yes", false: "no"}[x > 0])
	}
	admin.upload("churn", file, map[string]any{"classes": []string{"no", "yes"}, "verification": map[string]any{"rows": rows, "expected": expected}})
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[
		{"alias":"off","model":"churn@1","monitor":false},
		{"alias":"one","model":"churn@1","monitor":{"window":"30m","maxRows":500,"maxFeatures":1}},
		{"alias":"plain","model":"churn@1"},
		{"alias":"series","model":"churn@1","monitor":{"featureSeries":true}}]}`, http.StatusCreated, nil)
	var d struct {
		Endpoints []struct {
			Alias   string
			Monitor json.RawMessage
		}
	}
	admin.must("GET", "/api/v1/deployments/DEFAULT/churn", "", http.StatusOK, &d)
	got := map[string]string{}
	for _, e := range d.Endpoints {
		got[e.Alias] = string(e.Monitor)
	}
	if got["off"] != "false" || got["one"] != `{"window":"30m","maxRows":500,"maxFeatures":1,"featureSeries":false}` || got["plain"] != "" {
		t.Errorf("the deployment shows the monitors %q", got)
	}
	b, _ := json.Marshal(map[string]any{"data": rows[:100]})
	for _, alias := range []string{"off", "one", "plain", "series"} {
		for range 8 {
			admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/"+alias, string(b), http.StatusOK, nil)
		}
	}
	if code, body := admin.do("GET", "/api/v1/endpoints/DEFAULT/churn/off/drift", ""); code != http.StatusNotFound || !strings.Contains(body, "monitor") {
		t.Errorf("drift of an endpoint whose monitor is off: %d %s, want 404 saying so", code, body)
	}
	var one struct {
		Window     string
		MaxRows    int
		Rows       int64
		Unmeasured []string
		RankedBy   string
		Features   []struct{ Name string }
	}
	admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/one/drift", "", http.StatusOK, &one)
	// The linear model leans on x alone: x is the more important.
	if one.Window != "30m" || one.MaxRows != 500 || len(one.Features) != 1 || one.Features[0].Name != "x" ||
		strings.Join(one.Unmeasured, ",") != "y" || one.Rows > 500 || one.Rows < 400 {
		t.Errorf("drift of the endpoint that measures one input over 500 rows: %+v", one)
	}
	admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/plain/drift", "", http.StatusOK, &one)
	if one.Window != "1h" || one.MaxRows != 100000 || len(one.Features) != 2 || len(one.Unmeasured) != 0 || one.Rows != 800 {
		t.Errorf("drift of the endpoint with the default monitor: %+v", one)
	}
	_, metrics := admin.do("GET", "/metrics", "")
	if strings.Contains(metrics, `alias="off"`) && strings.Contains(metrics, `scorehub_drift_rows{alias="off"`) {
		t.Error("an endpoint whose monitor is off has drift series")
	}
	for _, f := range []string{"x", "y"} {
		metricValue(t, metrics, `scorehub_drift_feature_psi{alias="series",feature="`+f+`",group="DEFAULT",model="churn@1",path="churn"}`)
	}
	if n := strings.Count(metrics, "\nscorehub_drift_feature_psi{"); n != 2 {
		t.Errorf("%d series per feature, want the 2 of the one endpoint that asks for them", n)
	}

	for _, tt := range []struct{ monitor, pointer string }{
		{`{"window":"10s"}`, "/endpoints/0/monitor/window"},
		{`{"window":"soon"}`, "/endpoints/0/monitor/window"},
		{`{"maxRows":-1}`, "/endpoints/0/monitor/maxRows"},
		{`{"maxFeatures":201}`, "/endpoints/0/monitor/maxFeatures"},
		{`{"maxFeatures":"all"}`, "/endpoints/0/monitor/maxFeatures"},
		{`{"sample":1}`, "/endpoints/0/monitor/sample"},
		{`"on"`, "/endpoints/0/monitor"},
	} {
		code, body := admin.do("PUT", "/api/v1/deployments/DEFAULT/bad", `{"endpoints":[{"alias":"a","model":"churn@1","monitor":`+tt.monitor+`}]}`)
		if code != http.StatusBadRequest || !strings.Contains(body, `"`+tt.pointer+`"`) {
			t.Errorf("monitor %s: %d %s, want a 400 at %s", tt.monitor, code, body, tt.pointer)
		}
	}
	code, body := admin.do("PUT", "/api/v1/deployments/DEFAULT/bad", `{"endpoints":[{"alias":"a","process":"iris","monitor":{},"outlierColumn":true}]}`)
	if code != http.StatusBadRequest || !strings.Contains(body, `"/endpoints/0/monitor"`) || !strings.Contains(body, `"/endpoints/0/outlierColumn"`) {
		t.Errorf("a process endpoint with a monitor and outliers: %d %s, want 400 at both", code, body)
	}
}

// TestOutlierColumn: an endpoint with outlierColumn names, in each row,
// the inputs outside its version's reference (a number out of its range)
// and leaves the column null for rows within it.
func TestOutlierColumn(t *testing.T) {
	_, admin, file := monitoringService(t)
	rows := []map[string]float64{{"x": -1, "y": 0}, {"x": 1, "y": 5}}
	admin.upload("churn", file, map[string]any{"classes": []string{"no", "yes"}, "verification": map[string]any{"rows": rows, "expected": []string{"no", "yes"}}})
	admin.upload("churn", file, map[string]any{"classes": []string{"no", "yes"}, "description": "no reference"})
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[
		{"alias":"flag","model":"churn@1","outlierColumn":true},{"alias":"blind","model":"churn@2","outlierColumn":true}]}`, http.StatusCreated, nil)
	var out struct{ Data []map[string]any }
	admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/flag", `{"data":[{"x":0,"y":1},{"x":2,"y":1},{"x":-3,"y":9},{"y":2}]}`, http.StatusOK, &out)
	want := []any{nil, "x", "x, y", nil}
	for i, row := range out.Data {
		if row["outlier"] != want[i] {
			t.Errorf("row %d: outlier %v, want %v (%v)", i, row["outlier"], want[i], row)
		}
	}
	admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/blind", `{"data":[{"x":100,"y":1}]}`, http.StatusOK, &out)
	if v, ok := out.Data[0]["outlier"]; !ok || v != nil {
		t.Errorf("a version without a reference: outlier %v (present %v), want null", v, ok)
	}
}

// TestPayloadLog: an endpoint with a payload log keeps its share of the
// rows scored, within 2% over 100,000 rows, each with its answer and its
// redacted columns hidden; administrators page through it and export it
// as JSON Lines, others may not read it.
func TestPayloadLog(t *testing.T) {
	svc, admin, file := monitoringService(t)
	admin.upload("churn", file, map[string]any{"classes": []string{"no", "yes"}})
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[
		{"alias":"logged","model":"churn@1","payloadLog":{"rate":0.05,"redact":["ssn"]}},{"alias":"quiet","model":"churn@1"}]}`, http.StatusCreated, nil)
	var d struct {
		Endpoints []struct {
			PayloadLog *struct {
				Rate   float64
				Redact []string
			}
		}
	}
	admin.must("GET", "/api/v1/deployments/DEFAULT/churn", "", http.StatusOK, &d)
	if l := d.Endpoints[0].PayloadLog; l == nil || l.Rate != 0.05 || len(l.Redact) != 1 || d.Endpoints[1].PayloadLog != nil {
		t.Fatalf("the deployment shows the payload logs %+v", d.Endpoints)
	}
	const requests, perRequest = 100, 1000
	for i := range requests {
		rows := make([]map[string]any, perRequest)
		for j := range rows {
			rows[j] = map[string]any{"x": float64(j%9) - 4, "y": i, "ssn": fmt.Sprintf("078-05-%04d", j)}
		}
		b, _ := json.Marshal(map[string]any{"data": rows})
		admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/logged", string(b), http.StatusOK, nil)
		if i < 5 {
			admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/quiet", string(b), http.StatusOK, nil)
		}
	}
	type page struct {
		Records []struct {
			Seq   int64
			Model string
			Row   map[string]any
		}
		Next *int64
	}
	var all []map[string]any
	after := int64(0)
	for pages := 0; ; pages++ {
		var p page
		admin.must("GET", fmt.Sprintf("/api/v1/endpoints/DEFAULT/churn/logged/payloads?limit=1000&after=%d", after), "", http.StatusOK, &p)
		for _, r := range p.Records {
			if r.Seq <= after || r.Model != "churn@1" {
				t.Fatalf("record %d (after %d) of model %q", r.Seq, after, r.Model)
			}
			after = r.Seq
			all = append(all, r.Row)
		}
		if p.Next == nil {
			break
		}
		if pages > 100 {
			t.Fatal("the pages do not end")
		}
	}
	total := requests * perRequest
	if want := 0.05 * float64(total); float64(len(all)) < want*0.98 || float64(len(all)) > want*1.02 {
		t.Errorf("%d of %d rows logged at rate 0.05, want %v ± 2%%", len(all), total, want)
	}
	for _, row := range all[:10] {
		if row["ssn"] != "[redacted]" || row["prediction(label)"] == nil || row["x"] == nil {
			t.Errorf("a logged row %v, want its inputs, its answer and ssn redacted", row)
		}
	}
	if got := svc.queues.DroppedPayloads(); got != 0 {
		t.Errorf("%d rows dropped", got)
	}

	code, body := admin.send("GET", "/api/v1/endpoints/DEFAULT/churn/logged/payloads?format=jsonl", "", "")
	lines := 0
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Seq int64
			Row map[string]any
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Row["ssn"] != "[redacted]" {
			t.Fatalf("export line %d: %v %s", lines, err, sc.Bytes())
		}
		lines++
	}
	if code != http.StatusOK || lines != len(all) {
		t.Errorf("the export answered %d with %d lines, want 200 and %d", code, lines, len(all))
	}
	var quiet page
	admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/quiet/payloads", "", http.StatusOK, &quiet)
	if len(quiet.Records) != 0 {
		t.Errorf("an endpoint without a payload log logged %d rows", len(quiet.Records))
	}
	for _, q := range []string{"limit=0", "limit=1001", "after=-1", "after=x", "format=xml", "page=2"} {
		if code, body := admin.do("GET", "/api/v1/endpoints/DEFAULT/churn/logged/payloads?"+q, ""); code != http.StatusBadRequest {
			t.Errorf("?%s: %d %s, want 400", q, code, body)
		}
	}
	if code, _ := admin.do("GET", "/api/v1/endpoints/DEFAULT/nowhere/logged/payloads", ""); code != http.StatusNotFound {
		t.Errorf("the payloads of an endpoint that does not exist: %d, want 404", code)
	}
	admin.must("POST", "/api/v1/users", `{"name":"bob","password":"`+adminPassword+`-bob"}`, http.StatusCreated, nil)
	bob := signIn(t, svc.Handler(), "bob", adminPassword+"-bob")
	if code, _ := bob.do("GET", "/api/v1/endpoints/DEFAULT/churn/logged/payloads", ""); code != http.StatusForbidden {
		t.Errorf("a user who is not an administrator read the payload log: %d, want 403", code)
	}
	if code, _ := (client{t: t, h: svc.Handler()}).do("GET", "/api/v1/endpoints/DEFAULT/churn/logged/payloads", ""); code != http.StatusUnauthorized {
		t.Errorf("an anonymous caller read the payload log: %d, want 401", code)
	}
	for _, tt := range []struct{ log, pointer string }{
		{`{"rate":0}`, "/endpoints/0/payloadLog/rate"},
		{`{"rate":1.5}`, "/endpoints/0/payloadLog/rate"},
		{`{"rate":0.5,"redact":["a","a"]}`, "/endpoints/0/payloadLog/redact/1"},
		{`{"rate":0.5,"redact":[""]}`, "/endpoints/0/payloadLog/redact/0"},
		{`{"rate":0.5,"sink":"kafka"}`, "/endpoints/0/payloadLog/sink"},
	} {
		code, body := admin.do("PUT", "/api/v1/deployments/DEFAULT/bad", `{"endpoints":[{"alias":"a","model":"churn@1","payloadLog":`+tt.log+`}]}`)
		if code != http.StatusBadRequest || !strings.Contains(body, `"`+tt.pointer+`"`) {
			t.Errorf("payloadLog %s: %d %s, want a 400 at %s", tt.log, code, body, tt.pointer)
		}
	}
}

// TestPayloadLogRedactsWhatOtherColumnsSay: a redacted input is hidden
// in the columns that tell of it too, its contribution and its name in
// the outlier column, and a redacted answeredBy hides the model that
// answered.
func TestPayloadLogRedactsWhatOtherColumnsSay(t *testing.T) {
	_, admin, file := monitoringService(t)
	rows := []map[string]float64{{"x": -1, "y": 0}, {"x": 1, "y": 5}}
	admin.upload("churn", file, map[string]any{"classes": []string{"no", "yes"}, "verification": map[string]any{"rows": rows, "expected": []string{"no", "yes"}}})
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[{"alias":"why","model":"churn@1",
		"explain":{"method":"treeshap"},"outlierColumn":true,"answeredBy":true,"payloadLog":{"rate":1,"redact":["x","answeredBy"]}}]}`, http.StatusCreated, nil)
	var answer struct{ Data []map[string]any }
	admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/why", `{"data":[{"x":1000,"y":9}]}`, http.StatusOK, &answer)
	if got := answer.Data[0]; got["outlier"] != "x, y" || got["contribution(x)"] != 1000.0 || got["answeredBy"] != "churn@1" {
		t.Fatalf("the answer %v, want it whole: the log redacts, not the answer", got)
	}
	var p struct {
		Records []struct {
			Model string
			Row   map[string]any
		}
	}
	admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/why/payloads", "", http.StatusOK, &p)
	if len(p.Records) != 1 {
		t.Fatalf("%d rows logged, want 1", len(p.Records))
	}
	r := p.Records[0]
	for _, col := range []string{"x", "contribution(x)", "answeredBy"} {
		if r.Row[col] != "[redacted]" {
			t.Errorf("logged %s = %v, want it redacted", col, r.Row[col])
		}
	}
	if r.Row["outlier"] != "[redacted], y" || r.Row["y"] != 9.0 || r.Row["contribution(y)"] == "[redacted]" || r.Model != "" {
		t.Errorf("logged %v of model %q; want x's name hidden in outlier, y and its contribution shown, no model", r.Row, r.Model)
	}
}
