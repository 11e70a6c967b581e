package management_test

import (
	"testing"
)

// A change through the API is live for scoring at once: create, score,
// disable (404 endpoint_disabled), enable, change the process, delete
// (404 not_found) — no restart in between.
func TestChangesAreLiveForScoring(t *testing.T) {
	f := newFixture(t)
	admin := func(method, path, body, contentType string) response {
		return f.do(t, request{method: method, path: path, token: f.admin, body: body, contentType: contentType})
	}
	const row = `{"data":[{"x":21,"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`

	f.score(t, "risk", "churn", "predict", row).want(t, 404, "not_found")
	admin("POST", "/api/v1/webapigroups", `{"name":"risk"}`, "").want(t, 201, "")
	admin("POST", "/api/v1/deployments", `{"group":"risk","path":"churn","endpoints":[{"alias":"predict","process":"double"}]}`, "").want(t, 201, "")

	r := f.score(t, "risk", "churn", "predict", row)
	r.want(t, 200, "")
	if got := r.json["data"].([]any)[0].(map[string]any)["double"]; got != 42.0 {
		t.Errorf("double = %v, want 42", got)
	}

	admin("PATCH", "/api/v1/deployments/risk/churn", `{"enabled":false}`, mergePatch).want(t, 200, "")
	f.score(t, "risk", "churn", "predict", row).want(t, 404, "endpoint_disabled")

	admin("PATCH", "/api/v1/deployments/risk/churn", `{"enabled":true,"endpoints":[{"alias":"predict","process":"iris"}]}`, mergePatch).want(t, 200, "")
	r = f.score(t, "risk", "churn", "predict", row)
	r.want(t, 200, "")
	if got := r.json["data"].([]any)[0].(map[string]any)["prediction(species)"]; got != "setosa" {
		t.Errorf("prediction = %v, want setosa from the process the patch named", got)
	}

	admin("DELETE", "/api/v1/deployments/risk/churn", "", "").want(t, 204, "")
	f.score(t, "risk", "churn", "predict", row).want(t, 404, "not_found")
}
