package management_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/xgboost"
)

// FuzzUploadModelVersion sends arbitrary model files and metadata to POST
// /api/v1/models/{name}/versions: when raw is false as multipart/form-data
// with the part "artifact" and, unless empty, the part "metadata"; when raw
// as the file alone, application/octet-stream, with metadata as the query
// string. Each input goes to a model that does not exist and to one that
// holds a version already. Every answer is one the route documents for a
// body alone (200, 201, 400, 413, 415, 422; never a 5xx) with an error type
// of that status; a refused upload leaves the model as it was, or absent; an
// accepted one is listed with the SHA-256 of the bytes sent, and sent again
// answers the same version, 200, and changes nothing.
func FuzzUploadModelVersion(f *testing.F) {
	art := []byte(linear(0)) // bias + 2·age − income
	xgb, err := os.ReadFile(filepath.Join("..", "registry", "xgboost", "testdata", "iris_softprob.ubj"))
	if err != nil {
		f.Fatal(err)
	}
	xgbJSON, err := os.ReadFile(filepath.Join("..", "registry", "xgboost", "testdata", "iris_forest.json"))
	if err != nil {
		f.Fatal(err)
	}
	const iris = `"label":"species","classes":["setosa","versicolor","virginica"],` +
		`"features":["sepal_length","sepal_width","petal_length","petal_width"]`
	for _, s := range []struct {
		metadata string
		artifact []byte
		raw      bool
	}{
		// Verification rows the model reproduces, as a classifier and as a
		// regressor, and rows it does not.
		{`{"label":"churn","classes":["stay","leave"],"description":"Logistic","verification":{"rows":[{"age":1,"income":2},{"age":0,"income":0},{"income":-3}],` +
			`"expected":["stay",{"confidence(leave)":0.5,"prediction(churn)":"stay"},[0.04742587317756678,0.9525741268224334]],"tolerance":1e-9}}`, art, false},
		{`{"label":"spend","features":["tenure","visits"],"verification":{"rows":[{"tenure":3,"visits":1},{"tenure":null}],"expected":[5,0]}}`, art, false},
		{`{"classes":["stay","leave"],"verification":{"rows":[{"age":0,"income":2},{"age":5,"income":0}],"expected":["stay","stay"]}}`, art, false},
		{`{"verification":{"rows":[{"age":1}],"expected":[3],"tolerance":0.5}}`, art, false},
		{`{}`, art, false},
		{``, art, false},
		{`label=churned&features=tenure,spend&description=First+try`, art, true},
		{`classes=stay,leave`, art, true},
		{``, art, true},
		// Files of no format, or that run code, or none at all.
		{`{"label":"x"}`, []byte("\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00"), false},
		{``, []byte("\x80\x04\x95\x10\x00\x00\x00"), true},
		{`{}`, []byte("not a model at all"), false},
		{``, []byte("PK\x03\x04garbage"), true},
		{`{}`, nil, false},
		{``, nil, true},
		{`{"learner":{}}`, []byte(`{"learner":{}}`), false},
		// Files that start well and go wrong.
		{``, append(art[:len(art):len(art)], "slope 3\n"...), true},
		{``, []byte("scorehub-test-linear v1\nbias 1\nweight age 1\nweight age 2\n"), true},
		{``, []byte("scorehub-test-linear v1\nbias NaN\nweight age +Inf\n"), true},
		{`features=a,b,c`, art, true},
		{`classes=a,b,c`, art, true},
		// Metadata that is not what the route reads.
		{`{"label":"a","colour":1}`, art, false},
		{`{"verification":{"rows":[],"expected":[],"x":1}}`, art, false},
		{`{"label":"a","label":"b"}`, art, false},
		{`{"label":3,"classes":"stay,leave","features":[1,2]}`, art, false},
		{`{"classes":["a","a"]}`, art, false},
		{`{"features":["age",""]}`, art, false},
		{`{"label":{"label":{"label":` + strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000) + `}}}`, art, false},
		{`{"verification":{"rows":` + strings.Repeat(`[`, 5000) + strings.Repeat(`]`, 5000) + `,"expected":[]}}`, art, false},
		{`{"verification":{"rows":[{"age":1e400}],"expected":[1e400],"tolerance":1e400}}`, art, false},
		{`{"verification":{"rows":[{"age":123456789012345678901234567890}],"expected":[-1e308],"tolerance":1.7976931348623157e308}}`, art, false},
		{"{\"label\":\"\xff\xfe\",\"description\":\"\xc3\x28\"}", art, false},
		{"label=\xff\xfe&description=\xc3\x28", art, true},
		{`{"verification":{"rows":[{"age":1},{"age":"old"},{"age":true},{"age":null}],"expected":[1,"a",[0.5],{"b":1}]}}`, art, false},
		{`{"verification":{"rows":[{"age":[1]},{"income":{"a":1}}],"expected":[1,2]}}`, art, false},
		{`{"verification":{"rows":{"age":1},"expected":[1]}}`, art, false},
		{`{"verification":{"rows":[{"age":1}],"expected":[true,null]}}`, art, false},
		{`{"verification":null}`, art, false},
		{`{"label":"a"} trailing`, art, false},
		{`labels=x`, art, true},
		{`label=x&label=y`, art, true},
		{`classes=a,a`, art, true},
		{`features=age,`, art, true},
		{`description=100%`, art, true},
		{`label=a;b`, art, true},
		// A real XGBoost model, with and without what it lacks.
		{`{` + iris + `}`, xgb, false},
		{`{` + iris + `,"verification":{"rows":[{"sepal_length":6.8,"sepal_width":2.8,"petal_length":4.8,"petal_width":1.4}],"expected":["setosa"]}}`, xgb, false},
		{``, xgb, true},
		{`label=species&classes=setosa,versicolor,virginica`, xgbJSON, true},
		{`{"features":["a"]}`, xgbJSON[:len(xgbJSON)/2], false},
		// UBJSON's strings are bytes: a feature name that is not UTF-8.
		{``, bytes.Replace(xgb, []byte("sepal_length"), []byte("sepal_lengt\xff"), 1), true},
	} {
		f.Add([]byte(s.metadata), s.artifact, s.raw)
	}
	fx := newFixture(f, withoutJobs(), withModelFormat(xgboost.Format{}))
	baseline := []byte(linear(0.5))

	f.Fuzz(func(t *testing.T, metadata, artifact []byte, raw bool) {
		// Both models as they were before any input, so that an input's
		// answers do not depend on the inputs before it.
		for _, name := range []string{"fresh", "kept"} {
			if err := fx.reg.DeleteModel(context.Background(), name, registry.AnyRevision); err != nil && !errors.Is(err, registry.ErrNotFound) {
				t.Fatal(err)
			}
		}
		fx.addModel(t, "kept", string(baseline), process.ModelMetadata{Label: "kept"})

		for _, name := range []string{"fresh", "kept"} {
			rq := uploadRequest(t, fx, name, metadata, artifact, raw)
			before := fx.do(t, request{method: http.MethodGet, path: "/api/v1/models/" + name, token: fx.admin})
			r := fx.do(t, rq)
			after := fx.do(t, request{method: http.MethodGet, path: "/api/v1/models/" + name, token: fx.admin})
			input := func() string { return describeUpload(name, metadata, artifact, raw) }
			checkUploadAnswer(t, r, input)
			if raw && !readableQuery(queryOf(metadata)) && r.errorType() != string(problem.InvalidParameter) {
				t.Fatalf("%s, a query string that does not decode, answered %d %q", input(), r.status, r.errorType())
			}

			if r.status != http.StatusOK && r.status != http.StatusCreated {
				if after.status != before.status || !bytes.Equal(after.body, before.body) {
					t.Fatalf("%s answered %d %q but changed the model from %d %s to %d %s",
						input(), r.status, r.errorType(), before.status, before.body, after.status, after.body)
				}
				continue
			}
			if sent := sentMetadata(metadata, raw); r.json["description"] != sent.Description || sent.Label != "" && r.json["label"] != sent.Label {
				t.Fatalf("%s answered a version with other metadata than sent (%+v): %s", input(), sent, r.body)
			}
			if r.json["sha256"] != sha(string(artifact)) || r.json["size"] != float64(len(artifact)) || r.json["model"] != name {
				t.Fatalf("%s answered a version of other bytes or another model: %s", input(), r.body)
			}
			after.want(t, http.StatusOK, "")
			listed := listedVersions(after)
			var shown any
			for _, v := range listed {
				if v.(map[string]any)["version"] == r.json["version"] {
					shown = v
				}
			}
			if d := cmp.Diff(shown, any(r.json)); d != "" {
				t.Fatalf("%s answered a version GET does not list (-GET +upload):\n%s", input(), d)
			}
			grew := len(listed) - len(listedVersions(before))
			if r.status == http.StatusCreated && grew != 1 || r.status == http.StatusOK && !bytes.Equal(after.body, before.body) {
				t.Fatalf("%s answered %d and the model went from %s to %s", input(), r.status, before.body, after.body)
			}

			again := fx.do(t, rq)
			again.want(t, http.StatusOK, "")
			if d := cmp.Diff(r.json, again.json); d != "" {
				t.Fatalf("%s sent twice answered another version (-once +twice):\n%s", input(), d)
			}
			if last := fx.do(t, request{method: http.MethodGet, path: "/api/v1/models/" + name, token: fx.admin}); !bytes.Equal(last.body, after.body) {
				t.Fatalf("%s sent twice changed the model from %s to %s", input(), after.body, last.body)
			}
		}
	})
}

