package standalone

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// debugURL is the profiles' address as the server prints it.
var debugURL = regexp.MustCompile(`(http://127\.0\.0\.1:\d+/debug/pprof/)`)

// getStatus returns the status and body of a GET, or status 0 when the
// address cannot be reached.
func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

func TestDebugAddrServesProfilesOnItsOwnListener(t *testing.T) {
	t.Parallel()
	t.Run("off by default", func(t *testing.T) {
		t.Parallel()
		s := harness.Start(t, harness.Options{})
		if strings.Contains(s.Stdout(), "pprof") {
			t.Errorf("the server announced profiles without -debug-addr:\n%s", s.Stdout())
		}
		if code, body := getStatus(t, s.Base+"/debug/pprof/"); code == http.StatusOK {
			t.Errorf("the public address serves /debug/pprof/: %.200s", body)
		}
	})
	t.Run("on", func(t *testing.T) {
		t.Parallel()
		s := harness.Start(t, harness.Options{Env: map[string]string{"SCOREHUB_DEBUG_ADDR": "127.0.0.1:0"}})
		m := debugURL.FindStringSubmatch(s.Stdout())
		if m == nil {
			t.Fatalf("no profiles address printed:\n%s", s.Stdout())
		}
		debug := m[1]
		if code, body := getStatus(t, debug); code != http.StatusOK || !strings.Contains(body, "goroutine") {
			t.Errorf("GET %s: %d %.200s; want the profile index", debug, code, body)
		}
		if code, body := getStatus(t, debug+"heap?debug=1"); code != http.StatusOK || !strings.Contains(body, "heap profile") {
			t.Errorf("GET heap: %d %.200s", code, body)
		}
		if code, body := getStatus(t, s.Base+"/debug/pprof/"); code == http.StatusOK {
			t.Errorf("the public address serves /debug/pprof/ too: %.200s", body)
		}
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		if code, _ := getStatus(t, debug); code != 0 {
			t.Errorf("the profiles are still served after shutdown: %d", code)
		}
	})
	t.Run("bad address", func(t *testing.T) {
		t.Parallel()
		_, stderr, err := harness.RunToExit(t, harness.Options{Args: []string{"-debug-addr", "256.0.0.1:1"}})
		if err == nil || !strings.Contains(stderr, "debug address") {
			t.Errorf("the server with an unusable -debug-addr exited with %v, stderr:\n%s", err, stderr)
		}
	})
}
