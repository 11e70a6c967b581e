package standalone

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub"
)

func TestConfigFlagsAndEnvironment(t *testing.T) {
	env := map[string]string{"SCOREHUB_ADDR": "127.0.0.1:9999", "SCOREHUB_MAX_ROWS": "7", "SCOREHUB_PREFIX": "scoring/"}
	c, err := parseConfig([]string{"-addr", "127.0.0.1:1234"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:1234" || c.MaxRows != 7 || c.Prefix != "/scoring" || c.DataDir != "./scorehub-data" {
		t.Errorf("config %+v: want the flag over the environment, the environment over defaults", c)
	}
	for _, bad := range [][]string{{"-max-rows", "0"}, {"-prefix", "/"}, {"-prefix", "/api/score"}, {"-prefix", "health"}, {"-prefix", "/executions"}, {"-prefix", "/ui/"}, {"-timeout", "-1s"}, {"stray"}} {
		if _, err := parseConfig(bad, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("parseConfig(%q) succeeded, want an error", bad)
		}
	}
	if _, err := parseConfig(nil, func(k string) string {
		if k == "SCOREHUB_MAX_BODY" {
			return "lots"
		}
		return ""
	}, io.Discard); err == nil || !strings.Contains(err.Error(), "SCOREHUB_MAX_BODY") {
		t.Errorf("a bad environment value gave %v, want an error naming the variable", err)
	}
}

func TestTrustedProxiesFlag(t *testing.T) {
	env := map[string]string{"SCOREHUB_TRUSTED_PROXIES": "10.0.0.5, 10.1.2.3/16,::1"}
	c, err := parseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.5/32"), netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("::1/128")}
	if d := cmp.Diff(want, c.TrustedProxies, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); d != "" {
		t.Errorf("trusted proxies (-want +got):\n%s", d)
	}
	if _, err := parseConfig([]string{"-trusted-proxies", "proxy.internal"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("a host name as a trusted proxy was accepted, want an error")
	}
}

// TestTimeoutFlags: the server timeouts default to what the server always
// had, are set by flag or SCOREHUB_* variable, the flag winning, and a zero
// read timeout, which would let slow senders hold connections for ever, is
// refused.
func TestTimeoutFlags(t *testing.T) {
	none := func(string) string { return "" }
	c, err := parseConfig(nil, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	type timeouts struct{ ReadHeader, Read, Write, Idle time.Duration }
	got := timeouts{c.ReadHeaderTimeout, c.ReadTimeout, c.WriteTimeout, c.IdleTimeout}
	if d := cmp.Diff(timeouts{10 * time.Second, 2 * time.Minute, 0, 2 * time.Minute}, got); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
	env := map[string]string{"SCOREHUB_READ_HEADER_TIMEOUT": "3s", "SCOREHUB_READ_TIMEOUT": "4s", "SCOREHUB_WRITE_TIMEOUT": "5s", "SCOREHUB_IDLE_TIMEOUT": "6s"}
	c, err = parseConfig([]string{"-read-timeout", "7s"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got = timeouts{c.ReadHeaderTimeout, c.ReadTimeout, c.WriteTimeout, c.IdleTimeout}
	if d := cmp.Diff(timeouts{3 * time.Second, 7 * time.Second, 5 * time.Second, 6 * time.Second}, got); d != "" {
		t.Errorf("from the environment and a flag (-want +got):\n%s", d)
	}
	for _, bad := range [][]string{{"-read-header-timeout", "0"}, {"-read-timeout", "0"}, {"-idle-timeout", "0"}, {"-write-timeout", "-1s"}} {
		if _, err := parseConfig(bad, none, io.Discard); err == nil {
			t.Errorf("parseConfig(%q) succeeded, want an error", bad)
		}
	}
}

// The switches: metrics on by default, the demo sleep process off.
func TestSwitchFlags(t *testing.T) {
	tests := []struct {
		args      []string
		env       map[string]string
		metrics   bool
		demoSleep bool
	}{
		{metrics: true},
		{args: []string{"-metrics=false"}},
		{env: map[string]string{"SCOREHUB_METRICS": "false"}},
		{args: []string{"-metrics"}, env: map[string]string{"SCOREHUB_METRICS": "false"}, metrics: true},
		{args: []string{"-demo-sleep"}, metrics: true, demoSleep: true},
		{env: map[string]string{"SCOREHUB_DEMO_SLEEP": "true"}, metrics: true, demoSleep: true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " ")+" "+strings.Join(keys(tt.env), " "), func(t *testing.T) {
			c, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil || c.Metrics != tt.metrics || c.DemoSleep != tt.demoSleep {
				t.Errorf("Metrics %v, DemoSleep %v, error %v; want %v, %v", c.Metrics, c.DemoSleep, err, tt.metrics, tt.demoSleep)
			}
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

func TestWelcomeNamesTheEndpoint(t *testing.T) {
	var out bytes.Buffer
	printWelcome(&out, "http://127.0.0.1:8080", "/webapi")
	want := "demo endpoint: http://127.0.0.1:8080/webapi/DEFAULT/api/v1/services/iris/classify\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("welcome text:\n%s\nwant the line %q", out.String(), want)
	}
	if d := cmp.Diff(1, strings.Count(out.String(), "curl ")); d != "" {
		t.Errorf("curl commands printed (-want +got):\n%s", d)
	}
}

// TestMaxJobBodyFlag: a job's body has a limit of its own, below a scoring
// request's by default, set by -max-job-body or SCOREHUB_MAX_JOB_BODY.
func TestMaxJobBodyFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want int64
	}{
		{"default", nil, nil, 8 << 20},
		{"environment", nil, map[string]string{"SCOREHUB_MAX_JOB_BODY": "1024"}, 1024},
		{"flag over environment", []string{"-max-job-body", "2048"}, map[string]string{"SCOREHUB_MAX_JOB_BODY": "1024"}, 2048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if c.MaxJobBody != tt.want || c.MaxJobBody >= c.MaxBody {
				t.Errorf("MaxJobBody = %d (MaxBody %d), want %d", c.MaxJobBody, c.MaxBody, tt.want)
			}
		})
	}
	if _, err := parseConfig([]string{"-max-job-body", "0"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("-max-job-body 0 was accepted, want an error")
	}
}

// -write-progress-timeout: one minute by default, from the environment, the
// flag winning over it, 0 for none and a negative value refused.
func TestWriteProgressTimeoutFlag(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    time.Duration
		wantErr bool
	}{
		{"default", nil, nil, time.Minute, false},
		{"environment", nil, map[string]string{"SCOREHUB_WRITE_PROGRESS_TIMEOUT": "5s"}, 5 * time.Second, false},
		{"flag wins", []string{"-write-progress-timeout", "7s"}, map[string]string{"SCOREHUB_WRITE_PROGRESS_TIMEOUT": "5s"}, 7 * time.Second, false},
		{"none", []string{"-write-progress-timeout", "0"}, nil, 0, false},
		{"negative", []string{"-write-progress-timeout", "-1s"}, nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseConfig(%q) succeeded, want an error", tt.args)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.WriteProgressTimeout != tt.want {
				t.Errorf("WriteProgressTimeout = %v, want %v", c.WriteProgressTimeout, tt.want)
			}
		})
	}
}

// -max-model-bytes: 64 MiB by default, from the environment, the flag
// winning over it, and 0 refused.
func TestMaxModelBytesFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want int64
	}{
		{"default", nil, nil, 64 << 20},
		{"environment", nil, map[string]string{"SCOREHUB_MAX_MODEL_BYTES": "1024"}, 1024},
		{"flag over environment", []string{"-max-model-bytes", "2048"}, map[string]string{"SCOREHUB_MAX_MODEL_BYTES": "1024"}, 2048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if c.MaxModelBytes != tt.want {
				t.Errorf("MaxModelBytes = %d, want %d", c.MaxModelBytes, tt.want)
			}
		})
	}
	if _, err := parseConfig([]string{"-max-model-bytes", "0"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("-max-model-bytes 0 was accepted, want an error")
	}
}

