package standalone

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestDebugHandlerServesNoCommandLine: the profiles are served, but not
// the command line, which may hold -store's password.
func TestDebugHandlerServesNoCommandLine(t *testing.T) {
	h := debugHandler()
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/debug/pprof/", http.StatusOK},
		{"/debug/pprof/heap?debug=1", http.StatusOK},
		{"/debug/pprof/goroutine?debug=1", http.StatusOK},
		{"/debug/pprof/cmdline", http.StatusNotFound},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", tc.path, nil))
		if w.Code != tc.want {
			t.Errorf("GET %s: %d, want %d", tc.path, w.Code, tc.want)
		}
		if args := strings.Join(os.Args[1:], "\x00"); tc.want == http.StatusNotFound && len(args) > 0 && strings.Contains(w.Body.String(), args) {
			t.Errorf("GET %s shows the command line: %q", tc.path, w.Body)
		}
	}
}

// TestDebugAddrOnLoopback: -debug-addr serves profiles that take no token,
// so an address off loopback is refused unless -insecure-debug-public
// (or SCOREHUB_INSECURE_DEBUG_PUBLIC) says so.
func TestDebugAddrOnLoopback(t *testing.T) {
	tests := []struct {
		args    []string
		env     map[string]string
		wantErr bool
	}{
		{[]string{"-debug-addr", "127.0.0.1:6060"}, nil, false},
		{[]string{"-debug-addr", "127.0.0.2:0"}, nil, false},
		{[]string{"-debug-addr", "[::1]:6060"}, nil, false},
		{[]string{"-debug-addr", "localhost:6060"}, nil, false},
		{nil, map[string]string{"SCOREHUB_DEBUG_ADDR": "127.0.0.1:6060"}, false},
		{[]string{"-debug-addr", ":6060"}, nil, true},
		{[]string{"-debug-addr", "0.0.0.0:6060"}, nil, true},
		{[]string{"-debug-addr", "[::]:6060"}, nil, true},
		{[]string{"-debug-addr", "192.0.2.1:6060"}, nil, true},
		{[]string{"-debug-addr", "debug.example.com:6060"}, nil, true},
		{[]string{"-debug-addr", "127.0.0.1"}, nil, true},
		{nil, map[string]string{"SCOREHUB_DEBUG_ADDR": ":6060"}, true},
		{[]string{"-debug-addr", ":6060", "-insecure-debug-public"}, nil, false},
		{[]string{"-debug-addr", "0.0.0.0:6060"}, map[string]string{"SCOREHUB_INSECURE_DEBUG_PUBLIC": "true"}, false},
	}
	for _, tt := range tests {
		_, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseConfig(%q, %v): %v, want an error: %v", tt.args, tt.env, err, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "debug address") {
			t.Errorf("parseConfig(%q): %v, want an error naming the debug address", tt.args, err)
		}
	}
}
