package management_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"mime/multipart"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
)

const octetStream = "application/octet-stream"

// linear is a file of registrytest.LinearFormat: bias plus 2·age − income.
func linear(bias float64) string {
	return string(registrytest.LinearArtifact(bias, []string{"age", "income"}, []float64{2, -1}))
}

// upload posts artifact as the raw body of a new version of model.
func (f *fixture) upload(t testing.TB, model, query, artifact string) response {
	t.Helper()
	return f.do(t, request{method: "POST", path: "/api/v1/models/" + model + "/versions" + query, token: f.admin,
		body: artifact, contentType: octetStream})
}

// part is one part of a multipart/form-data body.
type part struct{ name, body string }

// multipartBody encodes parts as multipart/form-data and returns the body
// and its Content-Type.
func multipartBody(t testing.TB, parts ...part) (string, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts {
		var pw io.Writer
		var err error
		if p.name == "artifact" {
			pw, err = w.CreateFormFile(p.name, "model.bin")
		} else {
			pw, err = w.CreateFormField(p.name)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pw.Write([]byte(p.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String(), w.FormDataContentType()
}

// uploadParts posts parts as a multipart upload of a new version of model.
func (f *fixture) uploadParts(t testing.TB, model string, parts ...part) response {
	t.Helper()
	body, ct := multipartBody(t, parts...)
	return f.do(t, request{method: "POST", path: "/api/v1/models/" + model + "/versions", token: f.admin, body: body, contentType: ct})
}

// addModel stores a version of model directly.
func (f *fixture) addModel(t testing.TB, model string, artifact string, meta process.ModelMetadata) registry.ModelVersion {
	t.Helper()
	v, _, err := f.reg.AddModelVersion(context.Background(), model, []byte(artifact), meta, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// putAlias points model@alias at version directly.
func (f *fixture) putAlias(t testing.TB, model, alias string, version int) registry.ModelAlias {
	t.Helper()
	a, err := f.reg.PutModelAlias(context.Background(), model, registry.ModelAlias{Name: alias, Version: version, Revision: registry.AnyRevision})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// sha returns the SHA-256 of s in hex.
func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestModelUploadAndViews(t *testing.T) {
	f := newFixture(t)
	art := linear(0.5)
	r := f.upload(t, "churn", "?label=churned&features=tenure,spend&description=First+try", art)
	r.want(t, 201, "")
	if got := r.header.Get("Location"); got != "versions/1" {
		t.Errorf("Location %q, want versions/1 (relative to the request's address)", got)
	}
	delete(r.json, "createdAt")
	want := map[string]any{
		"model": "churn", "version": 1.0, "sha256": sha(art), "size": float64(len(art)),
		"format": "linear", "producer": "registrytest", "objective": "linear", "task": "regression",
		"label": "churned", "classes": []any{}, "trees": 0.0, "description": "First try", "aliases": []any{},
		"inputs": []any{
			map[string]any{"name": "tenure", "kind": "number", "required": true},
			map[string]any{"name": "spend", "kind": "number", "required": true},
		},
		"outputs": []any{map[string]any{"name": "prediction(churned)", "kind": "number", "required": false}},
	}
	if d := cmp.Diff(want, r.json); d != "" {
		t.Errorf("the new version (-want +got):\n%s", d)
	}

	// The same bytes with the same metadata are the same version.
	r = f.upload(t, "churn", "?label=churned&features=tenure,spend&description=First+try", art)
	r.want(t, 200, "")
	if r.json["version"] != 1.0 || r.header.Get("Location") != "" {
		t.Errorf("identical re-upload: version %v, Location %q; want version 1 and no Location", r.json["version"], r.header.Get("Location"))
	}
	// Other metadata makes another version.
	r = f.upload(t, "churn", "?label=churned", art)
	r.want(t, 201, "")
	if r.json["version"] != 2.0 || r.header.Get("Location") != "versions/2" {
		t.Errorf("second version: %v, Location %q", r.json["version"], r.header.Get("Location"))
	}
	f.upload(t, "other", "", linear(1)).want(t, 201, "")

	r = f.do(t, request{method: "GET", path: "/api/v1/models", token: f.reader})
	r.want(t, 200, "")
	p := r.page(t)
	var names []string
	for _, m := range p.Content {
		names = append(names, m["name"].(string))
	}
	if d := cmp.Diff([]string{"churn", "other"}, names); d != "" || p.TotalElements != 2 {
		t.Errorf("models (-want +got):\n%s; totalElements %d", d, p.TotalElements)
	}
	r = f.do(t, request{method: "GET", path: "/api/v1/models?size=1&page=1", token: f.reader})
	if p := r.page(t); len(p.Content) != 1 || p.Content[0]["name"] != "other" || p.TotalPages != 2 {
		t.Errorf("page 1 of size 1: %s", r.body)
	}
	f.do(t, request{method: "GET", path: "/api/v1/models?size=0", token: f.reader}).want(t, 400, string(problem.InvalidParameter))

	r = f.do(t, request{method: "GET", path: "/api/v1/models/churn", token: f.reader})
	r.want(t, 200, "")
	if versions, _ := r.json["versions"].([]any); len(versions) != 2 || r.json["name"] != "churn" {
		t.Errorf("model: %s", r.body)
	}
	if etag := r.header.Get("ETag"); etag == "" || etag != `"`+jsonNumber(r.json["revision"])+`"` {
		t.Errorf("ETag %q, revision %v", etag, r.json["revision"])
	}
	r = f.do(t, request{method: "GET", path: "/api/v1/models/churn/versions", token: f.reader})
	r.want(t, 200, "")
	if p := r.page(t); len(p.Content) != 2 || p.Content[0]["version"] != 1.0 || p.Content[1]["version"] != 2.0 {
		t.Errorf("versions: %s", r.body)
	}
	r = f.do(t, request{method: "GET", path: "/api/v1/models/churn/versions/2", token: f.reader})
	r.want(t, 200, "")
	if r.json["version"] != 2.0 || r.json["description"] != "" {
		t.Errorf("version 2: %s", r.body)
	}
	for _, path := range []string{"/api/v1/models/none", "/api/v1/models/none/versions", "/api/v1/models/churn/versions/3",
		"/api/v1/models/churn/versions/x", "/api/v1/models/churn/versions/0", "/api/v1/models/churn/versions/01",
		"/api/v1/models/churn/aliases/production"} {
		f.do(t, request{method: "GET", path: path, token: f.reader}).want(t, 404, "not_found")
	}
}

// A version keeps the first rows of its verification as its sample, every
// input in each (a missing value null): the version shows it, and the
// process of an endpoint on it starts the test page from it, for anyone
// who may see the endpoint.
func TestModelSampleFromVerification(t *testing.T) {
	f := newFixture(t)
	meta := `{"verification":{"rows":[{"age":1,"income":2,"id":"a"},{"age":0,"income":0},{"income":-3},{"age":9,"income":9}],
		"expected":[1,1,4,10]}}`
	r := f.uploadParts(t, "churn", part{"artifact", linear(1)}, part{"metadata", meta})
	r.want(t, 201, "")
	want := []any{
		map[string]any{"age": 1.0, "income": 2.0},
		map[string]any{"age": 0.0, "income": 0.0},
		map[string]any{"age": nil, "income": -3.0},
	}
	if d := cmp.Diff(want, r.json["sample"]); d != "" {
		t.Errorf("the uploaded version's sample (-want +got):\n%s", d)
	}
	r = f.uploadParts(t, "plain", part{"artifact", linear(1)})
	r.want(t, 201, "")
	if _, ok := r.json["sample"]; ok {
		t.Errorf("a version uploaded without verification shows a sample: %s", r.body)
	}
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "churn", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "predict", Model: "churn@1"}, {Alias: "plain", Model: "plain@1"}}})
	r = f.do(t, request{method: "GET", path: "/api/v1/endpoints/DEFAULT/churn/predict/process"})
	r.want(t, 200, "")
	if d := cmp.Diff(want, r.json["sample"]); d != "" {
		t.Errorf("the sample the test page starts from (-want +got):\n%s", d)
	}
	r = f.do(t, request{method: "GET", path: "/api/v1/endpoints/DEFAULT/churn/plain/process"})
	r.want(t, 200, "")
	if d := cmp.Diff([]any{map[string]any{"age": 0.0, "income": 0.0}}, r.json["sample"]); d != "" {
		t.Errorf("without verification rows, the sample (-want +got):\n%s", d)
	}
}

// jsonNumber prints a number of a decoded JSON answer as JSON does.
func jsonNumber(v any) string {
	f, _ := v.(float64)
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func TestModelUploadMultipart(t *testing.T) {
	f := newFixture(t)
	art := linear(0)
	meta := `{"label":"churn","classes":["stay","leave"],"description":"Logistic",
		"verification":{"rows":[{"age":1,"income":2},{"age":0,"income":0},{"income":-3}],
		"expected":["stay",{"confidence(leave)":0.5,"prediction(churn)":"stay"},[0.04742587317756678,0.9525741268224334]],"tolerance":1e-9}}`
	r := f.uploadParts(t, "churn", part{"artifact", art}, part{"metadata", meta})
	r.want(t, 201, "")
	if r.json["task"] != "classification" || r.json["label"] != "churn" || r.json["description"] != "Logistic" {
		t.Errorf("classifier: %s", r.body)
	}
	if d := cmp.Diff([]any{"stay", "leave"}, r.json["classes"]); d != "" {
		t.Errorf("classes (-want +got):\n%s", d)
	}
	// Without metadata the file alone is a regressor.
	f.uploadParts(t, "plain", part{"artifact", art}).want(t, 201, "")

	// Predictions the model does not reproduce refuse the version, naming
	// the rows that differ: row 1 scores 1+2·5 and leaves.
	wrong := `{"classes":["stay","leave"],"verification":{"rows":[{"age":0,"income":2},{"age":5,"income":0}],"expected":["stay","stay"]}}`
	r = f.uploadParts(t, "churn", part{"artifact", linear(1)}, part{"metadata", wrong})
	r.want(t, 422, "verification_failed")
	if msg, _ := r.errorField("message").(string); !strings.Contains(msg, "row 1") || strings.Contains(msg, "row 0") {
		t.Errorf("message %q, want it to name row 1 and not row 0", msg)
	}
	if m, _ := f.reg.Snapshot().State().Model("churn"); len(m.Versions) != 1 {
		t.Errorf("a refused version was stored: %d versions", len(m.Versions))
	}

	tests := []struct {
		name    string
		parts   []part
		query   string
		status  int
		typ     string
		pointer string
		message string // in the message
	}{
		{"unknown metadata member", []part{{"artifact", art}, {"metadata", `{"label":"a","colour":1}`}}, "", 400, "validation_failed", "/colour", ""},
		{"unknown verification member", []part{{"artifact", art}, {"metadata", `{"verification":{"rows":[],"expected":[],"x":1}}`}}, "", 400, "validation_failed", "/verification/x", ""},
		{"duplicate key", []part{{"artifact", art}, {"metadata", `{"label":"a","label":"b"}`}}, "", 400, "malformed_json", "/label", ""},
		{"metadata not JSON", []part{{"artifact", art}, {"metadata", `{label:1}`}}, "", 400, "malformed_json", "", ""},
		{"label of the wrong type", []part{{"artifact", art}, {"metadata", `{"label":3}`}}, "", 400, "validation_failed", "/label", ""},
		{"classes twice", []part{{"artifact", art}, {"metadata", `{"classes":["a","a"]}`}}, "", 400, "validation_failed", "/classes", ""},
		{"another part", []part{{"artifact", art}, {"model", "x"}}, "", 400, "invalid_request", "", `"model"`},
		{"two artifacts", []part{{"artifact", art}, {"artifact", art}}, "", 400, "invalid_request", "", `"artifact"`},
		{"two metadata parts", []part{{"artifact", art}, {"metadata", `{}`}, {"metadata", `{}`}}, "", 400, "invalid_request", "", `"metadata"`},
		{"no artifact", []part{{"metadata", `{}`}}, "", 400, "invalid_request", "", `"artifact"`},
		{"metadata in the query too", []part{{"artifact", art}}, "?label=x", 400, "invalid_parameter", "", `"label"`},
		{"rows not an array", []part{{"artifact", art}, {"metadata", `{"verification":{"rows":{"age":1},"expected":[1]}}`}}, "", 400, "invalid_request", "/verification/rows", ""},
		{"rows of mixed types", []part{{"artifact", art}, {"metadata", `{"verification":{"rows":[{"age":1},{"age":"old"}],"expected":[1,2]}}`}}, "", 400, "mixed_types", "/verification/rows/1/age", ""},
		{"nested value in a row", []part{{"artifact", art}, {"metadata", `{"verification":{"rows":[{"age":[1]}],"expected":[1]}}`}}, "", 400, "invalid_value", "/verification/rows/0/age", ""},
		{"no expected", []part{{"artifact", art}, {"metadata", `{"verification":{"rows":[{"age":1}]}}`}}, "", 400, "validation_failed", "/verification/expected", ""},
		{"no rows", []part{{"artifact", art}, {"metadata", `{"verification":{"expected":[1]}}`}}, "", 400, "validation_failed", "/verification/rows", ""},
		{"expected per row", []part{{"artifact", art}, {"metadata", `{"verification":{"rows":[{"age":1}],"expected":[1,2]}}`}}, "", 400, "validation_failed", "/verification/expected", "1 rows, 2 predictions"},
		{"expected of no kind", []part{{"artifact", art}, {"metadata", `{"verification":{"rows":[{"age":1}],"expected":[true]}}`}}, "", 400, "validation_failed", "/verification/expected/0", ""},
		{"expected array of text", []part{{"artifact", art}, {"metadata", `{"verification":{"rows":[{"age":1}],"expected":[["a"]]}}`}}, "", 400, "validation_failed", "/verification/expected/0", ""},
		{"negative tolerance", []part{{"artifact", art}, {"metadata", `{"verification":{"rows":[{"age":1}],"expected":[1],"tolerance":-1}}`}}, "", 400, "validation_failed", "/verification/tolerance", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, ct := multipartBody(t, tt.parts...)
			r := f.do(t, request{method: "POST", path: "/api/v1/models/fresh/versions" + tt.query, token: f.admin, body: body, contentType: ct})
			r.want(t, tt.status, tt.typ)
			if p, _ := r.errorField("pointer").(string); p != tt.pointer {
				t.Errorf("pointer %q, want %q; body: %s", p, tt.pointer, r.body)
			}
			if msg, _ := r.errorField("message").(string); !strings.Contains(msg, tt.message) {
				t.Errorf("message %q, want it to contain %q", msg, tt.message)
			}
			if _, ok := f.reg.Snapshot().State().Model("fresh"); ok {
				t.Error("the refused upload stored a model")
			}
		})
	}
}

func TestModelUploadRefusals(t *testing.T) {
	f := newFixture(t, withConfig(management.Config{MaxModelBytes: 300}))
	names := make([]string, 30)
	for i := range names {
		names[i] = "feature" + strconv.Itoa(i)
	}
	big := string(registrytest.LinearArtifact(0, names, make([]float64, len(names))))
	if len(big) <= 300 {
		t.Fatalf("the oversized model has %d bytes", len(big))
	}
	tests := []struct {
		name        string
		path        string
		contentType string
		body        string
		status      int
		typ         string
	}{
		{"a pickle", "/api/v1/models/m/versions", octetStream, "\x80\x04\x95\x10\x00\x00\x00", 415, "unsupported_model_format"},
		{"garbage", "/api/v1/models/m/versions", octetStream, "not a model at all", 415, "unsupported_model_format"},
		{"a JSON document of no format", "/api/v1/models/m/versions", "application/json", `{"learner":{}}`, 415, "unsupported_model_format"},
		{"an invalid model", "/api/v1/models/m/versions", octetStream, linear(0) + "slope 3\n", 422, "invalid_model"},
		{"features the model does not have", "/api/v1/models/m/versions?features=a,b,c", octetStream, linear(0), 422, "invalid_model"},
		{"classes the model cannot have", "/api/v1/models/m/versions?classes=a,b,c", octetStream, linear(0), 422, "invalid_model"},
		{"too large", "/api/v1/models/m/versions", octetStream, big, 413, "body_too_large"},
		{"a form", "/api/v1/models/m/versions", "application/x-www-form-urlencoded", "a=b", 415, "unsupported_media_type"},
		{"no content type", "/api/v1/models/m/versions", "-", linear(0), 415, "unsupported_media_type"},
		{"a parameter the route does not read", "/api/v1/models/m/versions?labels=x", octetStream, linear(0), 400, "invalid_parameter"},
		{"a parameter twice", "/api/v1/models/m/versions?label=x&label=y", octetStream, linear(0), 400, "invalid_parameter"},
		{"a class twice", "/api/v1/models/m/versions?classes=a,a", octetStream, linear(0), 400, "invalid_parameter"},
		{"an empty feature", "/api/v1/models/m/versions?features=age,", octetStream, linear(0), 400, "invalid_parameter"},
		{"an invalid name", "/api/v1/models/-m/versions", octetStream, linear(0), 400, "invalid_request"},
		{"a malformed escape in the query", "/api/v1/models/m/versions?description=100%", octetStream, linear(0), 400, "invalid_parameter"},
		{"a semicolon in the query", "/api/v1/models/m/versions?label=a;b", octetStream, linear(0), 400, "invalid_parameter"},
		{"a label not UTF-8", "/api/v1/models/m/versions?label=%FF", octetStream, linear(0), 400, "invalid_parameter"},
		{"a description not UTF-8", "/api/v1/models/m/versions?description=%C3(", octetStream, linear(0), 400, "invalid_parameter"},
		{"a malformed query with a multipart body", "/api/v1/models/m/versions?x=%zz", "multipart/form-data; boundary=b", "--b--\r\n", 400, "invalid_parameter"},
		{"multipart without a boundary", "/api/v1/models/m/versions", "multipart/form-data", linear(0), 400, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := tt.contentType
			if ct == "-" {
				ct = ""
			}
			rq := request{method: "POST", path: tt.path, token: f.admin, body: tt.body, contentType: ct}
			if ct == "" {
				rq.header = map[string]string{"Content-Type": ""}
			}
			r := f.do(t, rq)
			r.want(t, tt.status, tt.typ)
			if len(f.reg.Snapshot().State().Models()) != 0 {
				t.Error("the refused upload stored a model")
			}
		})
	}

	// The format's own limits answer 422 under the default size limit.
	wide := newFixture(t)
	features := make([]string, 101)
	for i := range features {
		features[i] = "f" + strconv.Itoa(i)
	}
	wide.upload(t, "wide", "", string(registrytest.LinearArtifact(0, features, make([]float64, len(features))))).want(t, 422, "model_limit_exceeded")
}

func TestModelAliases(t *testing.T) {
	f := newFixture(t)
	f.addModel(t, "churn", linear(1), process.ModelMetadata{})
	f.addModel(t, "churn", linear(2), process.ModelMetadata{})
	admin := func(method, path, body string, header map[string]string) response {
		return f.do(t, request{method: method, path: path, token: f.admin, body: body, header: header})
	}
	const alias = "/api/v1/models/churn/aliases/production"

	r := admin("PUT", alias, `{"version":1}`, nil)
	r.want(t, 201, "")
	if r.header.Get("ETag") != `"1"` || r.json["version"] != 1.0 || r.json["alias"] != "production" || r.json["model"] != "churn" {
		t.Errorf("created: ETag %q, %s", r.header.Get("ETag"), r.body)
	}
	r = f.do(t, request{method: "GET", path: alias, token: f.reader})
	r.want(t, 200, "")
	if r.header.Get("ETag") != `"1"` || r.json["version"] != 1.0 {
		t.Errorf("GET: ETag %q, %s", r.header.Get("ETag"), r.body)
	}
	r = f.do(t, request{method: "GET", path: "/api/v1/models/churn/versions/1", token: f.reader})
	if d := cmp.Diff([]any{"production"}, r.json["aliases"]); d != "" {
		t.Errorf("aliases of version 1 (-want +got):\n%s", d)
	}
	r = f.do(t, request{method: "GET", path: "/api/v1/models/churn", token: f.reader})
	if as, _ := r.json["aliases"].([]any); len(as) != 1 || as[0].(map[string]any)["alias"] != "production" {
		t.Errorf("model aliases: %s", r.body)
	}

	// Moving: a stale revision is refused, the current one moves it.
	admin("PUT", alias, `{"version":2}`, map[string]string{"If-Match": `"7"`}).want(t, 412, "precondition_failed")
	admin("PUT", alias, `{"version":2,"revision":7}`, nil).want(t, 412, "precondition_failed")
	admin("PUT", alias, `{"version":2,"revision":2}`, map[string]string{"If-Match": `"1"`}).want(t, 400, "validation_failed")
	r = admin("PUT", alias, `{"version":2}`, map[string]string{"If-Match": `"1"`})
	r.want(t, 200, "")
	if r.json["version"] != 2.0 || r.header.Get("ETag") != `"2"` {
		t.Errorf("moved: ETag %q, %s", r.header.Get("ETag"), r.body)
	}
	// GET's answer may be sent back.
	r = f.do(t, request{method: "GET", path: alias, token: f.reader})
	body := strings.Replace(string(r.body), `"version":2`, `"version":1`, 1)
	admin("PUT", alias, body, nil).want(t, 200, "")

	for _, tt := range []struct {
		name, path, body string
		status           int
		typ, pointer     string
	}{
		{"no version", alias, `{}`, 400, "validation_failed", "/version"},
		{"version 0", alias, `{"version":0}`, 400, "validation_failed", "/version"},
		{"version as text", alias, `{"version":"1"}`, 400, "validation_failed", "/version"},
		{"unknown member", alias, `{"version":1,"target":2}`, 400, "validation_failed", "/target"},
		{"another alias in the body", alias, `{"version":1,"alias":"staging"}`, 400, "validation_failed", "/alias"},
		{"another model in the body", alias, `{"version":1,"model":"other"}`, 400, "validation_failed", "/model"},
		{"a version that does not exist", alias, `{"version":9}`, 422, "", ""},
		{"a model that does not exist", "/api/v1/models/none/aliases/production", `{"version":1}`, 404, "not_found", ""},
		{"an alias that reads as a version", "/api/v1/models/churn/aliases/12", `{"version":1}`, 400, "invalid_request", ""},
		{"an alias that is no name", "/api/v1/models/churn/aliases/-x", `{"version":1}`, 400, "invalid_request", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := admin("PUT", tt.path, tt.body, nil)
			r.want(t, tt.status, tt.typ)
			if p, _ := r.errorField("pointer").(string); tt.pointer != "" && p != tt.pointer {
				t.Errorf("pointer %q, want %q", p, tt.pointer)
			}
		})
	}
	admin("PUT", alias, `{"version":1}`, map[string]string{"Content-Type": "text/plain"}).want(t, 415, "unsupported_media_type")

	admin("DELETE", alias, "", map[string]string{"If-Match": `"1"`}).want(t, 412, "precondition_failed")
	admin("DELETE", alias, "", map[string]string{"If-Match": `"3"`}).want(t, 204, "")
	f.do(t, request{method: "GET", path: alias, token: f.reader}).want(t, 404, "not_found")
	admin("DELETE", alias, "", nil).want(t, 404, "not_found")
}

// An endpoint names a model through an alias: moving the alias changes
// what the endpoint scores with from the next request, and nothing an
// endpoint uses can be removed.
func TestModelEndpointFollowsItsAlias(t *testing.T) {
	f := newFixture(t)
	f.addModel(t, "churn", linear(1), process.ModelMetadata{Label: "risk"})
	f.addModel(t, "churn", linear(100), process.ModelMetadata{Label: "risk"})
	f.putAlias(t, "churn", "production", 1)
	admin := func(method, path, body, contentType string, header map[string]string) response {
		return f.do(t, request{method: method, path: path, token: f.admin, body: body, contentType: contentType, header: header})
	}
	r := admin("POST", "/api/v1/deployments", `{"group":"DEFAULT","path":"churn","endpoints":[{"alias":"predict","model":"churn@production"}]}`, "", nil)
	r.want(t, 201, "")
	want := []any{map[string]any{"alias": "predict", "process": "", "model": "churn@production", "queue": "DEFAULT", "timeoutMs": 0.0, "description": ""}}
	if d := cmp.Diff(want, r.json["endpoints"]); d != "" {
		t.Errorf("endpoints (-want +got):\n%s", d)
	}
	prediction := func() any {
		t.Helper()
		r := f.score(t, "DEFAULT", "churn", "predict", `{"data":[{"age":3,"income":2}]}`)
		r.want(t, 200, "")
		rows, _ := r.json["data"].([]any)
		if len(rows) != 1 {
			t.Fatalf("scored %s", r.body)
		}
		return rows[0].(map[string]any)["prediction(risk)"]
	}
	if got := prediction(); got != 5.0 {
		t.Errorf("through production at version 1: %v, want 1+2·3−2 = 5", got)
	}
	r = f.do(t, request{method: "GET", path: "/api/v1/endpoints", token: f.reader})
	r.want(t, 200, "")
	if len(r.list) != 1 {
		t.Fatalf("endpoints: %s", r.body)
	}
	ep := r.list[0].(map[string]any)
	if ep["model"] != "churn@production" || ep["process"] != "" || ep["state"] != "enabled" || ep["processDescription"] == "" {
		t.Errorf("the model endpoint is listed as %v", ep)
	}
	r = f.do(t, request{method: "GET", path: "/api/v1/endpoints/DEFAULT/churn/predict/process", token: f.reader})
	r.want(t, 200, "")
	wantSample := []any{map[string]any{"age": 0.0, "income": 0.0}}
	if d := cmp.Diff(wantSample, r.json["sample"]); d != "" {
		t.Errorf("the sample the test page starts from (-want +got):\n%s", d)
	}
	if outs, _ := r.json["output"].([]any); len(outs) != 1 || outs[0].(map[string]any)["name"] != "prediction(risk)" {
		t.Errorf("output: %s", r.body)
	}

	r = admin("PUT", "/api/v1/models/churn/aliases/production", `{"version":2}`, "", map[string]string{"If-Match": `"1"`})
	r.want(t, 200, "")
	if got := prediction(); got != 104.0 {
		t.Errorf("after the move to version 2: %v, want 100+2·3−2 = 104", got)
	}

	// What the endpoint uses stays.
	admin("DELETE", "/api/v1/models/churn/aliases/production", "", "", nil).want(t, 409, "in_use")
	admin("DELETE", "/api/v1/models/churn/versions/2", "", "", nil).want(t, 409, "in_use")
	admin("DELETE", "/api/v1/models/churn", "", "", nil).want(t, 409, "in_use")
	admin("DELETE", "/api/v1/models/churn/versions/1", "", "", nil).want(t, 204, "")
	f.do(t, request{method: "GET", path: "/api/v1/models/churn/versions/1", token: f.reader}).want(t, 404, "not_found")

	// A PATCH switches the endpoint to a catalog process and back to a
	// version.
	r = admin("PATCH", "/api/v1/deployments/DEFAULT/churn", `{"endpoints":[{"alias":"predict","process":"double"}]}`, mergePatch, nil)
	r.want(t, 200, "")
	if f.score(t, "DEFAULT", "churn", "predict", `{"data":[{"x":4}]}`).json["data"].([]any)[0].(map[string]any)["double"] != 8.0 {
		t.Error("the endpoint does not run double after the patch")
	}
	r = admin("PATCH", "/api/v1/deployments/DEFAULT/churn", `{"endpoints":[{"alias":"predict","model":"churn@2"}]}`, mergePatch, nil)
	r.want(t, 200, "")
	if got := prediction(); got != 104.0 {
		t.Errorf("through churn@2: %v, want 104", got)
	}
	admin("DELETE", "/api/v1/models/churn/versions/2", "", "", nil).want(t, 409, "in_use")
	admin("DELETE", "/api/v1/deployments/DEFAULT/churn", "", "", nil).want(t, 204, "")

	admin("DELETE", "/api/v1/models/churn/versions/2", "", "", nil).want(t, 409, "in_use") // the alias
	admin("DELETE", "/api/v1/models/churn/aliases/production", "", "", nil).want(t, 204, "")
	admin("DELETE", "/api/v1/models/churn", "", "", map[string]string{"If-Match": `"999"`}).want(t, 412, "precondition_failed")
	r = f.do(t, request{method: "GET", path: "/api/v1/models/churn", token: f.reader})
	admin("DELETE", "/api/v1/models/churn", "", "", map[string]string{"If-Match": r.header.Get("ETag")}).want(t, 204, "")
	f.do(t, request{method: "GET", path: "/api/v1/models/churn", token: f.reader}).want(t, 404, "not_found")
	admin("DELETE", "/api/v1/models/churn", "", "", nil).want(t, 404, "not_found")
}

// Clients score without pause while the alias moves back and forth: every
// request is answered 200 by one version or the other.
func TestAliasMovesDropNoRequest(t *testing.T) {
	f := newFixture(t)
	f.addModel(t, "churn", linear(1), process.ModelMetadata{})
	f.addModel(t, "churn", linear(100), process.ModelMetadata{})
	f.putAlias(t, "churn", "production", 1)
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "churn", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "predict", Model: "churn@production"}}})

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]int{}
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := f.score(t, "DEFAULT", "churn", "predict", `{"data":[{"age":3,"income":2}]}`)
				got := fmt.Sprintf("%d %s", r.status, r.body)
				if rows, _ := r.json["data"].([]any); r.status == 200 && len(rows) == 1 {
					row, _ := rows[0].(map[string]any)
					got = fmt.Sprint(row["prediction(label)"])
				}
				mu.Lock()
				seen[got]++
				mu.Unlock()
			}
		})
	}
	for i := range 20 {
		version := 2 - i%2
		f.do(t, request{method: "PUT", path: "/api/v1/models/churn/aliases/production", token: f.admin,
			body: `{"version":` + strconv.Itoa(version) + `}`}).want(t, 200, "")
	}
	close(stop)
	wg.Wait()
	for got, n := range seen {
		if got != "5" && got != "104" {
			t.Errorf("%d requests answered %s; want each answered 5 (version 1) or 104 (version 2)", n, got)
		}
	}
	if seen["5"] == 0 && seen["104"] == 0 {
		t.Error("no request was answered")
	}
}

