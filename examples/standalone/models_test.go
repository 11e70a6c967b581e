package main

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry"
)

// exampleModel reads the README's example model, an XGBoost iris
// classifier, and the metadata its upload carries.
func exampleModel(t testing.TB) ([]byte, registry.ModelMetadata) {
	t.Helper()
	artifact, err := os.ReadFile("../models/iris.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../models/iris.metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	var meta registry.ModelMetadata
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatalf("iris.metadata.json: %v", err)
	}
	return artifact, meta
}

// TestModelUpload: the server reads XGBoost files, keeps them in its data
// directory across a restart, and refuses an upload past -max-model-bytes
// with a 413.
func TestModelUpload(t *testing.T) {
	dir := t.TempDir()
	artifact, meta := exampleModel(t)
	start := func(args ...string) *server {
		t.Helper()
		return newTestServer(t, dir, args...)
	}

	srv := start("-max-model-bytes", strconv.Itoa(len(artifact)-1))
	token := handlerToken(t, srv)
	if w := upload(t, srv, token, artifact, meta); w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), `"body_too_large"`) {
		t.Errorf("an upload past -max-model-bytes answered %d %s, want 413 body_too_large", w.Code, w.Body)
	}
	srv.Close()

	srv = start()
	token = handlerToken(t, srv)
	if w := upload(t, srv, token, artifact, meta); w.Code != http.StatusCreated {
		t.Fatalf("the upload answered %d %s, want 201", w.Code, w.Body)
	}
	for _, r := range []struct{ method, path, body string }{
		{"PUT", "/api/v1/models/iris/aliases/production", `{"version":1}`},
		{"POST", "/api/v1/deployments", `{"group":"DEFAULT","path":"flowers","endpoints":[{"alias":"species","model":"iris@production"}]}`},
	} {
		if w := serve(srv, r.method, r.path, token, "application/json", []byte(r.body)); w.Code != http.StatusCreated {
			t.Fatalf("%s %s: %d %s", r.method, r.path, w.Code, w.Body)
		}
	}
	srv.Close()

	srv = start()
	defer srv.Close()
	w := serve(srv, "POST", "/webapi/DEFAULT/api/v1/services/flowers/species", "", "application/json", []byte(`{"data":[`+irisRow+`]}`))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"prediction(species)":"setosa"`) {
		t.Errorf("after a restart the model endpoint answered %d %s, want setosa", w.Code, w.Body)
	}
}

// TestPMMLUpload: the server reads PMML too. scikit-learn's iris forest,
// written as PMML by registry/pmml/testdata/export.py, is stored as a pmml
// version and its endpoint answers its classes and confidences.
func TestPMMLUpload(t *testing.T) {
	artifact, err := os.ReadFile("../../registry/pmml/testdata/iris_forest.pmml")
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, t.TempDir())
	defer srv.Close()
	token := handlerToken(t, srv)
	w := upload(t, srv, token, artifact, registry.ModelMetadata{})
	var v struct {
		Format  string   `json:"format"`
		Label   string   `json:"label"`
		Classes []string `json:"classes"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &v); w.Code != http.StatusCreated || err != nil || v.Format != "pmml" || v.Label != "species" {
		t.Fatalf("the PMML upload answered %d %s, want 201, format pmml and label species", w.Code, w.Body)
	}
	for _, r := range []struct{ method, path, body string }{
		{"PUT", "/api/v1/models/iris/aliases/production", `{"version":1}`},
		{"POST", "/api/v1/deployments", `{"group":"DEFAULT","path":"flowers","endpoints":[{"alias":"species","model":"iris@production"}]}`},
	} {
		if w := serve(srv, r.method, r.path, token, "application/json", []byte(r.body)); w.Code != http.StatusCreated {
			t.Fatalf("%s %s: %d %s", r.method, r.path, w.Code, w.Body)
		}
	}
	w = serve(srv, "POST", "/webapi/DEFAULT/api/v1/services/flowers/species", "", "application/json", []byte(`{"data":[`+irisRow+`]}`))
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, `"prediction(species)":"setosa"`) || !strings.Contains(body, `"confidence(virginica)":`) {
		t.Errorf("the PMML model endpoint answered %d %s, want setosa and a confidence per class", w.Code, body)
	}

	// Sent alone, a PMML file is XML, and comes back as XML.
	if w := serve(srv, "POST", "/api/v1/models/forest/versions", token, "application/xml; charset=utf-8", artifact); w.Code != http.StatusCreated {
		t.Fatalf("the PMML file sent as application/xml answered %d %s, want 201", w.Code, w.Body)
	}
	w = serve(srv, "GET", "/api/v1/models/forest/versions/1/artifact", token, "", nil)
	if w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), artifact) {
		t.Fatalf("the PMML artifact answered %d with %d bytes, want 200 and the %d bytes uploaded", w.Code, w.Body.Len(), len(artifact))
	}
	if ct, cd := w.Header().Get("Content-Type"), w.Header().Get("Content-Disposition"); ct != "application/xml" || cd != `attachment; filename="forest-1.pmml"` {
		t.Errorf("the PMML artifact is sent as %q, %q; want application/xml, forest-1.pmml", ct, cd)
	}
}

