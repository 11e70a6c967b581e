package standalone

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// TestCORSOriginsLetOtherPagesCallScoring sends the preflight a browser
// sends before a page on another origin POSTs to the iris endpoint with a
// token, and then the POST itself.
func TestCORSOriginsLetOtherPagesCallScoring(t *testing.T) {
	t.Parallel()
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
			t.Parallel()
			s := harness.Start(t, harness.Options{Args: tt.args, Env: tt.env})

			req, _ := http.NewRequest(http.MethodOptions, s.Base+harness.IrisURL, nil)
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

			req, _ = http.NewRequest(http.MethodPost, s.Base+harness.IrisURL, strings.NewReader(`{"data":[`+harness.IrisRow+`]}`))
			req.Header.Set("Origin", tt.origin)
			req.Header.Set("Content-Type", "application/json")
			res, err = s.Client(t).Do(req)
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
	t.Parallel()
	_, stderr, err := harness.RunToExit(t, harness.Options{Args: []string{"-cors-origins", "https://app.example.com/path"}})
	if err == nil || !strings.Contains(stderr, "CORS origin") {
		t.Errorf("the server with an origin that has a path exited with %v, stderr:\n%s\nwant a failure naming the CORS origin", err, stderr)
	}
}
