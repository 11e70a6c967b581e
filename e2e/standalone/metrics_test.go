package standalone

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// TestMetricsEndpoint scores a request, gets a token and reads /metrics the
// way Prometheus would: without a token, in the text format.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	s := harness.Start(t, harness.Options{})
	body := `{"data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2},{"sepal_length":6.7,"sepal_width":3.0,"petal_length":5.2,"petal_width":2.3}]}`
	if status, got := s.PostJSON(t, harness.IrisURL, body); status != http.StatusOK {
		t.Fatalf("scoring: %d %v", status, got)
	}
	if status, got := s.PostJSON(t, "/webapi/DEFAULT/api/v1/services/iris/"+strings.Repeat("x", 20), body); status != http.StatusNotFound {
		t.Fatalf("unknown alias: %d %v", status, got)
	}
	if status, got := s.Token(t, "admin", harness.AdminPassword); status != http.StatusOK {
		t.Fatalf("token: %d %v", status, got)
	}
	if status, _ := s.Token(t, "admin", "wrong"); status != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d, want 401", status)
	}

	text := s.Get(t, "/metrics")
	for _, want := range []string{
		`scorehub_scoring_requests_total{alias="classify",group="DEFAULT",model="",path="iris",status="200",version=""} 1`,
		`scorehub_scoring_requests_total{alias="_unmatched",group="_unmatched",model="",path="_unmatched",status="404",version=""} 1`,
		`scorehub_scoring_rows_total{alias="classify",group="DEFAULT",model="",path="iris",version=""} 2`,
		`scorehub_scoring_request_duration_seconds_count{alias="classify",group="DEFAULT",model="",path="iris",version=""} 1`,
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

// TestMetricsCanBeTurnedOff checks SCOREHUB_METRICS=false: no /metrics
// route, scoring unaffected.
func TestMetricsCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	s := harness.Start(t, harness.Options{Env: map[string]string{"SCOREHUB_METRICS": "false"}})
	res, err := http.Get(s.Base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode == http.StatusOK {
		t.Errorf("GET /metrics with -metrics=false: %d, want it not served", res.StatusCode)
	}
	if status, got := s.PostJSON(t, harness.IrisURL, `{"data":[`+harness.IrisRow+`]}`); status != http.StatusOK {
		t.Errorf("scoring without metrics: %d %v", status, got)
	}
}

// metricsURL is the metrics listener's address as the server prints it.
var metricsURL = regexp.MustCompile(`metrics \(no token[^)]*\): (http://127\.0\.0\.1:\d+/metrics)`)

// TestMetricsAddrServesMetricsOnItsOwnListener checks SCOREHUB_METRICS_ADDR:
// /metrics names protected groups and endpoints, so with it the public
// address answers 404 for /metrics and the metrics are served on the
// address printed at start, until shutdown.
func TestMetricsAddrServesMetricsOnItsOwnListener(t *testing.T) {
	t.Parallel()
	s := harness.Start(t, harness.Options{Env: map[string]string{"SCOREHUB_METRICS_ADDR": "127.0.0.1:0"}})
	m := metricsURL.FindStringSubmatch(s.Stdout())
	if m == nil {
		t.Fatalf("no metrics address printed:\n%s", s.Stdout())
	}
	if code, body := getStatus(t, s.Base+"/metrics"); code != http.StatusNotFound || strings.Contains(body, "scorehub_") {
		t.Errorf("GET /metrics on the public address: %d %.200s; want 404", code, body)
	}
	if code, body := getStatus(t, m[1]); code != http.StatusOK || !strings.Contains(body, "scorehub_queue_running") {
		t.Errorf("GET %s: %d %.200s; want the metrics", m[1], code, body)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if code, _ := getStatus(t, m[1]); code != 0 {
		t.Errorf("the metrics are still served after shutdown: %d", code)
	}
}
