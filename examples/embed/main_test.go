package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHostRoutesAndScoringSideBySide(t *testing.T) {
	h, err := newHandler(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	res, err := http.Get(srv.URL + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "hello from the host") {
		t.Errorf("GET /hello = %d %q, want the host's own answer", res.StatusCode, body)
	}

	res, err = http.Post(srv.URL+"/ml/DEFAULT/api/v1/services/tools/double", "application/json",
		strings.NewReader(`{"data":[{"x":21},{"x":null}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	const want = `{"data":[{"x":21,"doubled":42},{"x":null,"doubled":null}]}`
	if res.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != want {
		t.Errorf("scoring = %d %s, want 200 %s", res.StatusCode, body, want)
	}

	res, err = http.Get(srv.URL + "/ml/DEFAULT/api/v1/services/tools/nope")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("an unknown scoring route answered %q, want a JSON error", ct)
	}
}

func TestManagementUnderThePrefix(t *testing.T) {
	h, err := newHandler(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	res, err := http.Get(srv.URL + "/ml-admin/api/v1/webapigroups")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("web API groups without a token: %d, want 401", res.StatusCode)
	}

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ml-admin/api/rest/tokenservice", nil)
	req.SetBasicAuth(opsUser, opsPassword)
	req.Header.Set("Accept", "application/json")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct{ IDToken string }
	json.NewDecoder(res.Body).Decode(&tok)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || tok.IDToken == "" {
		t.Fatalf("token service under the prefix: %d, token %q", res.StatusCode, tok.IDToken)
	}

	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/ml-admin/api/v1/endpoints", nil)
	req.Header.Set("Authorization", "Bearer "+tok.IDToken)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	want := srv.URL + "/ml/DEFAULT/api/v1/services/tools/double"
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		t.Errorf("endpoints: %d %s; want the scoring URL %s", res.StatusCode, body, want)
	}
}
