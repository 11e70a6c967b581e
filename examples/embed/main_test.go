package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub"
)

const password = "correct horse battery"

// host is the example's mux over a server of the test's.
type host struct {
	t   *testing.T
	url string
}

func newHost(t *testing.T) *host {
	t.Helper()
	svc, err := scorehub.New(context.Background(), scorehub.Config{AdminPassword: password, AccessLogOff: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	srv := httptest.NewServer(newHandler(svc))
	t.Cleanup(srv.Close)
	return &host{t: t, url: srv.URL}
}

// do sends a request to path (below the host's root) and returns the
// answer with its body read.
func (h *host) do(method, path, token, contentType string, body []byte, header ...string) (*http.Response, []byte) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+path, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return res, b
}

// TestWholeServiceUnderAPrefix: the host keeps its own route, and through
// /ml/ a client takes a token, uploads an XGBoost model, deploys it, scores
// it, runs a job on it, reads the metrics and the test page, every link the
// service writes starting with /ml.
func TestWholeServiceUnderAPrefix(t *testing.T) {
	h := newHost(t)
	if res, body := h.do("GET", "/hello", "", "", nil); res.StatusCode != 200 || !strings.Contains(string(body), "hello from the host") {
		t.Errorf("GET /hello = %d %q, want the host's own answer", res.StatusCode, body)
	}

	req, _ := http.NewRequest("GET", h.url+"/ml/api/rest/tokenservice", nil)
	req.SetBasicAuth("admin", password)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct{ IDToken string }
	err = json.NewDecoder(res.Body).Decode(&tok)
	res.Body.Close()
	if err != nil || tok.IDToken == "" {
		t.Fatalf("the token service answered %d, %v", res.StatusCode, err)
	}
	token := tok.IDToken

	// Nobody deploys without a token, nor with a forged one.
	deployment := []byte(`{"group":"DEFAULT","path":"flowers","endpoints":[{"alias":"species","model":"iris@production"}]}`)
	for name, tk := range map[string]string{"no token": "", "a forged token": token[:len(token)-4] + "AAAA"} {
		if res, body := h.do("POST", "/ml/api/v1/deployments", tk, "application/json", deployment); res.StatusCode != 401 {
			t.Errorf("a deployment with %s answered %d %s, want 401", name, res.StatusCode, body)
		}
	}

	artifact, err := os.ReadFile("../models/iris.json")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile("../models/iris.metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	pw, _ := mw.CreateFormFile("artifact", "iris.json")
	pw.Write(artifact)
	pw, _ = mw.CreateFormField("metadata")
	pw.Write(meta)
	mw.Close()
	if res, body := h.do("POST", "/ml/api/v1/models/iris/versions", token, mw.FormDataContentType(), b.Bytes()); res.StatusCode != 201 {
		t.Fatalf("the upload answered %d %s", res.StatusCode, body)
	}
	if res, body := h.do("PUT", "/ml/api/v1/models/iris/aliases/production", token, "application/json", []byte(`{"version":1}`)); res.StatusCode != 201 {
		t.Fatalf("the alias answered %d %s", res.StatusCode, body)
	}
	if res, body := h.do("POST", "/ml/api/v1/deployments", token, "application/json", deployment); res.StatusCode != 201 {
		t.Fatalf("the deployment answered %d %s", res.StatusCode, body)
	}

	// The endpoint's URL, as the API lists it, is under /ml and scores.
	_, body := h.do("GET", "/ml/api/v1/endpoints", token, "", nil)
	var endpoints []struct{ URL, Path string }
	if err := json.Unmarshal(body, &endpoints); err != nil {
		t.Fatalf("endpoints: %v in %s", err, body)
	}
	wantURL := h.url + "/ml/webapi/DEFAULT/api/v1/services/flowers/species"
	if len(endpoints) != 1 || endpoints[0].URL != wantURL {
		t.Fatalf("endpoints %s, want one at %s", body, wantURL)
	}
	row := `{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}`
	res, body = h.do("POST", strings.TrimPrefix(endpoints[0].URL, h.url), "", "application/json", []byte(`{"data":[`+row+`]}`))
	if res.StatusCode != 200 || !strings.Contains(string(body), `"prediction(species)":"setosa"`) {
		t.Errorf("scoring answered %d %s, want setosa", res.StatusCode, body)
	}

	// A job on the endpoint: its Location is under /ml, and it finishes.
	res, body = h.do("POST", "/ml/executions/jobs", token, "application/json",
		[]byte(`{"endpoint":{"group":"DEFAULT","path":"flowers","alias":"species"},"data":[`+row+`]}`))
	loc := res.Header.Get("Location")
	if res.StatusCode != 201 || !strings.HasPrefix(loc, "/ml/executions/jobs/") {
		t.Fatalf("the job answered %d %s, Location %q; want 201 under /ml/executions/jobs/", res.StatusCode, body, loc)
	}
	var job struct{ State string }
	for deadline := time.Now().Add(30 * time.Second); job.State != "FINISHED" && time.Now().Before(deadline); {
		_, body = h.do("GET", loc, token, "", nil)
		if err := json.Unmarshal(body, &job); err != nil {
			t.Fatalf("the job: %v in %s", err, body)
		}
		if job.State == "ERROR" || job.State == "STOPPED" {
			break
		}
	}
	if job.State != "FINISHED" {
		t.Fatalf("the job is %s: %s", job.State, body)
	}
	if res, body := h.do("GET", loc+"/result", token, "", nil); res.StatusCode != 200 || !strings.Contains(string(body), `"prediction(species)":"setosa"`) {
		t.Errorf("the job's result answered %d %s, want setosa", res.StatusCode, body)
	}

	if res, body := h.do("GET", "/ml/metrics", "", "", nil); res.StatusCode != 200 ||
		!strings.Contains(string(body), `scorehub_scoring_requests_total{alias="species",group="DEFAULT",model="iris",path="flowers",status="200",version="1"} 1`) ||
		!strings.Contains(string(body), `scorehub_jobs{state="FINISHED"} 1`) {
		t.Errorf("the metrics answered %d without the request and the job counted:\n%s", res.StatusCode, body)
	}

	_, body = h.do("GET", "/ml/api/v1/openapi.json", "", "", nil)
	var doc struct{ Servers []struct{ URL string } }
	if err := json.Unmarshal(body, &doc); err != nil || len(doc.Servers) != 1 || doc.Servers[0].URL != "/ml" {
		t.Errorf("the OpenAPI document names the servers %+v (%v), want /ml", doc.Servers, err)
	}
	if res, _ := h.do("GET", "/ml/", "", "", nil, "Accept", "text/html"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ml/ui/" {
		t.Errorf("a browser at /ml/ is sent %d to %q, want 303 to /ml/ui/", res.StatusCode, res.Header.Get("Location"))
	}
	if res, body := h.do("GET", "/ml/ui/", "", "", nil); res.StatusCode != 200 || !strings.Contains(string(body), "<html") {
		t.Errorf("the test page answered %d", res.StatusCode)
	}
}

// TestUnknownRoutesUnderAPrefix: under the host's mount, what the service
// does not serve is a JSON error, as at the root.
func TestUnknownRoutesUnderAPrefix(t *testing.T) {
	h := newHost(t)
	for _, path := range []string{"/ml/api/v1/nothing", "/ml/webapi/DEFAULT/api/v1/services/x/y"} {
		res, body := h.do("GET", path, "", "", nil)
		if res.StatusCode/100 != 4 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || !strings.Contains(string(body), `"error"`) {
			t.Errorf("GET %s answered %d %q %s, want a JSON error", path, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}
}

// TestReadmeShowsThisExample: every line of the README's embedding snippet
// is a line of this program, so the snippet compiles and runs as shown
// here, and changes with it.
func TestReadmeShowsThisExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n"+readmeEmbedHeading+"\n")
	if !ok {
		t.Fatalf("the README has no section %q", readmeEmbedHeading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, snippet, ok := strings.Cut(section, "```go\n")
	if !ok {
		t.Fatalf("the README's %q section has no go block", readmeEmbedHeading)
	}
	snippet, _, _ = strings.Cut(snippet, "\n```")
	lines := map[string]bool{}
	for _, l := range strings.Split(string(src), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	n := 0
	for _, l := range strings.Split(snippet, "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		n++
		if !lines[l] {
			t.Errorf("the README's line %q is not a line of examples/embed/main.go", l)
		}
	}
	if n < 10 {
		t.Errorf("the README's snippet has %d lines, want the essential ten or more", n)
	}
}

// readmeEmbedHeading is the README section that shows this example.
const readmeEmbedHeading = "## Embed it in a Go program"
