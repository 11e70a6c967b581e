package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// perfDebugURL is the profiles' address as the server prints it.
var perfDebugURL = regexp.MustCompile(`(http://127\.0\.0\.1:\d+/debug/pprof/)`)

// perfGet returns the status and body of a GET, or status 0 when the
// address cannot be reached.
func perfGet(t *testing.T, url string) (int, string) {
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
	t.Run("off by default", func(t *testing.T) {
		base, printed, stop := startServerEnv(t, t.TempDir(), map[string]string{"SCOREHUB_ADMIN_PASSWORD": testAdminPassword})
		defer stop()
		if strings.Contains(printed, "pprof") {
			t.Errorf("the server announced profiles without -debug-addr:\n%s", printed)
		}
		if code, body := perfGet(t, base+"/debug/pprof/"); code == http.StatusOK {
			t.Errorf("the public address serves /debug/pprof/: %.200s", body)
		}
	})
	t.Run("on", func(t *testing.T) {
		base, printed, stop := startServerEnv(t, t.TempDir(), map[string]string{
			"SCOREHUB_ADMIN_PASSWORD": testAdminPassword,
			"SCOREHUB_DEBUG_ADDR":     "127.0.0.1:0",
		})
		m := perfDebugURL.FindStringSubmatch(printed)
		if m == nil {
			stop()
			t.Fatalf("no profiles address printed:\n%s", printed)
		}
		debug := m[1]
		if code, body := perfGet(t, debug); code != http.StatusOK || !strings.Contains(body, "goroutine") {
			t.Errorf("GET %s: %d %.200s; want the profile index", debug, code, body)
		}
		if code, body := perfGet(t, debug+"heap?debug=1"); code != http.StatusOK || !strings.Contains(body, "heap profile") {
			t.Errorf("GET heap: %d %.200s", code, body)
		}
		if code, body := perfGet(t, base+"/debug/pprof/"); code == http.StatusOK {
			t.Errorf("the public address serves /debug/pprof/ too: %.200s", body)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if code, _ := perfGet(t, debug); code != 0 {
			t.Errorf("the profiles are still served after shutdown: %d", code)
		}
	})
	t.Run("bad address", func(t *testing.T) {
		err := run(t.Context(), []string{"-addr", "127.0.0.1:0", "-data", t.TempDir(), "-debug-addr", "256.0.0.1:1"},
			func(k string) string {
				if k == "SCOREHUB_ADMIN_PASSWORD" {
					return testAdminPassword
				}
				return ""
			}, io.Discard, io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), "debug address") {
			t.Errorf("run with an unusable -debug-addr returned %v", err)
		}
	})
}
