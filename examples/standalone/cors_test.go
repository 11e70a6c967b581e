package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCORSOriginsLetOtherPagesCallScoring sends the preflight a browser
// sends before a page on another origin POSTs to the iris endpoint with a
// token, and then the POST itself.
func TestCORSOriginsLetOtherPagesCallScoring(t *testing.T) {
	const allowed = "http://app.example.com:3000"
	tests := []struct {
		name          string
		args          []string
		env           map[string]string
		origin        string
		wantPreflight int
		wantAllow     string // Access-Control-Allow-Origin on the preflight and the POST
	}{
		{name: "off by default", origin: allowed, wantPreflight: http.StatusMethodNotAllowed},
		{name: "allowed origin", args: []string{"-cors-origins", allowed + ", https://other.example"}, origin: allowed,
			wantPreflight: http.StatusNoContent, wantAllow: allowed},
		{name: "allowed through the environment", env: map[string]string{"SCOREHUB_CORS_ORIGINS": allowed}, origin: allowed,
			wantPreflight: http.StatusNoContent, wantAllow: allowed},
		{name: "another origin", args: []string{"-cors-origins", allowed}, origin: "http://evil.example",
			wantPreflight: http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"SCOREHUB_ADMIN_PASSWORD": testAdminPassword}
			for k, v := range tt.env {
				env[k] = v
			}
			base, _, stop := startServerEnv(t, t.TempDir(), env, tt.args...)
			defer stop()

			req, _ := http.NewRequest(http.MethodOptions, base+irisURL, nil)
			req.Header.Set("Origin", tt.origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != tt.wantPreflight {
				t.Errorf("preflight: status %d, want %d", res.StatusCode, tt.wantPreflight)
			}
			got := map[string]string{
				"Access-Control-Allow-Origin":  res.Header.Get("Access-Control-Allow-Origin"),
				"Access-Control-Allow-Methods": res.Header.Get("Access-Control-Allow-Methods"),
			}
			want := map[string]string{"Access-Control-Allow-Origin": tt.wantAllow, "Access-Control-Allow-Methods": ""}
			if tt.wantAllow != "" {
				want["Access-Control-Allow-Methods"] = "POST"
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("preflight headers (-want +got):\n%s", d)
			}

			req, _ = http.NewRequest(http.MethodPost, base+irisURL, strings.NewReader(`{"data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`))
			req.Header.Set("Origin", tt.origin)
			req.Header.Set("Content-Type", "application/json")
			res, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("POST: status %d, want 200 (the browser, not the server, withholds answers from other origins)", res.StatusCode)
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != tt.wantAllow {
				t.Errorf("POST: Access-Control-Allow-Origin %q, want %q", got, tt.wantAllow)
			}
		})
	}
}

func TestCORSOriginsMustBeOrigins(t *testing.T) {
	_, err := newServerForTest(t, "-cors-origins", "https://app.example.com/path")
	if err == nil || !strings.Contains(err.Error(), "CORS origin") {
		t.Errorf("run with an origin that has a path: %v, want an error naming the CORS origin", err)
	}
}

// newServerForTest runs the server with args and returns run's error once
// it stops by itself, which a bad configuration makes it do at once.
func newServerForTest(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out strings.Builder
	err := run(ctx, append([]string{"-addr", "127.0.0.1:0", "-data", t.TempDir()}, args...),
		func(k string) string {
			if k == "SCOREHUB_ADMIN_PASSWORD" {
				return testAdminPassword
			}
			return ""
		}, &out, io.Discard, func(string) {
			t.Error("the server started listening with a bad configuration")
			cancel()
		})
	return out.String(), err
}
