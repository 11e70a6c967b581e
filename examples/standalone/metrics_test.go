package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestMetricsEndpoint scores a request, gets a token and reads /metrics the
// way Prometheus would: without a token, in the text format.
func TestMetricsEndpoint(t *testing.T) {
	base, stop := startServer(t, t.TempDir())
	defer stop()
	body := `{"data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2},{"sepal_length":6.7,"sepal_width":3.0,"petal_length":5.2,"petal_width":2.3}]}`
	if status, got := postJSON(t, base+irisURL, body); status != http.StatusOK {
		t.Fatalf("scoring: %d %v", status, got)
	}
	if status, got := postJSON(t, base+"/webapi/DEFAULT/api/v1/services/iris/"+strings.Repeat("x", 20), body); status != http.StatusNotFound {
		t.Fatalf("unknown alias: %d %v", status, got)
	}
	if status, got := getToken(t, base, "admin", testAdminPassword); status != http.StatusOK {
		t.Fatalf("token: %d %v", status, got)
	}
	if status, _ := getToken(t, base, "admin", "wrong"); status != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d, want 401", status)
	}

	text := getBody(t, base+"/metrics")
	for _, want := range []string{
		`scorehub_scoring_requests_total{alias="classify",group="DEFAULT",path="iris",status="200"} 1`,
		`scorehub_scoring_requests_total{alias="_unmatched",group="_unmatched",path="_unmatched",status="404"} 1`,
		`scorehub_scoring_rows_total{alias="classify",group="DEFAULT",path="iris"} 2`,
		`scorehub_scoring_request_duration_seconds_count{alias="classify",group="DEFAULT",path="iris"} 1`,
		`scorehub_token_requests_total{outcome="issued",route="/api/rest/tokenservice"} 1`,
		`scorehub_token_requests_total{outcome="bad_credentials",route="/api/rest/tokenservice"} 1`,
		`scorehub_queue_executions_total{outcome="completed",queue="DEFAULT"} 1`,
		`scorehub_queue_running{queue="DEFAULT"} 0`,
		`scorehub_jobs{state="FINISHED"} 0`,
		"go_goroutines ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(text, strings.Repeat("x", 20)) {
		t.Errorf("/metrics names the unknown alias a client sent:\n%s", text)
	}
}

// TestMetricsCanBeTurnedOff checks -metrics=false and SCOREHUB_METRICS:
// no /metrics route, scoring unaffected.
func TestMetricsCanBeTurnedOff(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, args := range [][]string{nil, {"-metrics=false"}, {"-metrics"}} {
		c, err := parseConfig(args, noEnv, io.Discard)
		if want := len(args) == 0 || args[0] == "-metrics"; err != nil || c.Metrics != want {
			t.Errorf("parseConfig(%q): Metrics %v, %v; want %v", args, c.Metrics, err, want)
		}
	}
	base, _, stop := startServerEnv(t, t.TempDir(), map[string]string{"SCOREHUB_ADMIN_PASSWORD": testAdminPassword, "SCOREHUB_METRICS": "false"})
	defer stop()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode == http.StatusOK {
		t.Errorf("GET /metrics with -metrics=false: %d, want it not served", res.StatusCode)
	}
	if status, got := postJSON(t, base+irisURL, `{"data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`); status != http.StatusOK {
		t.Errorf("scoring without metrics: %d %v", status, got)
	}
}
