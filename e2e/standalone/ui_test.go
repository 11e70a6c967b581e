package standalone

import (
	"net/http"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// TestTestPagesAreMountedAtUI checks, without a browser, where the pages
// are: /ui/ serves the page with its CSP, /ui is sent there, and the
// scoring prefix cannot take the place.
func TestTestPagesAreMountedAtUI(t *testing.T) {
	t.Parallel()
	srv := harness.Start(t, harness.Options{})
	base := srv.Base
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(base + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode/100 != 3 || loc != "/ui/" {
		t.Errorf("GET /ui: %d to %q, want a redirect to /ui/", res.StatusCode, loc)
	}
	res, err = client.Get(base + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if ct, csp := res.Header.Get("Content-Type"), res.Header.Get("Content-Security-Policy"); res.StatusCode != http.StatusOK ||
		ct != "text/html; charset=utf-8" || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("GET /ui/: %d %q, CSP %q; want the page with its policy", res.StatusCode, ct, csp)
	}
	if _, stderr, err := harness.RunToExit(t, harness.Options{Args: []string{"-prefix", "/ui/"}}); err == nil {
		t.Errorf("the server started with -prefix /ui/, where scoring would take the test pages' place; stderr:\n%s", stderr)
	}
}
