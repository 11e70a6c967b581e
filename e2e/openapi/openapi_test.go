package openapi

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

func TestDocumentIsValidOpenAPI(t *testing.T) {
	t.Parallel()
	s := harness.Start(t, harness.Options{})
	c := s.Conformance(t) // fails the test unless the document is valid
	if v := c.Version(); v != "3.0.3" {
		t.Errorf("openapi %q, want 3.0.3", v)
	}
}

// The conformance check the suites rely on does catch an answer the
// document does not allow.
func TestConformanceCatchesDrift(t *testing.T) {
	t.Parallel()
	s := harness.Start(t, harness.Options{})
	c := s.Conformance(t)
	tests := []struct {
		name, method, path string
		status             int
		contentType, body  string
	}{
		{"undocumented status", "GET", "/api/v1/queues", 418, "application/json", `{"error":{"type":"teapot","message":"short"}}`},
		{"missing member", "GET", "/api/v1/queues/DEFAULT", 200, "application/json", `{"name":"DEFAULT"}`},
		{"extra member", "GET", "/health/live", 200, "application/json", `{"status":"up","uptime":3}`},
		{"error of another shape", "GET", "/api/v1/queues/x", 404, "application/json", `{"message":"not found"}`},
		{"not JSON for an unknown path", "GET", "/nowhere", 404, "text/plain", `404 page not found`},
		{"answer for an unknown path that is not an error", "GET", "/nowhere", 200, "application/json", `{}`},
		{"JSON Lines record of another shape", "GET", "/api/v1/endpoints/DEFAULT/churn/score/payloads", 200, mediaJSONLines,
			`{"seq":1,"at":"2026-03-14T15:09:26Z","row":{}}` + "\n" + `{"seq":2,"row":{}}` + "\n"},
		{"JSON Lines that are one JSON array", "GET", "/api/v1/endpoints/DEFAULT/churn/score/payloads", 200, mediaJSONLines,
			`[{"seq":1,"at":"2026-03-14T15:09:26Z","row":{}}]` + "\n"},
		{"JSON Lines without the last newline", "GET", "/api/v1/endpoints/DEFAULT/churn/score/payloads", 200, mediaJSONLines,
			`{"seq":1,"at":"2026-03-14T15:09:26Z","row":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tt.method, s.Base+tt.path, nil)
			res := &http.Response{StatusCode: tt.status, Header: http.Header{"Content-Type": {tt.contentType}},
				Body: io.NopCloser(strings.NewReader(tt.body))}
			if _, err := c.Check(req, res, []byte(tt.body)); err == nil {
				t.Error("check passed an answer the document does not allow")
			}
		})
	}
}

// The check reads nullable as OpenAPI 3.0.3 does, as generated clients
// do: a null passes a nullable schema only if the schema's allOf, oneOf and
// enum pass it too.
func TestConformanceReadsNullableStrictly(t *testing.T) {
	t.Parallel()
	const doc = `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/thing":{"get":{"responses":{"200":{
		"description":"a thing","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Holder"}}}}}}}},
		"components":{"schemas":{
			"Thing":{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}},
			"Holder":{"type":"object","properties":{
				"allOf":{"type":"object","nullable":true,"allOf":[{"$ref":"#/components/schemas/Thing"}]},
				"untyped":{"nullable":true,"allOf":[{"$ref":"#/components/schemas/Thing"}]},
				"oneOf":{"oneOf":[{"$ref":"#/components/schemas/Thing"},{"type":"object","nullable":true,"enum":[null]}]},
				"enum":{"type":"string","nullable":true,"enum":["a"]},
				"plain":{"type":"string","nullable":true}}}}}}`
	c, err := harness.LoadConformance([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		body string
		ok   bool
	}{
		{`{"allOf":{"a":"x"},"untyped":{"a":"x"},"oneOf":{"a":"x"},"enum":"a","plain":"x"}`, true},
		{`{"oneOf":null,"plain":null}`, true},
		{`{"allOf":null}`, false},
		{`{"untyped":null}`, false},
		{`{"enum":null}`, false},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("GET", "/thing", nil)
		res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(tt.body))}
		if _, err := c.Check(req, res, []byte(tt.body)); (err == nil) != tt.ok {
			t.Errorf("%s: passed %v, want %v (%v)", tt.body, err == nil, tt.ok, err)
		}
	}
}

// step is one request of TestEveryOperationAnswersAsDocumented.
type step struct {
	method, path string
	as           string // "admin", "reader", "bob" or "" for no token
	contentType  string // application/json when body is set and this is not
	body         string
	header       map[string]string
	status       int
	keep         string // the name under which the answer's id is kept for later paths and headers ({name})
	keepField    string // the member of the answer kept, when not "id"
}

// TestEveryOperationAnswersAsDocumented sends the server, through the
// checking client, a request for every operation of its OpenAPI document
// and the usual errors of each kind (no token, a reader writing, unknown
// names, conflicts, stale revisions, bad bodies), each of which must get
// its status and an answer the document allows; then checks that no
// operation of the document went unanswered.
func TestEveryOperationAnswersAsDocumented(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := harness.Start(t, harness.Options{Dir: dir, Args: []string{"-demo-sleep", "-users", readerFile(t, dir)}})
	tr := s.Conformance(t).Transport(t, http.DefaultTransport)
	client := &http.Client{Transport: tr}
	tokensBy := map[string]string{"admin": s.AdminToken(t), "reader": readerToken(t, s)}
	kept := map[string]string{}

	const dep = `{"group":"traffic","path":"iris","description":"Species","endpoints":[{"alias":"species","process":"iris","timeoutMs":3000}]}`
	model := exampleModel(t)
	const versions = "/api/v1/models/iris/versions"
	const irisMeta = "?label=species&classes=setosa,versicolor,virginica&features=sepal_length,sepal_width,petal_length,petal_width"
	const modelDep = `{"enabled":true,"endpoints":[{"alias":"species","model":"iris@production"}]}`
	multipartType, multipartBody := modelMultipart(model, `{"label":"species","classes":["setosa","versicolor","virginica"],"features":["sepal_length","sepal_width","petal_length","petal_width"],"description":"Iris, with its metadata part"}`)
	_, verifiedBody := modelMultipart(model, exampleFile(t, "iris.verification.json")) // metadata with verification rows
	const irisFeatures = `"features":["sepal_length","sepal_width","petal_length","petal_width"]`
	referencedType, referencedBody := multipartForm(
		formPart{name: "artifact", filename: "iris.json", contentType: "application/octet-stream", body: model},
		formPart{name: "metadata", contentType: "application/json", body: `{"label":"species","classes":["setosa","versicolor","virginica"],` + irisFeatures + `,"description":"Iris, with reference rows"}`},
		formPart{name: "reference", filename: "reference.csv", contentType: "text/csv", body: irisReferenceCSV})
	raggedType, raggedBody := multipartForm(
		formPart{name: "artifact", filename: "iris.json", contentType: "application/octet-stream", body: model},
		formPart{name: "reference", contentType: "text/csv", body: "sepal_length,petal_width\n5.1,0.2\n4.9\n"})
	const referenceJSON = `{"data":[` + harness.IrisRow + `,{"sepal_length":7.0,"sepal_width":3.2,"petal_length":4.7,"petal_width":1.4},{"sepal_length":6.3,"sepal_width":3.3,"petal_length":6.0,"petal_width":2.5}]}`
	const monitoredDep = `{"enabled":true,"endpoints":[
		{"alias":"species","model":"iris@4","monitor":{"window":"30m","maxRows":1000,"maxFeatures":2,"featureSeries":true},"outlierColumn":true,"payloadLog":{"rate":1,"redact":["sepal_width"]}},
		{"alias":"defaults","model":"iris@4","monitor":true,"payloadLog":{"rate":0.5}},
		{"alias":"off","model":"iris@4","monitor":false}]}`
	const monitoredRows = `{"data":[` + harness.IrisRow + `,{"sepal_length":5.9,"sepal_width":3.0,"petal_length":5.1,"petal_width":9}]}` // the second's petal_width is out of range
	const monitoredPayloads = "/api/v1/endpoints/traffic/monitored/species/payloads"
	steps := []step{
		{method: "GET", path: "/health/live", status: 200},
		{method: "GET", path: "/health/ready", status: 200},
		{method: "GET", path: "/api/v1/openapi.json", status: 200},
		{method: "GET", path: "/api/rest/jwks.json", status: 200},
		{method: "GET", path: "/api/rest/saml/tokenservice", status: 404}, // no provider configured
		{method: "GET", path: "/api/rest/tokenservice", header: basic("admin", harness.AdminPassword), status: 200},
		{method: "GET", path: "/api/rest/tokenservice", header: basic("admin", "wrong"), status: 401},
		{method: "GET", path: "/api/rest/tokenservice/renew", as: "reader", status: 200},
		{method: "GET", path: "/api/rest/tokenservice/renew", status: 401},
		{method: "GET", path: "/api/rest/tokenservice/renew", header: map[string]string{"Authorization": "Bearer not.a.token"}, status: 401},

		{method: "GET", path: "/executions/queues", as: "reader", status: 200},
		{method: "GET", path: "/executions/queues", status: 401},
		{method: "GET", path: "/api/v1/queues", as: "reader", status: 200},
		{method: "PUT", path: "/api/v1/queues/traffic", as: "admin", body: `{"maxConcurrent":1,"maxWaiting":4}`, status: 201},
		{method: "PUT", path: "/api/v1/queues/traffic", as: "admin", body: `{"maxConcurrent":2,"maxWaiting":4}`, header: map[string]string{"If-Match": `"1"`}, status: 200},
		{method: "PUT", path: "/api/v1/queues/traffic", as: "admin", body: `{"maxConcurrent":2,"maxWaiting":4}`, header: map[string]string{"If-Match": `"1"`}, status: 412},
		{method: "PUT", path: "/api/v1/queues/traffic", as: "reader", body: `{"maxConcurrent":2,"maxWaiting":4}`, status: 403},
		{method: "PUT", path: "/api/v1/queues/traffic", as: "admin", contentType: "text/plain", body: `{}`, status: 415},
		{method: "PUT", path: "/api/v1/queues/traffic", as: "admin", body: `{"maxConcurrent":-1}`, status: 400},
		{method: "GET", path: "/api/v1/queues/traffic", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/queues/nowhere", as: "reader", status: 404},
		{method: "DELETE", path: "/api/v1/queues/DEFAULT", as: "admin", status: 409},

		{method: "GET", path: "/api/v1/webapigroups", as: "reader", status: 200},
		{method: "POST", path: "/api/v1/webapigroups", as: "admin", body: `{"name":"traffic","description":"Traffic"}`, status: 201},
		{method: "POST", path: "/api/v1/webapigroups", as: "admin", body: `{"name":"traffic"}`, status: 409},
		{method: "POST", path: "/api/v1/webapigroups", as: "admin", body: `{"name":`, status: 400},
		{method: "GET", path: "/api/v1/webapigroups/traffic", as: "reader", status: 200},
		{method: "PUT", path: "/api/v1/webapigroups/spare", as: "admin", body: `{"description":"Spare"}`, status: 201},
		{method: "DELETE", path: "/api/v1/webapigroups/spare", as: "admin", status: 204},
		{method: "DELETE", path: "/api/v1/webapigroups/spare", as: "admin", status: 404},

		{method: "POST", path: "/api/v1/deployments", as: "admin", body: dep, status: 201},
		{method: "POST", path: "/api/v1/deployments", as: "admin", body: strings.NewReplacer(`"path":"iris"`, `"path":"other"`, `"process":"iris"`, `"process":"missing"`).Replace(dep), status: 422},
		{method: "GET", path: "/api/v1/deployments", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/deployments/traffic/iris", as: "reader", status: 200},
		{method: "PATCH", path: "/api/v1/deployments/traffic/iris", as: "admin", contentType: "application/merge-patch+json", body: `{"description":"Patched"}`, status: 200},
		{method: "PATCH", path: "/api/v1/deployments/traffic/iris", as: "admin", body: `{"description":"x"}`, status: 415},
		{method: "PUT", path: "/api/v1/deployments/traffic/slow", as: "admin",
			body: `{"enabled":true,"endpoints":[{"alias":"sleep","process":"sleep","queue":"traffic"}]}`, status: 201},
		{method: "DELETE", path: "/api/v1/queues/traffic", as: "admin", status: 409}, // in use by traffic/slow
		{method: "GET", path: "/api/v1/endpoints", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/endpoints", status: 200}, // public groups' endpoints only
		{method: "GET", path: "/api/v1/processes", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/processes/iris", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/processes/nowhere", as: "reader", status: 404},
		{method: "GET", path: "/api/v1/endpoints/traffic/iris/species/process", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/endpoints/traffic/iris/species/process", status: 200}, // a public group's, without a token
		{method: "GET", path: "/api/v1/endpoints/traffic/iris/nowhere/process", as: "reader", status: 404},

		// The model routes' refusals, which need no model file.
		{method: "GET", path: "/api/v1/models", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/models/churn", as: "reader", status: 404},
		{method: "POST", path: "/api/v1/models/churn/versions", as: "admin", contentType: "application/octet-stream", body: "not a model", status: 415},
		{method: "POST", path: "/api/v1/models/churn/versions", as: "reader", contentType: "application/octet-stream", body: "not a model", status: 403},
		{method: "GET", path: "/api/v1/models/churn/versions", as: "reader", status: 404},
		{method: "GET", path: "/api/v1/models/churn/versions/1", as: "reader", status: 404},
		{method: "GET", path: "/api/v1/models/churn/versions/1/artifact", as: "reader", status: 403},
		{method: "GET", path: "/api/v1/models/churn/versions/1/artifact", as: "admin", status: 404},
		{method: "DELETE", path: "/api/v1/models/churn/versions/1", as: "admin", status: 404},
		{method: "GET", path: "/api/v1/models/churn/aliases/production", as: "reader", status: 404},
		{method: "PUT", path: "/api/v1/models/churn/aliases/production", as: "admin", body: `{"version":1}`, status: 404},
		{method: "PUT", path: "/api/v1/models/churn/aliases/production", as: "admin", body: `{"version":0}`, status: 400},
		{method: "DELETE", path: "/api/v1/models/churn/aliases/production", as: "admin", status: 404},
		{method: "DELETE", path: "/api/v1/models/churn", as: "admin", status: 404},

		// Models: uploads, raw and multipart, their versions, aliases and
		// artifact, an endpoint naming one, and what each refuses.
		{method: "GET", path: "/api/v1/models", as: "reader", status: 200},
		{method: "POST", path: versions + irisMeta, as: "admin", body: model, status: 201},
		{method: "POST", path: versions + irisMeta, as: "admin", body: model, status: 200}, // the same again
		{method: "POST", path: versions, as: "reader", body: model, status: 403},
		{method: "POST", path: versions, as: "admin", contentType: "application/octet-stream", body: "not a model file", status: 415},
		{method: "POST", path: versions, as: "admin", contentType: multipartType, body: multipartBody, status: 201},
		{method: "GET", path: "/api/v1/models/iris", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/models/nowhere", as: "reader", status: 404},
		{method: "GET", path: versions, as: "reader", status: 200},
		{method: "GET", path: versions + "/1", as: "reader", status: 200},
		{method: "GET", path: versions + "/9", as: "reader", status: 404},
		{method: "GET", path: versions + "/1/artifact", as: "admin", status: 200},
		{method: "GET", path: versions + "/1/artifact", as: "reader", status: 403},
		{method: "PUT", path: "/api/v1/models/iris/aliases/production", as: "admin", body: `{"version":1}`, status: 201},
		{method: "PUT", path: "/api/v1/models/iris/aliases/production", as: "admin", body: `{"version":2}`, header: map[string]string{"If-Match": `"1"`}, status: 200},
		{method: "PUT", path: "/api/v1/models/iris/aliases/production", as: "admin", body: `{"version":1}`, header: map[string]string{"If-Match": `"1"`}, status: 412},
		{method: "PUT", path: "/api/v1/models/iris/aliases/staging", as: "reader", body: `{"version":1}`, status: 403},
		{method: "GET", path: "/api/v1/models/iris/aliases/production", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/models/iris/aliases/nowhere", as: "reader", status: 404},
		{method: "PUT", path: "/api/v1/deployments/traffic/model", as: "admin", body: modelDep, status: 201},
		{method: "PUT", path: "/api/v1/deployments/traffic/other", as: "admin", body: strings.Replace(modelDep, "iris@production", "iris@staging", 1), status: 422},
		{method: "POST", path: "/webapi/traffic/api/v1/services/model/species", body: `{"data":[` + harness.IrisRow + `]}`, status: 200},
		{method: "POST", path: "/webapi/traffic/api/v1/services/model/species", body: `{"data":[{"petal_width":"wide"}]}`, status: 400},
		{method: "GET", path: "/api/v1/endpoints/traffic/model/species/process", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/endpoints/traffic/model/nowhere/process", as: "reader", status: 404},
		// The same model with a challenger in its shadow, its answers
		// naming the version that gave them, and the comparison; the
		// predictions of a row with an ID, its outcome fed back and the
		// models measured on it; then the challenger promoted.
		{method: "PUT", path: "/api/v1/deployments/traffic/challenged", as: "admin", status: 201,
			body: `{"enabled":true,"endpoints":[{"alias":"species","model":"iris@2","answeredBy":true,"rowId":"id","challengers":[{"model":"iris@1","mode":"shadow"}]}]}`},
		{method: "PUT", path: "/api/v1/deployments/traffic/challenged", as: "admin", status: 400,
			body: `{"enabled":true,"endpoints":[{"alias":"species","model":"iris@2","challengers":[{"model":"iris@1","mode":"mirror"}]}]}`},
		{method: "POST", path: "/webapi/traffic/api/v1/services/challenged/species", body: `{"data":[{"id":"r1",` + strings.TrimPrefix(harness.IrisRow, "{") + `]}`, status: 200},
		{method: "GET", path: "/api/v1/endpoints/traffic/challenged/species/challengers", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/endpoints/traffic/challenged/nowhere/challengers", as: "reader", status: 404},
		{method: "POST", path: "/api/v1/endpoints/traffic/challenged/species/feedback", as: "reader", body: `{"data":[{"id":"r1","actual":"setosa"}]}`, status: 200},
		{method: "POST", path: "/api/v1/endpoints/traffic/challenged/species/feedback", as: "reader", body: `{"data":[{"id":"r1","actual":"tulip"}]}`, status: 400},
		{method: "GET", path: "/api/v1/endpoints/traffic/challenged/species/performance", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/endpoints/traffic/challenged/species/performance?window=nope", as: "reader", status: 400},
		{method: "POST", path: "/api/v1/endpoints/traffic/challenged/species/promote", as: "admin", body: `{"challenger":"iris@9"}`, status: 422},
		{method: "POST", path: "/api/v1/endpoints/traffic/challenged/species/promote", as: "admin", body: `{"challenger":"iris@1"}`, status: 200},
		{method: "DELETE", path: "/api/v1/deployments/traffic/challenged", as: "admin", status: 204},
		// A version uploaded with verification rows, its reference, on an
		// endpoint that scores a row, and how that row drifts from it; the
		// drift of an endpoint before it scored, of a version without a
		// reference and of a catalog process is not measured.
		{method: "POST", path: versions, as: "admin", contentType: multipartType, body: verifiedBody, status: 201}, // iris@3
		{method: "PUT", path: "/api/v1/deployments/traffic/drifted", as: "admin", body: `{"enabled":true,"endpoints":[{"alias":"species","model":"iris@3"}]}`, status: 201},
		{method: "GET", path: "/api/v1/endpoints/traffic/drifted/species/drift", as: "reader", status: 404}, // no row scored yet
		{method: "POST", path: "/webapi/traffic/api/v1/services/drifted/species", body: `{"data":[` + harness.IrisRow + `]}`, status: 200},
		{method: "GET", path: "/api/v1/endpoints/traffic/drifted/species/drift", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/endpoints/traffic/model/species/drift", as: "reader", status: 404}, // iris@2 has no reference
		{method: "GET", path: "/api/v1/endpoints/traffic/iris/species/drift", as: "reader", status: 404},  // a catalog process
		{method: "DELETE", path: "/api/v1/deployments/traffic/drifted", as: "admin", status: 204},
		// A version uploaded with reference rows as CSV, its reference
		// replaced by JSON rows and put back, and what that refuses; an
		// endpoint that measures its drift over a window of its own,
		// flags the rows outside the reference and logs every row it
		// scores, which an admin reads back a page at a time and as JSON
		// Lines; and the monitors a deployment may not have.
		{method: "POST", path: versions, as: "admin", contentType: referencedType, body: referencedBody, status: 201}, // iris@4
		{method: "POST", path: versions, as: "admin", contentType: raggedType, body: raggedBody, status: 400},         // CSV with a short row
		{method: "GET", path: versions + "/4", as: "reader", status: 200},
		{method: "PUT", path: versions + "/4/reference", as: "admin", body: referenceJSON, status: 200},
		{method: "PUT", path: versions + "/4/reference", as: "admin", contentType: "text/csv", body: "petal_width,petal_width\n1,2\n", status: 400},
		{method: "PUT", path: versions + "/4/reference", as: "admin", contentType: "text/csv", body: "petal_width\nwide\n", status: 400}, // not a number
		{method: "PUT", path: versions + "/4/reference", as: "admin", contentType: "application/xml", body: "<rows/>", status: 415},
		{method: "PUT", path: versions + "/4/reference", as: "reader", contentType: "text/csv", body: irisReferenceCSV, status: 403},
		{method: "PUT", path: versions + "/9/reference", as: "admin", contentType: "text/csv", body: irisReferenceCSV, status: 404},
		{method: "PUT", path: versions + "/4/reference", as: "admin", contentType: "text/csv", body: irisReferenceCSV, status: 200},
		{method: "PUT", path: "/api/v1/deployments/traffic/monitored", as: "admin", body: monitoredDep, status: 201},
		{method: "PUT", path: "/api/v1/deployments/traffic/monitored", as: "admin", status: 400,
			body: `{"endpoints":[{"alias":"species","model":"iris@4","monitor":{"window":"10s","maxFeatures":201},"payloadLog":{"rate":0}}]}`},
		{method: "PUT", path: "/api/v1/deployments/traffic/unmonitored", as: "admin", status: 400, // a process has no reference
			body: `{"endpoints":[{"alias":"species","process":"iris","monitor":{"window":"1h"},"outlierColumn":true}]}`},
		{method: "GET", path: "/api/v1/deployments/traffic/monitored", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/endpoints/traffic/monitored/species/drift", as: "reader", status: 404}, // no row scored yet
		{method: "POST", path: "/webapi/traffic/api/v1/services/monitored/species", body: monitoredRows, status: 200},
		{method: "POST", path: "/webapi/traffic/api/v1/services/monitored/off", body: monitoredRows, status: 200},
		{method: "GET", path: "/api/v1/endpoints/traffic/monitored/species/drift", as: "reader", status: 200},
		{method: "GET", path: "/api/v1/endpoints/traffic/monitored/off/drift", as: "reader", status: 404}, // its monitor is off
		{method: "GET", path: monitoredPayloads + "?limit=1", as: "admin", status: 200},                   // the first of two, and next
		{method: "GET", path: monitoredPayloads + "?after=0", as: "admin", status: 200},
		{method: "GET", path: "/api/v1/endpoints/traffic/monitored/off/payloads", as: "admin", status: 200}, // no payload log: no records
		{method: "GET", path: monitoredPayloads + "?format=jsonl", as: "admin", status: 200},
		{method: "GET", path: monitoredPayloads, as: "admin", header: map[string]string{"Accept": "application/x-ndjson"}, status: 200},
		{method: "GET", path: monitoredPayloads + "?limit=0", as: "admin", status: 400},
		{method: "GET", path: monitoredPayloads + "?format=csv", as: "admin", status: 400},
		{method: "GET", path: "/api/v1/endpoints/traffic/monitored/nowhere/payloads", as: "admin", status: 404},
		{method: "GET", path: monitoredPayloads, as: "reader", status: 403},
		{method: "GET", path: monitoredPayloads, status: 401},
		{method: "DELETE", path: "/api/v1/deployments/traffic/monitored", as: "admin", status: 204},
		// A job on the model's endpoint runs the model's version, which its
		// answers name as the job's process (iris@2).
		{method: "POST", path: "/executions/jobs", as: "admin", body: `{"endpoint":{"group":"traffic","path":"model","alias":"species"},"data":[` + harness.IrisRow + `]}`, status: 201, keep: "model"},
		{method: "GET", path: "/executions/jobs/{model}", as: "admin", status: 200},
		{method: "DELETE", path: versions + "/2", as: "admin", status: 409},                          // the alias names it
		{method: "DELETE", path: "/api/v1/models/iris/aliases/production", as: "admin", status: 409}, // the endpoint names it
		{method: "DELETE", path: "/api/v1/models/iris", as: "admin", status: 409},
		{method: "DELETE", path: "/api/v1/deployments/traffic/model", as: "admin", status: 204},
		{method: "DELETE", path: "/api/v1/models/iris/aliases/production", as: "admin", header: map[string]string{"If-Match": `"2"`}, status: 204},
		{method: "DELETE", path: versions + "/2", as: "admin", status: 204},
		{method: "DELETE", path: versions + "/2", as: "admin", status: 404},
		{method: "DELETE", path: "/api/v1/models/iris", as: "reader", status: 403},
		{method: "DELETE", path: "/api/v1/models/iris", as: "admin", status: 204},

		// What a user does for themself (bob reads himself, keeps API
		// tokens and changes his password, which ends his idToken) and what
		// the user routes refuse; admins' work is further down.
		{method: "GET", path: "/api/v1/users?size=0", as: "admin", status: 400},
		{method: "POST", path: "/api/v1/users", as: "admin", body: `{"name":"bob","password":"` + bobPassword + `","groups":["analysts"]}`, status: 201},
		{method: "POST", path: "/api/v1/users", as: "admin", body: `{"name":"a:b","password":"short","role":"x"}`, status: 400},
		{method: "POST", path: "/api/v1/users", as: "reader", body: `{"name":"eve","password":"` + bobPassword + `"}`, status: 403},
		{method: "POST", path: "/api/v1/users", as: "admin", contentType: "text/plain", body: `{}`, status: 415},
		{method: "GET", path: "/api/v1/users/admin", as: "reader", status: 403},
		{method: "PUT", path: "/api/v1/users/nobody", as: "admin", body: `{}`, status: 404},
		{method: "PATCH", path: "/api/v1/users/bob", as: "admin", contentType: "application/merge-patch+json", body: `{"password":null}`, status: 400},
		{method: "PATCH", path: "/api/v1/users/admin", as: "reader", contentType: "application/merge-patch+json", body: `{"admin":false}`, status: 403},
		{method: "GET", path: "/api/v1/users/bob", as: "bob", status: 200},
		{method: "GET", path: "/api/v1/apitokens", as: "bob", status: 200},
		{method: "POST", path: "/api/v1/apitokens", as: "bob", body: `{"name":"notebook","expiresAt":"2099-01-01T00:00:00Z"}`, status: 201, keep: "apitoken"},
		{method: "POST", path: "/api/v1/apitokens", as: "admin", body: `{"name":"ghost's","owner":"ghost"}`, status: 422},
		{method: "POST", path: "/api/v1/apitokens", as: "admin", body: `{"name":"x","expiresAt":"tomorrow"}`, status: 400},
		{method: "GET", path: "/api/v1/apitokens/{apitoken}", as: "bob", status: 200},
		{method: "DELETE", path: "/api/v1/apitokens/{apitoken}", as: "reader", status: 404},
		{method: "DELETE", path: "/api/v1/apitokens/{apitoken}", as: "bob", status: 204},
		{method: "PATCH", path: "/api/v1/users/bob", as: "bob", contentType: "application/merge-patch+json",
			body: `{"password":"bob's new longer password","currentPassword":"wrong"}`, status: 403},
		{method: "PATCH", path: "/api/v1/users/bob", as: "bob", contentType: "application/merge-patch+json",
			body: `{"password":"bob's new longer password","currentPassword":"` + bobPassword + `"}`, status: 200},
		{method: "GET", path: "/api/v1/users/bob", as: "bob", status: 401}, // the change ended the token
		{method: "DELETE", path: "/api/v1/users/reader", as: "admin", status: 409},
		{method: "DELETE", path: "/api/v1/users/bob", as: "admin", header: map[string]string{"If-Match": `"1"`}, status: 412},
		{method: "DELETE", path: "/api/v1/users/bob", as: "admin", status: 204},

		{method: "POST", path: "/webapi/traffic/api/v1/services/iris/species", body: `{"data":[` + harness.IrisRow + `]}`, status: 200},
		{method: "POST", path: "/webapi/traffic/api/v1/services/iris/species", body: `{"data":[{"sepal_length":"long"}]}`, status: 400},
		{method: "POST", path: "/webapi/traffic/api/v1/services/iris/species", contentType: "text/plain", body: `{"data":[]}`, status: 415},
		{method: "POST", path: "/webapi/traffic/api/v1/services/iris/nowhere", body: `{"data":[]}`, status: 404},
		{method: "POST", path: "/webapi/traffic/api/v1/services/slow/sleep?ms=10", body: `{"data":[{"x":1}]}`, status: 200},

		// A catalog process is for admins; a reader sees only its own jobs.
		{method: "POST", path: "/executions/jobs", as: "reader", body: `{"process":"iris","data":[` + harness.IrisRow + `]}`, status: 403},
		{method: "POST", path: "/executions/jobs", as: "admin", body: `{"process":"iris","data":[` + harness.IrisRow + `]}`, status: 201, keep: "done"},
		{method: "POST", path: "/executions/jobs", as: "admin", body: `{"process":"sleep","macros":{"ms":"600000"},"data":[{"x":1}]}`, status: 201, keep: "slow"},
		{method: "POST", path: "/executions/jobs", as: "admin", body: `{"process":"missing","data":[{"x":1}]}`, status: 422},
		{method: "GET", path: "/executions/jobs", as: "reader", status: 200},
		{method: "GET", path: "/executions/jobs/{slow}", as: "reader", status: 404},
		{method: "GET", path: "/executions/jobs?owner=admin", as: "admin", status: 200},
		{method: "GET", path: "/executions/jobs/{slow}", as: "admin", status: 200},
		{method: "GET", path: "/executions/jobs/{slow}/result", as: "admin", status: 409},
		{method: "POST", path: "/executions/jobs/{slow}/stop", as: "admin", status: 202},
		{method: "GET", path: "/executions/jobs/nowhere", as: "reader", status: 404},

		// Users and API tokens, and a protected group called with each kind
		// of credential.
		{method: "GET", path: "/api/v1/users", as: "admin", status: 200},
		{method: "GET", path: "/api/v1/users", as: "reader", status: 403},
		{method: "POST", path: "/api/v1/users", as: "admin", body: `{"name":"ann","password":"ann's password","groups":["analysts"]}`, status: 201},
		{method: "POST", path: "/api/v1/users", as: "admin", body: `{"name":"ann","password":"ann's password"}`, status: 409},
		{method: "POST", path: "/api/v1/users", as: "admin", body: `{"name":"short","password":"x"}`, status: 400},
		{method: "GET", path: "/api/v1/users/ann", as: "admin", status: 200},
		{method: "GET", path: "/api/v1/users/nobody", as: "admin", status: 404},
		{method: "PUT", path: "/api/v1/users/ann", as: "admin", body: `{"groups":["analysts","risk"]}`, header: map[string]string{"If-Match": `"1"`}, status: 200},
		{method: "PUT", path: "/api/v1/users/ann", as: "admin", body: `{"groups":["analysts"]}`, header: map[string]string{"If-Match": `"1"`}, status: 412},
		{method: "PATCH", path: "/api/v1/users/ann", as: "admin", contentType: "application/merge-patch+json", body: `{"groups":["analysts"]}`, status: 200},
		{method: "PUT", path: "/api/v1/users/reader", as: "admin", body: `{"groups":[]}`, status: 409}, // from the users file
		{method: "POST", path: "/api/v1/apitokens", as: "admin", body: `{"name":"ci","owner":"ann"}`, status: 201, keep: "token", keepField: "token"},
		{method: "POST", path: "/api/v1/apitokens", as: "admin", body: `{"name":"spare","owner":"ann","webApiGroups":["traffic"]}`, status: 201, keep: "spare"},
		{method: "POST", path: "/api/v1/apitokens", as: "reader", body: `{"name":"x","owner":"ann"}`, status: 403},
		{method: "GET", path: "/api/v1/apitokens", as: "admin", status: 200},
		{method: "GET", path: "/api/v1/apitokens/{spare}", as: "admin", status: 200},
		{method: "GET", path: "/api/v1/apitokens/{spare}", as: "reader", status: 404},
		{method: "DELETE", path: "/api/v1/apitokens/{spare}", as: "admin", status: 204},
		{method: "POST", path: "/api/v1/webapigroups", as: "admin", body: `{"name":"secure","auth":{"mode":"token","groups":["analysts"],"schemes":["basic","apitoken","bearer"]}}`, status: 201},
		{method: "PUT", path: "/api/v1/deployments/secure/iris", as: "admin", body: `{"enabled":true,"endpoints":[{"alias":"species","process":"iris"}]}`, status: 201},
		{method: "POST", path: "/webapi/secure/api/v1/services/iris/species", body: `{"data":[` + harness.IrisRow + `]}`, status: 401},
		{method: "POST", path: "/webapi/secure/api/v1/services/iris/species", header: basic("ann", "ann's password"), body: `{"data":[` + harness.IrisRow + `]}`, status: 200},
		{method: "POST", path: "/webapi/secure/api/v1/services/iris/species", header: basic("ann", "wrong"), body: `{"data":[` + harness.IrisRow + `]}`, status: 401},
		{method: "POST", path: "/webapi/secure/api/v1/services/iris/species", header: map[string]string{"Authorization": "apitoken {token}"}, body: `{"data":[` + harness.IrisRow + `]}`, status: 200},
		{method: "POST", path: "/webapi/secure/api/v1/services/iris/species", as: "reader", body: `{"data":[` + harness.IrisRow + `]}`, status: 403},
		{method: "POST", path: "/executions/jobs", header: basic("ann", "ann's password"), body: `{"endpoint":{"group":"secure","path":"iris","alias":"species"},"data":[` + harness.IrisRow + `]}`, status: 201},
		{method: "DELETE", path: "/api/v1/deployments/secure/iris", as: "admin", status: 204},
		{method: "DELETE", path: "/api/v1/users/ann", as: "reader", status: 403},
		{method: "DELETE", path: "/api/v1/users/ann", as: "admin", status: 204},
		{method: "DELETE", path: "/api/v1/users/ann", as: "admin", status: 404},

		// The refusals of the routes not refused above.
		{method: "GET", path: "/api/v1/apitokens", status: 401},
		{method: "GET", path: "/api/v1/deployments", status: 401},
		{method: "GET", path: "/api/v1/deployments/traffic/nowhere", as: "reader", status: 404},
		{method: "GET", path: "/api/v1/endpoints", header: map[string]string{"Authorization": "Bearer not.a.token"}, status: 401},
		{method: "GET", path: "/api/v1/models", status: 401},
		{method: "GET", path: "/api/v1/processes", status: 401},
		{method: "GET", path: "/api/v1/queues", status: 401},
		{method: "GET", path: "/api/v1/webapigroups", status: 401},
		{method: "GET", path: "/api/v1/webapigroups/nowhere", as: "reader", status: 404},
		{method: "PUT", path: "/api/v1/webapigroups/spare", as: "reader", body: `{"description":"Spare"}`, status: 403},
		{method: "GET", path: "/executions/jobs", status: 401},
		{method: "POST", path: "/executions/jobs/nowhere/stop", as: "admin", status: 404},

		{method: "DELETE", path: "/api/v1/deployments/traffic/slow", as: "admin", status: 204},
		{method: "DELETE", path: "/api/v1/deployments/traffic/iris", as: "admin", header: map[string]string{"If-Match": `"1"`}, status: 412},
		{method: "DELETE", path: "/api/v1/deployments/traffic/iris", as: "admin", status: 204},
		{method: "DELETE", path: "/api/v1/queues/traffic", as: "admin", status: 204},
	}
	for i, st := range steps {
		if st.as == "bob" && tokensBy["bob"] == "" {
			// bob exists from his first step on; his token is got once.
			tokensBy["bob"] = userToken(t, s, "bob", bobPassword)
		}
		status, body := send(t, client, s.Base, tokensBy[st.as], st, kept)
		if status != st.status {
			t.Errorf("step %d: %s %s as %q answered %d, want %d: %.300s", i, st.method, st.path, st.as, status, st.status, body)
			continue
		}
		if st.keep != "" {
			var got map[string]any
			field := "id"
			if st.keepField != "" {
				field = st.keepField
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("step %d: %v in %s", i, err, body)
			}
			v, _ := got[field].(string)
			if v == "" {
				t.Fatalf("step %d: no %s in %s", i, field, body)
			}
			kept[st.keep] = v
		}
	}

	// The finished jobs' results, once they have finished, and the jobs
	// as they ended.
	for _, job := range []string{"done", "model"} {
		var status int
		var body []byte
		if !testutil.Poll(time.Minute, func() bool {
			status, body = send(t, client, s.Base, tokensBy["admin"], step{method: "GET", path: "/executions/jobs/{" + job + "}/result"}, kept)
			// 409 is the only answer that may still change.
			return status != http.StatusConflict
		}) || status != http.StatusOK {
			t.Fatalf("the %s job's result: %d %s", job, status, body)
		}
	}
	for _, path := range []string{"/executions/jobs/{slow}", "/executions/jobs/{model}", "/executions/jobs?size=1000"} {
		if status, body := send(t, client, s.Base, tokensBy["admin"], step{method: "GET", path: path}, kept); status != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, status, body)
		}
	}

	if d := cmp.Diff(s.Conformance(t).Operations(), tr.Seen()); d != "" {
		t.Errorf("operations of the document (-) that no request reached (+: reached but not documented):\n%s", d)
	}
	// Each operation answered with a success and with an error, where
	// the document gives it both. "GET /x 404" is of the class "GET /x 4xx".
	class := func(response string) string { return response[:len(response)-2] + "xx" }
	seen := map[string]bool{}
	for _, r := range tr.SeenResponses() {
		seen[class(r)] = true
	}
	var unseen []string
	for _, r := range s.Conformance(t).Responses() {
		c := class(r)
		if (strings.HasSuffix(c, " 2xx") || strings.HasSuffix(c, " 4xx")) && !seen[c] && !slices.Contains(unseen, c) {
			unseen = append(unseen, c)
		}
	}
	if len(unseen) > 0 {
		t.Errorf("operations that answered no success or no error of those the document gives them:\n%s", strings.Join(unseen, "\n"))
	}
}

// exampleModel is the example model of docs/models.md, an XGBoost iris
// classifier saved as JSON.
func exampleModel(t *testing.T) string {
	t.Helper()
	return exampleFile(t, "iris.json")
}

// exampleFile is the file name of examples/models.
func exampleFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../examples/models", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// modelMultipart is an upload's multipart body, with the parts artifact
// and metadata, and its Content-Type.
func modelMultipart(artifact, metadata string) (contentType, body string) {
	return multipartForm(
		formPart{name: "artifact", filename: "iris.json", contentType: "application/octet-stream", body: artifact},
		formPart{name: "metadata", contentType: "application/json", body: metadata})
}

// formPart is one part of a multipart/form-data body.
type formPart struct {
	name, filename, contentType, body string // no filename or Content-Type when empty
}

// multipartForm is a multipart/form-data body of parts, and its
// Content-Type.
func multipartForm(parts ...formPart) (contentType, body string) {
	const boundary = "scorehub-model-upload"
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("--" + boundary + "\r\n" + `Content-Disposition: form-data; name="` + p.name + `"`)
		if p.filename != "" {
			b.WriteString(`; filename="` + p.filename + `"`)
		}
		b.WriteString("\r\n")
		if p.contentType != "" {
			b.WriteString("Content-Type: " + p.contentType + "\r\n")
		}
		b.WriteString("\r\n" + p.body + "\r\n")
	}
	b.WriteString("--" + boundary + "--\r\n")
	return "multipart/form-data; boundary=" + boundary, b.String()
}

// irisReferenceCSV is reference rows of the iris model as CSV: a few of
// each species, one with a missing value.
const irisReferenceCSV = `sepal_length,sepal_width,petal_length,petal_width
5.1,3.5,1.4,0.2
4.9,3.0,1.4,0.2
4.7,3.2,1.3,0.2
5.0,,1.4,0.2
7.0,3.2,4.7,1.4
6.4,3.2,4.5,1.5
6.9,3.1,4.9,1.5
5.5,2.3,4.0,1.3
6.3,3.3,6.0,2.5
5.8,2.7,5.1,1.9
7.1,3.0,5.9,2.1
5.9,3.0,5.1,1.8
`

// basic is the Authorization header of HTTP Basic.
func basic(user, password string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))}
}

// send sends one step with token and returns the status and the body.
func send(t *testing.T, client *http.Client, base, token string, st step, kept map[string]string) (int, []byte) {
	t.Helper()
	path := st.path
	for k, v := range kept {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	var body io.Reader
	if st.body != "" {
		body = strings.NewReader(st.body)
	}
	req, err := http.NewRequest(st.method, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := st.contentType; ct != "" {
		req.Header.Set("Content-Type", ct)
	} else if st.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range st.header {
		for name, value := range kept {
			v = strings.ReplaceAll(v, "{"+name+"}", value)
		}
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// readerPassword is the password of the user reader, who is no admin.
const readerPassword = "reader's password"

// readerFile writes an htpasswd file with the user reader and returns its
// path.
func readerFile(t *testing.T, dir string) string {
	t.Helper()
	// The least cost bcrypt allows: under the race detector a login at
	// the default cost takes seconds.
	hash, err := accounts.HashPassword(readerPassword, 10)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "users.htpasswd")
	if err := os.WriteFile(path, append(append([]byte("reader:"), hash...), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readerToken(t *testing.T, s *harness.Server) string {
	t.Helper()
	return userToken(t, s, "reader", readerPassword)
}

// bobPassword is the password of the user bob, whom the API creates.
const bobPassword = "bob's long enough password"

// userToken returns an idToken of the token service for user.
func userToken(t *testing.T, s *harness.Server, user, password string) string {
	t.Helper()
	status, got := s.Token(t, user, password)
	tok, _ := got["idToken"].(string)
	if status != http.StatusOK || tok == "" {
		t.Fatalf("token for %s: %d %v", user, status, got)
	}
	return tok
}

// The token routes answer as documented: a token, a wrong password, the
// published keys.
func TestTokenRoutesConform(t *testing.T) {
	t.Parallel()
	s := harness.Start(t, harness.Options{})
	if status, got := s.Token(t, "admin", harness.AdminPassword); status != 200 {
		t.Errorf("token service: %d %v", status, got)
	}
	if status, got := s.Token(t, "admin", "wrong"); status != 401 {
		t.Errorf("token service with a wrong password: %d %v", status, got)
	}
	res, err := s.Client(t).Get(s.Base + tokens.PathJWKS)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("JWKS: %d", res.StatusCode)
	}
}
