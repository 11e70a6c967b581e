package standalone

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

	"github.com/scorehub/scorehub"
	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/registry/process"
)

// exampleModel reads the example model of docs/models.md, an XGBoost iris
// classifier, and the metadata its upload carries.
func exampleModel(t testing.TB) ([]byte, process.ModelMetadata) {
	t.Helper()
	artifact, err := os.ReadFile("../../examples/models/iris.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../examples/models/iris.metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	var meta process.ModelMetadata
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
	checkIrisFormat(t, irisFormat{
		format: "pmml",
		file:   "../../registry/pmml/testdata/iris_forest.pmml",
		// Sent alone, a PMML file is XML, and comes back as XML.
		sentAs: "application/xml; charset=utf-8",
		sentBy: "application/xml",
	})
}

// TestONNXUpload: the server reads ONNX too. scikit-learn's iris forest,
// converted to ONNX by registry/onnx/testdata/export.py, reads one tensor
// of four features, which the upload's metadata names; it is stored as an
// onnx version and its endpoint answers its classes and confidences.
func TestONNXUpload(t *testing.T) {
	checkIrisFormat(t, irisFormat{
		format: "onnx",
		file:   "../../registry/onnx/testdata/iris_forest.onnx",
		meta: process.ModelMetadata{
			Label:    "species",
			Features: []string{"sepal_length", "sepal_width", "petal_length", "petal_width"},
		},
		// Sent alone, an ONNX file is bytes, and comes back as an .onnx file.
		sentAs: "application/octet-stream",
		sentBy: "application/octet-stream",
	})
}

// irisFormat is scikit-learn's iris forest written in one model format.
type irisFormat struct {
	format string // as the server names it, and the artifact's extension
	file   string
	meta   process.ModelMetadata // what its upload carries
	// sentAs is the Content-Type of the file sent alone, sentBy the one
	// it is downloaded with.
	sentAs, sentBy string
}

// checkIrisFormat uploads f's model with its metadata, checks that it is
// stored in f's format with the iris classes, deploys it and scores a row;
// then sends the file alone and downloads it again, the same bytes.
func checkIrisFormat(t *testing.T, f irisFormat) {
	t.Helper()
	name := strings.ToUpper(f.format)
	artifact, err := os.ReadFile(f.file)
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, t.TempDir())
	defer srv.Close()
	token := handlerToken(t, srv)
	w := upload(t, srv, token, artifact, f.meta)
	var v struct {
		Format  string   `json:"format"`
		Label   string   `json:"label"`
		Classes []string `json:"classes"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &v); w.Code != http.StatusCreated || err != nil || v.Format != f.format || v.Label != "species" ||
		!slices.Equal(v.Classes, []string{"setosa", "versicolor", "virginica"}) {
		t.Fatalf("the %s upload answered %d %s, want 201, format %s, label species and the iris classes", name, w.Code, w.Body, f.format)
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
		t.Errorf("the %s model endpoint answered %d %s, want setosa and a confidence per class", name, w.Code, body)
	}

	if w := serve(srv, "POST", "/api/v1/models/forest/versions", token, f.sentAs, artifact); w.Code != http.StatusCreated {
		t.Fatalf("the %s file sent as %s answered %d %s, want 201", name, f.sentAs, w.Code, w.Body)
	}
	w = serve(srv, "GET", "/api/v1/models/forest/versions/1/artifact", token, "", nil)
	if w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), artifact) {
		t.Fatalf("the %s artifact answered %d with %d bytes, want 200 and the %d bytes uploaded", name, w.Code, w.Body.Len(), len(artifact))
	}
	wantCD := `attachment; filename="forest-1.` + f.format + `"`
	if ct, cd := w.Header().Get("Content-Type"), w.Header().Get("Content-Disposition"); ct != f.sentBy || cd != wantCD {
		t.Errorf("the %s artifact is sent as %q, %q; want %s, forest-1.%s", name, ct, cd, f.sentBy, f.format)
	}
}

// upload posts artifact with meta as version of the model iris.
func upload(t *testing.T, srv *server, token string, artifact []byte, meta process.ModelMetadata) *httptest.ResponseRecorder {
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
	return idTokenOf(t, srv.handler, "admin", smokePassword)
}

// idTokenOf is an idToken of user's from h's token service.
func idTokenOf(t testing.TB, h http.Handler, user, password string) string {
	t.Helper()
	r := httptest.NewRequest("GET", "/api/rest/tokenservice", nil)
	r.SetBasicAuth(user, password)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var got struct{ IDToken string }
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || got.IDToken == "" {
		t.Fatalf("token service: %d %s", w.Code, w.Body)
	}
	return got.IDToken
}

// TestManyClassModelEndpoint replays a small anonymous request to the
// endpoint of an uploaded model of 1,000 classes: 3,000 rows, a body of
// about 54 KB, would make an answer of 3,000 × 1,001 result values (about
// 120 MB). The server refuses it with 413 too_many_result_cells naming the
// rows, the result columns and the limit, and answers rows within it.
func TestManyClassModelEndpoint(t *testing.T) {
	srv := newTestServer(t, t.TempDir())
	defer srv.Close()
	token := handlerToken(t, srv)
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	pw, _ := mw.CreateFormFile("artifact", "classes.json")
	pw.Write(modeltest.XGBoostClasses(1000))
	mw.Close()
	for _, r := range []struct{ method, path, contentType, body string }{
		{"POST", "/api/v1/models/classes/versions", mw.FormDataContentType(), b.String()},
		{"PUT", "/api/v1/models/classes/aliases/production", "application/json", `{"version":1}`},
		{"POST", "/api/v1/deployments", "application/json", `{"group":"DEFAULT","path":"wide","endpoints":[{"alias":"classes","model":"classes@production"}]}`},
	} {
		if w := serve(srv, r.method, r.path, token, r.contentType, []byte(r.body)); w.Code != http.StatusCreated {
			t.Fatalf("%s %s: %d %s", r.method, r.path, w.Code, w.Body)
		}
	}
	rows := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString(`{"data":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"f0":` + strconv.Itoa(i%9) + `.5,"f1":` + strconv.Itoa(i%4) + `}`)
		}
		b.WriteString(`]}`)
		return b.Bytes()
	}

	w := serve(srv, "POST", "/webapi/DEFAULT/api/v1/services/wide/classes", "", "application/json", rows(3000))
	var got struct {
		Error struct{ Type, Message string }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusRequestEntityTooLarge || got.Error.Type != "too_many_result_cells" {
		t.Fatalf("3,000 rows to a 1,000-class model: %d %.200s, want 413 too_many_result_cells", w.Code, w.Body)
	}
	for _, figure := range []string{"3000 rows", "1001 result columns", strconv.Itoa(scorehub.DefaultMaxResultCells)} {
		if !strings.Contains(got.Error.Message, figure) {
			t.Errorf("message %q does not name %q", got.Error.Message, figure)
		}
	}
	w = serve(srv, "POST", "/webapi/DEFAULT/api/v1/services/wide/classes", "", "application/json", rows(10))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"confidence(999)":`) {
		t.Errorf("10 rows: %d %.200s, want their answers", w.Code, w.Body)
	}
}
