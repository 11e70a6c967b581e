package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"testing"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// client talks to one run of the server as the admin, every answer checked
// against the server's OpenAPI document.
type client struct {
	s     *harness.Server
	http  *http.Client
	token string
}

func newClient(t testing.TB, s *harness.Server) *client {
	t.Helper()
	return &client{s: s, http: s.Client(t), token: s.AdminToken(t)}
}

// answer is a JSON answer: its status, headers and body, decoded.
type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

// do sends a request with the admin's token; header adds headers such as
// If-Match.
func (c *client) do(t testing.TB, method, path, contentType string, body []byte, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, c.s.Base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	a := answer{status: res.StatusCode, header: res.Header}
	if a.raw, err = io.ReadAll(res.Body); err != nil {
		t.Fatal(err)
	}
	if len(a.raw) > 0 && res.Header.Get("Content-Type") == "application/json" {
		json.Unmarshal(a.raw, &a.body) // an array leaves body nil
	}
	return a
}

// doJSON sends v as a JSON body.
func (c *client) doJSON(t testing.TB, method, path string, v any, header ...string) answer {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return c.do(t, method, path, "application/json", b, header...)
}

// upload posts a new version of model name: the artifact and, when not
// nil, the metadata part, as multipart/form-data.
func (c *client) upload(t testing.TB, name string, artifact []byte, metadata any) answer {
	t.Helper()
	body, ct := multipartUpload(t, name, artifact, metadata)
	return c.do(t, http.MethodPost, "/api/v1/models/"+name+"/versions", ct, body)
}

// multipartUpload is the body of an upload with the parts "artifact" and,
// when metadata is not nil, "metadata", and its Content-Type.
func multipartUpload(t testing.TB, name string, artifact []byte, metadata any) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="artifact"; filename=%q`, name+".model"))
	h.Set("Content-Type", "application/octet-stream")
	pw, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	pw.Write(artifact)
	if metadata != nil {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="metadata"`)
		h.Set("Content-Type", "application/json")
		pw, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.NewEncoder(pw).Encode(metadata); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), mw.FormDataContentType()
}

// scoreURL is the scoring URL of endpoint alias of deployment path in the
// DEFAULT group.
func scoreURL(path, alias string) string {
	return "/webapi/DEFAULT/api/v1/services/" + path + "/" + alias
}

// score posts body to the scoring URL and returns the rows answered; any
// status but 200 fails t.
func (c *client) score(t testing.TB, url string, body []byte) []map[string]any {
	t.Helper()
	a := c.do(t, http.MethodPost, url, "application/json", body)
	if a.status != http.StatusOK {
		t.Fatalf("POST %s: %d %s", url, a.status, a.raw)
	}
	var got struct{ Data []map[string]any }
	if err := json.Unmarshal(a.raw, &got); err != nil {
		t.Fatalf("POST %s: %v in %s", url, err, a.raw)
	}
	return got.Data
}
