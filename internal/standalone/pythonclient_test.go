package standalone

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/oidctest"
	"github.com/scorehub/scorehub/tokens"
)

// pandasIris is what the AI Hub Python client sends for three iris rows:
// DataFrame.to_json(orient="table"), as pandas 1.x and 2.x write it, with
// the index as a column of its own and 6.0 written as a float.
const pandasIris = `{"schema":{"fields":[{"name":"index","type":"integer"},` +
	`{"name":"sepal_length","type":"number"},{"name":"sepal_width","type":"number"},` +
	`{"name":"petal_length","type":"number"},{"name":"petal_width","type":"number"}],` +
	`"primaryKey":["index"],"pandas_version":"1.4.0"},"data":[` +
	`{"index":0,"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2},` +
	`{"index":1,"sepal_length":6.4,"sepal_width":3.2,"petal_length":4.5,"petal_width":1.5},` +
	`{"index":2,"sepal_length":6.3,"sepal_width":3.3,"petal_length":6.0,"petal_width":2.5}]}`

// pythonHeaders are the headers of the Python client's scoring POST
// (WebApi.predict, through python-requests 2.31.0) with the Authorization
// header auth; "" for the client without authentication. Content-type is
// spelled as the client spells it.
func pythonHeaders(auth string) http.Header {
	h := http.Header{
		"User-Agent":      {"python-requests/2.31.0"},
		"Accept-Encoding": {"gzip, deflate"},
		"Accept":          {"*/*"},
		"Connection":      {"keep-alive"},
		"Content-type":    {"application/json"},
	}
	if auth != "" {
		h["Authorization"] = []string{auth}
	}
	return h
}

// pythonClient sends requests as the Python client does: exactly its
// headers, nothing Go would add, and the answer decompressed as requests
// does when the server compressed it.
type pythonClient struct {
	t      *testing.T
	client *http.Client
}

// newPythonClient returns a pythonClient whose connections close when the
// test ends.
func newPythonClient(t *testing.T) pythonClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return pythonClient{t: t, client: &http.Client{Transport: tr}}
}

// post sends body to url with the Python client's headers and auth, and
// returns the answer with its body read (and decompressed).
func (c pythonClient) post(url, auth, body string) (*http.Response, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header = pythonHeaders(auth)
	res, err := c.client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var r io.Reader = res.Body
	switch res.Header.Get("Content-Encoding") {
	case "":
	case "gzip":
		if r, err = gzip.NewReader(res.Body); err != nil {
			c.t.Fatalf("gzip answer: %v", err)
		}
	case "deflate":
		if r, err = zlib.NewReader(res.Body); err != nil {
			c.t.Fatalf("deflate answer: %v", err)
		}
	default:
		c.t.Fatalf("answer in Content-Encoding %q, which the client did not accept", res.Header.Get("Content-Encoding"))
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		c.t.Fatal(err)
	}
	return res, raw
}

// TestPythonClientHeadersOnTheWire checks that pythonClient sends what the
// Python client sends, and nothing more, so that the server is tested with
// the real client's request.
func TestPythonClientHeadersOnTheWire(t *testing.T) {
	type request struct {
		header http.Header
		body   []byte
	}
	seen := make(chan request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Clone()
		h.Set("Host", r.Host)
		body, _ := io.ReadAll(r.Body)
		seen <- request{h, body}
	}))
	defer srv.Close()
	newPythonClient(t).post(srv.URL+"/webapi/models/api/v1/services/iris/classify", "apitoken abc", pandasIris)
	r := <-seen
	got, gotBody := r.header, r.body
	want := http.Header{
		"Host":            {strings.TrimPrefix(srv.URL, "http://")},
		"User-Agent":      {"python-requests/2.31.0"},
		"Accept-Encoding": {"gzip, deflate"},
		"Accept":          {"*/*"},
		"Connection":      {"keep-alive"},
		"Content-Type":    {"application/json"},
		"Content-Length":  {fmt.Sprint(len(pandasIris))},
		"Authorization":   {"apitoken abc"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers on the wire (-python-requests +sent):\n%s", diff)
	}
	if string(gotBody) != pandasIris {
		t.Errorf("body on the wire %q, want the pandas body", gotBody)
	}
}