// uploadErrorTypes are the error types the upload route answers for a
// body alone, by status.
var uploadErrorTypes = map[int][]string{
	http.StatusBadRequest: {string(problem.MalformedJSON), string(problem.InvalidRequest), string(problem.InvalidParameter),
		string(problem.ValidationFailed), string(problem.DuplicateKey), string(problem.InvalidValue), string(problem.MixedTypes)},
	http.StatusRequestEntityTooLarge: {string(problem.BodyTooLarge), string(problem.TooManyRows), string(problem.TooManyColumns), string(problem.TooManyCells)},
	http.StatusUnsupportedMediaType:  {string(problem.UnsupportedModelFormat)},
	http.StatusUnprocessableEntity:   {string(problem.InvalidModel), string(problem.ModelLimitExceeded), string(problem.VerificationFailed)},
}

// checkUploadAnswer fails the test unless r is a version (200, 201) or a
// JSON error the route documents for a body alone, whose type is one of
// its status, with a message.
func checkUploadAnswer(t *testing.T, r response, input func() string) {
	t.Helper()
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("%s answered %d as %q: %s", input(), r.status, r.header.Get("Content-Type"), r.body)
	}
	if r.status == http.StatusOK || r.status == http.StatusCreated {
		if r.json["error"] != nil {
			t.Fatalf("%s answered %d with an error: %s", input(), r.status, r.body)
		}
		return
	}
	types, ok := uploadErrorTypes[r.status]
	if !ok || !slices.Contains(types, r.errorType()) || httperr.StatusOf(problem.Code(r.errorType())) != r.status {
		t.Fatalf("%s answered %d %q; body: %s", input(), r.status, r.errorType(), r.body)
	}
	if msg, _ := r.errorField("message").(string); msg == "" {
		t.Fatalf("%s answered %d with no message: %s", input(), r.status, r.body)
	}
}

