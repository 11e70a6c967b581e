package harness

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The demo endpoint the server deploys, and one row it scores.
const (
	IrisURL = "/webapi/DEFAULT/api/v1/services/iris/classify"
	IrisRow = `{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}`
)

// Client returns an HTTP client whose every answer, from a route of the
// server's OpenAPI document or from no route at all, is checked against
// that document; an answer it does not allow fails t. The document is the
// one the server serves at /api/v1/openapi.json.
func (s *Server) Client(t testing.TB) *http.Client {
	t.Helper()
	return &http.Client{Transport: s.Conformance(t).Transport(t, http.DefaultTransport)}
}

// Conformance returns the checker of the server's OpenAPI document.
func (s *Server) Conformance(t testing.TB) *Conformance {
	t.Helper()
	s.docOnce.Do(func() {
		var spec []byte
		if spec, s.docErr = s.get("/api/v1/openapi.json"); s.docErr == nil {
			s.doc, s.docErr = binaries.conformance(spec)
		}
	})
	if s.docErr != nil {
		t.Fatalf("the server's OpenAPI document: %v", s.docErr)
	}
	return s.doc
}

func (s *Server) get(path string) ([]byte, error) {
	res, err := http.Get(s.Base + path)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = &statusError{path: path, status: res.StatusCode}
	}
	return b, err
}

type statusError struct {
	path   string
	status int
}

func (e *statusError) Error() string {
	return "harness: GET " + e.path + ": status " + http.StatusText(e.status)
}

// Get returns the body of a GET of path, which must answer 200. It does not
// check the answer against the OpenAPI document, so that it reads the
// routes the document does not describe too (/metrics, /ui/).
func (s *Server) Get(t testing.TB, path string) string {
	t.Helper()
	b, err := s.get(path)
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return string(b)
}

// PostJSON posts a JSON body to path and returns the status and the JSON
// object answered, which every answer of the scoring routes must be.
func (s *Server) PostJSON(t testing.TB, path, body string) (int, map[string]any) {
	t.Helper()
	res, err := s.Client(t).Post(s.Base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want JSON", ct)
	}
	var got map[string]any
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatalf("response is not JSON: %v", err)
	}
	return res.StatusCode, got
}

// Token asks the token service for an idToken with HTTP Basic and returns
// the status and the JSON answer.
func (s *Server) Token(t testing.TB, user, password string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.Base+"/api/rest/tokenservice", nil)
	req.SetBasicAuth(user, password)
	res, err := s.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got map[string]any
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatalf("token service answered %d with no JSON: %v", res.StatusCode, err)
	}
	return res.StatusCode, got
}

// AdminToken returns an idToken of the user admin with AdminPassword.
func (s *Server) AdminToken(t testing.TB) string {
	t.Helper()
	status, got := s.Token(t, "admin", AdminPassword)
	tok, _ := got["idToken"].(string)
	if status != http.StatusOK || tok == "" {
		t.Fatalf("token service: %d %v", status, got)
	}
	return tok
}

// API sends a management request with token and returns the status and
// the JSON object answered (nil for a 204 or a JSON array).
func (s *Server) API(t testing.TB, token, method, path, contentType, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, s.Base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := s.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got map[string]any
	if res.StatusCode != http.StatusNoContent {
		var raw json.RawMessage
		if err := json.NewDecoder(res.Body).Decode(&raw); err != nil {
			t.Fatalf("%s %s answered %d with no JSON: %v", method, path, res.StatusCode, err)
		}
		json.Unmarshal(raw, &got) // an array leaves got nil
	}
	return res.StatusCode, got
}