// TestResultLimitFlags: -max-result-cells and -max-response-bytes (or
// their SCOREHUB_* variables) bound an answer: two rows of the iris demo,
// four result columns each whose names take 96 bytes a row, pass a limit
// of 7 cells, or of 150 bytes, and are refused with 413 before the model
// runs, while one row is answered.
func TestResultLimitFlags(t *testing.T) {
	env := map[string]string{"SCOREHUB_MAX_RESULT_CELLS": "7", "SCOREHUB_MAX_RESPONSE_BYTES": "150"}
	c, err := parseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil || c.MaxResultCells != 7 || c.MaxResponseBytes != 150 {
		t.Fatalf("SCOREHUB_MAX_RESULT_CELLS=7, SCOREHUB_MAX_RESPONSE_BYTES=150 gave %d, %d (%v)", c.MaxResultCells, c.MaxResponseBytes, err)
	}
	if c, _ := parseConfig(nil, func(string) string { return "" }, io.Discard); c.MaxResultCells != scorehub.DefaultMaxResultCells ||
		c.MaxResponseBytes != scorehub.DefaultMaxResponseBytes {
		t.Errorf("defaults %d, %d; want %d, %d", c.MaxResultCells, c.MaxResponseBytes, scorehub.DefaultMaxResultCells, scorehub.DefaultMaxResponseBytes)
	}
	for _, bad := range [][]string{{"-max-result-cells", "0"}, {"-max-response-bytes", "-1"}} {
		if _, err := parseConfig(bad, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%q was accepted, want an error", bad)
		}
	}

	row := `{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}`
	for _, tc := range []struct {
		flag, limit string
		want        string
	}{{"-max-result-cells", "7", "too_many_result_cells"}, {"-max-response-bytes", "150", "response_too_large"}} {
		srv := newTestServer(t, t.TempDir(), tc.flag, tc.limit)
		for _, r := range []struct {
			body   string
			status int
			want   string
		}{
			{`{"data":[` + row + `]}`, http.StatusOK, "setosa"},
			{`{"data":[` + row + `,` + row + `]}`, http.StatusRequestEntityTooLarge, `"` + tc.want + `"`},
		} {
			req := httptest.NewRequest(http.MethodPost, "/webapi/DEFAULT/api/v1/services/iris/classify", strings.NewReader(r.body))
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			srv.handler.ServeHTTP(w, req)
			if w.Code != r.status || !strings.Contains(w.Body.String(), r.want) {
				t.Errorf("%s %s, %s: %d %s, want %d with %s", tc.flag, tc.limit, r.body, w.Code, w.Body, r.status, r.want)
			}
		}
		srv.Close()
	}
}

// TestVersionFlag: -version prints the version the program was built from
// and exits without serving.
func TestVersionFlag(t *testing.T) {
	var stdout, stderr strings.Builder
	if err := run(context.Background(), []string{"-version"}, func(string) string { return "" }, &stdout, &stderr, func(string) {
		t.Error("-version started the server")
	}); err != nil {
		t.Fatal(err)
	}
	if got := stdout.String(); !strings.HasPrefix(got, "scorehub ") || !strings.Contains(got, "go1.") {
		t.Errorf("-version printed %q, want scorehub, its version and Go's", got)
	}
}
