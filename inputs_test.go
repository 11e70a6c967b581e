package scorehub

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// fixture is a model file of a format's test data and what its library
// wrote beside it: the metadata it was uploaded with and rows it scored.
type fixture struct {
	file string
	Meta map[string]any   `json:"metadata"`
	Rows []map[string]any `json:"rows"`
}

func readFixture(t *testing.T, file, rows string) fixture {
	t.Helper()
	b, err := os.ReadFile(rows)
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{file: file}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// upload posts f's file as a version of model with metadata meta, as a
// multipart upload, and fails the test unless it is stored.
func (c client) upload(model string, file string, meta map[string]any) {
	c.t.Helper()
	artifact, err := os.ReadFile(file)
	if err != nil {
		c.t.Fatal(err)
	}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	part, _ := w.CreateFormFile("artifact", "model")
	part.Write(artifact)
	if meta != nil {
		m, _ := json.Marshal(meta)
		w.WriteField("metadata", string(m))
	}
	w.Close()
	r := httptest.NewRequest("POST", "/api/v1/models/"+model+"/versions", &body)
	r.Header.Set("Content-Type", w.FormDataContentType())
	r.Header.Set("Authorization", c.auth)
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	if rec.Code != http.StatusCreated {
		c.t.Fatalf("uploading %s as %s: %d %s", file, model, rec.Code, rec.Body)
	}
}

// TestMisspeltFeatureIsRefused: for a model of each format, a request that
// spells a feature otherwise than the model (mean radius for mean_radius)
// is a 400 schema_mismatch naming the feature and suggesting its name, not
// a prediction from a missing value; a model uploaded as lenient scores
// it, and a row that leaves the feature out among rows that have it is
// still scored.
func TestMisspeltFeatureIsRefused(t *testing.T) {
	h := newService(t, Config{AdminPassword: adminPassword}).Handler()
	admin := signIn(t, h, "admin", adminPassword)
	for _, c := range []struct {
		format string
		fx     fixture
	}{
		{"xgboost", readFixture(t, "registry/xgboost/testdata/breast_cancer_logistic.json", "registry/xgboost/testdata/breast_cancer_logistic.rows.json")},
		{"lightgbm", readFixture(t, "registry/lightgbm/testdata/binary.txt", "registry/lightgbm/testdata/binary.rows.json")},
		{"pmml", readFixture(t, "registry/pmml/testdata/breast_cancer_logistic.pmml", "registry/pmml/testdata/breast_cancer_logistic.rows.json")},
		{"onnx", readFixture(t, "registry/onnx/testdata/breast_cancer_logistic.onnx", "registry/onnx/testdata/breast_cancer_logistic.rows.json")},
	} {
		t.Run(c.format, func(t *testing.T) {
			admin.t = t
			admin.upload(c.format, c.fx.file, c.fx.Meta)
			lenient := map[string]any{"lenient": true}
			for k, v := range c.fx.Meta {
				lenient[k] = v
			}
			admin.upload(c.format+"-lenient", c.fx.file, lenient)
			admin.must("PUT", "/api/v1/deployments/DEFAULT/"+c.format,
				`{"enabled":true,"endpoints":[{"alias":"strict","model":"`+c.format+`@1"},{"alias":"lenient","model":"`+c.format+`-lenient@1"}]}`,
				http.StatusCreated, nil)

			row := map[string]any{}
			for k, v := range c.fx.Rows[0] {
				row[k] = v
			}
			row["mean radius"] = row["mean_radius"]
			delete(row, "mean_radius")
			typo, _ := json.Marshal(map[string]any{"data": []any{row}})
			anon := client{t: t, h: h}
			base := "/webapi/DEFAULT/api/v1/services/" + c.format + "/"

			code, body := anon.do("POST", base+"strict", string(typo))
			var e struct {
				Error struct{ Type, Message string }
			}
			json.Unmarshal([]byte(body), &e)
			if code != http.StatusBadRequest || e.Error.Type != "schema_mismatch" ||
				!strings.Contains(e.Error.Message, `"mean_radius" is missing from every row`) ||
				!strings.Contains(e.Error.Message, `"mean radius" (did you mean "mean_radius"?)`) {
				t.Errorf("a misspelt feature answered %d %s, want 400 schema_mismatch naming mean_radius and suggesting it", code, body)
			}
			if code, body := anon.do("POST", base+"lenient", string(typo)); code != http.StatusOK {
				t.Errorf("a lenient model answered the misspelt feature %d %s, want 200", code, body)
			}
			both, _ := json.Marshal(map[string]any{"data": []any{c.fx.Rows[0], row}})
			if code, body := anon.do("POST", base+"strict", string(both)); code != http.StatusOK {
				t.Errorf("a row without the feature beside one with it answered %d %s, want 200", code, body)
			}
		})
	}
}