// TestONNXUpload: the server reads ONNX too. scikit-learn's iris forest,
// converted to ONNX by registry/onnx/testdata/export.py, reads one tensor
// of four features, which the upload's metadata names; it is stored as an
// onnx version and its endpoint answers its classes and confidences.
func TestONNXUpload(t *testing.T) {
	artifact, err := os.ReadFile("../../registry/onnx/testdata/iris_forest.onnx")
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, t.TempDir())
	defer srv.Close()
	token := handlerToken(t, srv)
	w := upload(t, srv, token, artifact, registry.ModelMetadata{
		Label:    "species",
		Features: []string{"sepal_length", "sepal_width", "petal_length", "petal_width"},
	})
	var v struct {
		Format  string   `json:"format"`
		Label   string   `json:"label"`
		Classes []string `json:"classes"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &v); w.Code != http.StatusCreated || err != nil || v.Format != "onnx" || v.Label != "species" ||
		!slices.Equal(v.Classes, []string{"setosa", "versicolor", "virginica"}) {
		t.Fatalf("the ONNX upload answered %d %s, want 201, format onnx, label species and the iris classes", w.Code, w.Body)
	}
	for _, r := range []struct{ method, path, body string }{
		{"PUT", "/api/v1/models/iris/aliases/production", `{"version":1}`},
		{"POST", "/api/v1/deployments", `{"group":"DEFAULT","path":"flowers","endpoints":[{"alias":"species","model":"iris@production"}]}`},
	} {
		if w := serve(srv, r.method, r.path, token, "application/json", []byte(r.body)); w.Code != http.StatusCreated {
			t.Fatalf("%s %s: %d %s", r.method, r.path, w.Code, w.Body)
		}
	}
	w = serve(srv, "POST", "/webapi/DEFAULT/api/v1/services/flowers/species", "", "application/json", []byte(`{"data":[`+irisRow+`]}`))
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, `"prediction(species)":"setosa"`) || !strings.Contains(body, `"confidence(virginica)":`) {
		t.Errorf("the ONNX model endpoint answered %d %s, want setosa and a confidence per class", w.Code, body)
	}

	// Sent alone, an ONNX file is bytes, and comes back as an .onnx file.
	if w := serve(srv, "POST", "/api/v1/models/forest/versions", token, "application/octet-stream", artifact); w.Code != http.StatusCreated {
		t.Fatalf("the ONNX file sent as application/octet-stream answered %d %s, want 201", w.Code, w.Body)
	}
	w = serve(srv, "GET", "/api/v1/models/forest/versions/1/artifact", token, "", nil)
	if w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), artifact) {
		t.Fatalf("the ONNX artifact answered %d with %d bytes, want 200 and the %d bytes uploaded", w.Code, w.Body.Len(), len(artifact))
	}
	if ct, cd := w.Header().Get("Content-Type"), w.Header().Get("Content-Disposition"); ct != "application/octet-stream" || cd != `attachment; filename="forest-1.onnx"` {
		t.Errorf("the ONNX artifact is sent as %q, %q; want application/octet-stream, forest-1.onnx", ct, cd)
	}
}

// upload posts artifact with meta as version of the model iris.
func upload(t *testing.T, srv *server, token string, artifact []byte, meta registry.ModelMetadata) *httptest.ResponseRecorder {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	pw, _ := mw.CreateFormFile("artifact", "iris.json")
	pw.Write(artifact)
	pw, _ = mw.CreateFormField("metadata")
	json.NewEncoder(pw).Encode(meta)
	mw.Close()
	return serve(srv, "POST", "/api/v1/models/iris/versions", token, mw.FormDataContentType(), b.Bytes())
}

func serve(srv *server, method, path, token, contentType string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	srv.handler.ServeHTTP(w, r)
	return w
}

// handlerToken is an idToken of the admin's from srv's token service.
func handlerToken(t testing.TB, srv *server) string {
	t.Helper()
	r := httptest.NewRequest("GET", "/api/rest/tokenservice", nil)
	r.SetBasicAuth("admin", smokePassword)
	w := httptest.NewRecorder()
	srv.handler.ServeHTTP(w, r)
	var got struct{ IDToken string }
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || got.IDToken == "" {
		t.Fatalf("token service: %d %s", w.Code, w.Body)
	}
	return got.IDToken
}
