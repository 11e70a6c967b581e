package standalone

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// TestManagementWritesSurviveRestart writes through the API, stops the
// server, starts it again on the same data, and reads and scores.
func TestManagementWritesSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const row = `{"data":[{"sepal_length":6.3,"sepal_width":3.3,"petal_length":6.0,"petal_width":2.5}]}`
	const scoreURL = "/webapi/flowers/api/v1/services/iris/species"

	s := harness.Start(t, harness.Options{Dir: dir})
	tok := s.AdminToken(t)
	writes := []struct {
		method, path, contentType, body string
		status                          int
	}{
		{"PUT", "/api/v1/queues/batch", "application/json", `{"maxConcurrent":2,"maxWaiting":7}`, 201},
		{"POST", "/api/v1/webapigroups", "application/json", `{"name":"flowers","description":"Flower models"}`, 201},
		{"POST", "/api/v1/deployments", "application/json",
			`{"group":"flowers","path":"iris","description":"Species","endpoints":[{"alias":"species","process":"iris","queue":"batch","timeoutMs":3000}]}`, 201},
		{"PATCH", "/api/v1/deployments/DEFAULT/iris", "application/merge-patch+json", `{"enabled":false}`, 200},
	}
	for _, w := range writes {
		if status, got := s.API(t, tok, w.method, w.path, w.contentType, w.body); status != w.status {
			t.Fatalf("%s %s: %d %v, want %d", w.method, w.path, status, got, w.status)
		}
	}
	if status, got := s.PostJSON(t, scoreURL, row); status != 200 {
		t.Fatalf("scoring before the restart: %d %v", status, got)
	}
	_, before := s.API(t, tok, "GET", "/api/v1/deployments/flowers/iris", "", "")
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	s = harness.Start(t, harness.Options{Dir: dir})
	tok = s.AdminToken(t)
	status, after := s.API(t, tok, "GET", "/api/v1/deployments/flowers/iris", "", "")
	if status != 200 {
		t.Fatalf("the deployment after the restart: %d %v", status, after)
	}
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("the deployment changed across the restart (-before +after):\n%s", d)
	}
	if status, q := s.API(t, tok, "GET", "/api/v1/queues/batch", "", ""); status != 200 || q["maxWaiting"] != 7.0 {
		t.Errorf("the queue after the restart: %d %v", status, q)
	}
	status, got := s.PostJSON(t, scoreURL, row)
	if status != 200 || got["data"].([]any)[0].(map[string]any)["prediction(species)"] != "virginica" {
		t.Errorf("scoring after the restart: %d %v", status, got)
	}
	if status, got := s.PostJSON(t, harness.IrisURL, row); status != 404 || got["error"].(map[string]any)["type"] != "endpoint_disabled" {
		t.Errorf("the demo disabled before the restart answered %d %v, want 404 endpoint_disabled", status, got)
	}
}