// TestPythonClientModes calls a protected endpoint as the AI Hub Python
// client does in each of its authentication modes: basic (a scorehub user
// and password), apitoken (a scorehub API token) and oauth (an access token
// the OpenID provider issued from an offline token, as Keycloak does for
// AI Hub). Each gets the three pandas rows back, echoed as sent, with the
// classifier's columns; wrong credentials and a provider user outside the
// allowed user group are refused with a JSON error, which the client
// reports with its status.
func TestPythonClientModes(t *testing.T) {
	op := oidctest.Start(t, filepath.Join("..", "..", "tokens", "testdata", "oidc"))
	base, stop := startInProcess(t, io.Discard,
		"-oidc-issuer", op.Issuer, "-oidc-audience", op.Audience,
		"-oidc-clients", op.ClientID, "-oidc-token-type", "at+jwt")
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	if !documentsExchange(t, base) {
		t.Errorf("the OpenAPI document leaves out %s, which a server with -oidc-issuer serves", tokens.PathExchange)
	}
	a := api{t: t, base: base}
	admin := "Bearer " + login(t, base, "admin", smokePassword)
	// The provider puts alice in /analysts and /scoring, bob in /analysts
	// only; scorehub drops the leading slash.
	a.must(201, "POST", "/api/v1/webapigroups", admin, `{"name":"models","auth":{"mode":"token","groups":["scoring"]}}`)
	a.must(201, "POST", "/api/v1/deployments", admin,
		`{"group":"models","path":"iris","enabled":true,"endpoints":[{"alias":"classify","process":"iris"}]}`)
	a.must(201, "POST", "/api/v1/users", admin, `{"name":"carol","password":"carol-password-1","groups":["scoring"]}`)
	apiToken, _ := a.apiToken(admin, "carol", "")
	aliceOffline := op.OfflineToken(t, "alice", "alice-password")
	bobOffline := op.OfflineToken(t, "bob", "bob-password")

	url := base + "/webapi/models/api/v1/services/iris/classify"
	py := newPythonClient(t)
	// oauth is the header of the client's oauth mode: it trades the
	// offline token for a fresh access token before the call.
	oauth := func(offline string) func() string {
		return func() string { return "Bearer " + op.AccessToken(t, offline) }
	}
	fixed := func(auth string) func() string { return func() string { return auth } }

	for _, tc := range []struct {
		name string
		auth func() string
	}{
		{"basic", fixed(basicHeader("carol", "carol-password-1"))},
		{"apitoken", fixed(apiToken)},
		{"oauth", oauth(aliceOffline)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, raw := py.post(url, tc.auth(), pandasIris)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", res.StatusCode, raw)
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			checkIrisRows(t, raw)
		})
	}

	for _, tc := range []struct {
		name   string
		auth   func() string
		status int
	}{
		{"no credentials", fixed(""), http.StatusUnauthorized},
		{"basic, wrong password", fixed(basicHeader("carol", "not-her-password")), http.StatusUnauthorized},
		{"apitoken, unknown token", fixed("apitoken scorehub_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), http.StatusUnauthorized},
		{"oauth, the offline token itself", fixed("Bearer " + aliceOffline), http.StatusUnauthorized},
		{"oauth, a user outside the group", oauth(bobOffline), http.StatusForbidden},
	} {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			res, raw := py.post(url, tc.auth(), pandasIris)
			if res.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %s", res.StatusCode, tc.status, raw)
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			// The client parses every answer as JSON before it looks at
			// the status; a refusal names its type and says why.
			var body struct {
				Error struct{ Type, Message string }
			}
			if err := json.Unmarshal(raw, &body); err != nil || body.Error.Type == "" || body.Error.Message == "" {
				t.Errorf("refusal %q is not a JSON error with type and message (%v)", raw, err)
			}
		})
	}
}

// checkIrisRows checks the answer to pandasIris as the client reads it: a
// "data" list of three rows, each with the input columns as sent, in their
// order, then the prediction and one confidence per species.
func checkIrisRows(t *testing.T, raw []byte) {
	t.Helper()
	var answer struct{ Data []json.RawMessage }
	if err := json.Unmarshal(raw, &answer); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, raw)
	}
	inputs := []string{"index", "sepal_length", "sepal_width", "petal_length", "petal_width"}
	wantKeys := append(slices.Clone(inputs), "prediction(species)", "confidence(setosa)", "confidence(versicolor)", "confidence(virginica)")
	sent := []map[string]string{
		{"index": "0", "sepal_length": "5.1", "sepal_width": "3.5", "petal_length": "1.4", "petal_width": "0.2"},
		{"index": "1", "sepal_length": "6.4", "sepal_width": "3.2", "petal_length": "4.5", "petal_width": "1.5"},
		{"index": "2", "sepal_length": "6.3", "sepal_width": "3.3", "petal_length": "6.0", "petal_width": "2.5"},
	}
	species := []string{"setosa", "versicolor", "virginica"}
	if len(answer.Data) != len(sent) {
		t.Fatalf("%d rows, want %d: %s", len(answer.Data), len(sent), raw)
	}
	for i, row := range answer.Data {
		keys, values := objectInOrder(t, row)
		if diff := cmp.Diff(wantKeys, keys); diff != "" {
			t.Errorf("row %d columns (-want +got):\n%s", i, diff)
			continue
		}
		for _, k := range inputs {
			if got := string(values[k]); got != sent[i][k] {
				t.Errorf("row %d: %s echoed as %s, want %s as sent", i, k, got, sent[i][k])
			}
		}
		var prediction string
		if err := json.Unmarshal(values["prediction(species)"], &prediction); err != nil || prediction != species[i] {
			t.Errorf("row %d: prediction(species) %s, want %q", i, values["prediction(species)"], species[i])
		}
		var sum float64
		for _, s := range species {
			var c float64
			if err := json.Unmarshal(values["confidence("+s+")"], &c); err != nil || c < 0 || c > 1 {
				t.Errorf("row %d: confidence(%s) %s is not a probability", i, s, values["confidence("+s+")"])
			}
			sum += c
		}
		if math.Abs(sum-1) > 1e-6 {
			t.Errorf("row %d: confidences sum to %v, want 1", i, sum)
		}
	}
}

// objectInOrder returns the keys of the JSON object raw in their order and
// each value as written.
func objectInOrder(t *testing.T, raw json.RawMessage) ([]string, map[string]json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("row %s is not an object", raw)
	}
	var keys []string
	values := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("row %s: %v", raw, err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("row %s: %v", raw, err)
		}
		keys = append(keys, key)
		values[key] = v
	}
	return keys, values
}