// uploadRequest is the upload of artifact to model name: a multipart form
// with the metadata part unless empty, or when raw the file alone with
// metadata as its query string.
func uploadRequest(t *testing.T, fx *fixture, name string, metadata, artifact []byte, raw bool) request {
	path := "/api/v1/models/" + name + "/versions"
	if raw {
		if q := queryOf(metadata); q != "" {
			path += "?" + q
		}
		return request{method: http.MethodPost, path: path, token: fx.admin, body: string(artifact), contentType: octetStream}
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	pw, err := w.CreateFormFile("artifact", "model.bin")
	if err == nil {
		_, err = pw.Write(artifact)
	}
	if err == nil && len(metadata) > 0 {
		if pw, err = w.CreateFormField("metadata"); err == nil {
			_, err = pw.Write(metadata)
		}
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return request{method: http.MethodPost, path: path, token: fx.admin, body: b.String(), contentType: w.FormDataContentType()}
}

// queryOf reads b as a query string as a client would write it: the bytes
// a query may hold, '%' included, as they are (so that a malformed escape
// reaches the server), and any other byte percent-encoded.
func queryOf(b []byte) string {
	const hex = "0123456789ABCDEF"
	var q strings.Builder
	for _, c := range b {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:@/?%", c) >= 0 {
			q.WriteByte(c)
			continue
		}
		q.WriteByte('%')
		q.WriteByte(hex[c>>4])
		q.WriteByte(hex[c&15])
	}
	return q.String()
}

// readableQuery reports whether q decodes, every pair, into UTF-8 text.
func readableQuery(q string) bool {
	values, err := url.ParseQuery(q)
	if err != nil {
		return false
	}
	for p, vs := range values {
		if !utf8.ValidString(p) || slices.ContainsFunc(vs, func(v string) bool { return !utf8.ValidString(v) }) {
			return false
		}
	}
	return true
}

// sentMetadata is the label and description of an upload's metadata, as
// the client meant them; empty where it gave none or they do not decode.
func sentMetadata(metadata []byte, raw bool) (out struct{ Label, Description string }) {
	if raw {
		q, _ := url.ParseQuery(queryOf(metadata))
		out.Label, out.Description = q.Get("label"), q.Get("description")
		return out
	}
	_ = json.Unmarshal(metadata, &out)
	return out
}

// listedVersions returns the versions a GET of a model lists; none when
// it answered 404.
func listedVersions(r response) []any {
	vs, _ := r.json["versions"].([]any)
	return vs
}

// describeUpload names an input in a failure.
func describeUpload(name string, metadata, artifact []byte, raw bool) string {
	form := "multipart"
	if raw {
		form = "raw"
	}
	return fmt.Sprintf("%s upload to %s of metadata %q and artifact %q", form, name, head(metadata), head(artifact))
}

// head is the start of b, enough to tell an input by.
func head(b []byte) []byte {
	return b[:min(len(b), 300)]
}