// A model endpoint whose version this server cannot load (a build without
// its format) is listed as unavailable and answers 503, and its deployment
// can still be changed.
func TestModelEndpointOfAFormatNotRead(t *testing.T) {
	store := registry.NewMemStore(registry.StoreOptions{})
	before := newFixture(t, withStore(store))
	before.addModel(t, "churn", linear(1), process.ModelMetadata{})
	before.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "churn", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "predict", Model: "churn@1"}}})

	f := newFixture(t, withStore(store), withoutModelFormats())
	r := f.do(t, request{method: "GET", path: "/api/v1/endpoints", token: f.reader})
	r.want(t, 200, "")
	if len(r.list) != 1 {
		t.Fatalf("endpoints: %s", r.body)
	}
	if ep := r.list[0].(map[string]any); ep["state"] != "unavailable" || ep["processDescription"] != "" || ep["model"] != "churn@1" {
		t.Errorf("the endpoint of a model not loaded is listed as %v", ep)
	}
	f.do(t, request{method: "GET", path: "/api/v1/endpoints/DEFAULT/churn/predict/process", token: f.reader}).want(t, 503, "process_unavailable")
	f.score(t, "DEFAULT", "churn", "predict", `{"data":[{"age":1}]}`).want(t, 503, "")
	f.do(t, request{method: "PATCH", path: "/api/v1/deployments/DEFAULT/churn", token: f.admin, contentType: mergePatch,
		body: `{"enabled":false}`}).want(t, 200, "")
}

func TestModelEndpointReferences(t *testing.T) {
	f := newFixture(t)
	f.addModel(t, "churn", linear(1), process.ModelMetadata{})
	f.putAlias(t, "churn", "production", 1)
	tests := []struct {
		name     string
		endpoint string
		status   int
		typ      string
		fields   [][2]string
	}{
		{"process and model", `{"alias":"a","process":"double","model":"churn@1"}`, 400, "validation_failed",
			[][2]string{{"/endpoints/0", "must name either a process or a model, not both or neither"}}},
		{"neither", `{"alias":"a"}`, 400, "validation_failed",
			[][2]string{{"/endpoints/0", "must name either a process or a model, not both or neither"}}},
		{"not a reference", `{"alias":"a","model":"churn"}`, 400, "validation_failed",
			[][2]string{{"/endpoints/0/model", `must name a model and one of its aliases or versions: "churn@production" or "churn@3"`}}},
		{"unknown model", `{"alias":"a","model":"none@production"}`, 422, "invalid_reference", [][2]string{{"/endpoints/0/model", `names no model: "none"`}}},
		{"unknown alias", `{"alias":"a","model":"churn@staging"}`, 422, "invalid_reference", [][2]string{{"/endpoints/0/model", `names no alias of model "churn": "staging"`}}},
		{"unknown version", `{"alias":"a","model":"churn@9"}`, 422, "invalid_reference", [][2]string{{"/endpoints/0/model", `names no version of model "churn": 9`}}},
		{"a version", `{"alias":"a","model":"churn@1"}`, 201, "", nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(t, request{method: "POST", path: "/api/v1/deployments", token: f.admin,
				body: `{"group":"DEFAULT","path":"p` + strconv.Itoa(i) + `","endpoints":[` + tt.endpoint + `]}`})
			r.want(t, tt.status, tt.typ)
			if tt.status == 422 {
				if p, _ := r.errorField("pointer").(string); p != "/endpoints/0/model" {
					t.Errorf("pointer %q, want /endpoints/0/model; body: %s", p, r.body)
				}
			}
			if tt.fields != nil {
				if d := cmp.Diff(tt.fields, r.fields()); d != "" {
					t.Errorf("fields (-want +got):\n%s", d)
				}
			}
		})
	}
}

func TestModelArtifact(t *testing.T) {
	f := newFixture(t)
	art := linear(1)
	f.addModel(t, "churn", art, process.ModelMetadata{})
	r := f.do(t, request{method: "GET", path: "/api/v1/models/churn/versions/1/artifact", token: f.admin})
	r.want(t, 200, "")
	if string(r.body) != art {
		t.Errorf("artifact %q, want %q", r.body, art)
	}
	for h, want := range map[string]string{
		"Content-Type":        octetStream,
		"ETag":                `"` + sha(art) + `"`,
		"Content-Disposition": `attachment; filename="churn-1.bin"`,
	} {
		if got := r.header.Get(h); got != want {
			t.Errorf("%s %q, want %q", h, got, want)
		}
	}
	f.do(t, request{method: "GET", path: "/api/v1/models/churn/versions/1/artifact", token: f.reader}).want(t, 403, "forbidden")
	f.do(t, request{method: "GET", path: "/api/v1/models/churn/versions/2/artifact", token: f.admin}).want(t, 404, "not_found")
	f.do(t, request{method: "GET", path: "/api/v1/models/none/versions/1/artifact", token: f.admin}).want(t, 404, "not_found")
}
