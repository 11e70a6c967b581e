package scorehub

import (
	"net/http"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
)

// TestMetricsNameTheModelVersion: a model endpoint's series carry the
// model version that answered, so that moving its alias shows on a
// dashboard; a version deleted takes its series with it.
func TestMetricsNameTheModelVersion(t *testing.T) {
	h := newService(t, Config{AdminPassword: adminPassword, Formats: []process.ModelFormat{&registrytest.LinearFormat{}}}).Handler()
	admin := signIn(t, h, "admin", adminPassword)
	for _, bias := range []float64{1, 2} {
		artifact := string(registrytest.LinearArtifact(bias, []string{"x"}, []float64{1}))
		if code, body := admin.send("POST", "/api/v1/models/churn/versions", "application/octet-stream", artifact); code != http.StatusCreated {
			t.Fatalf("upload: %d %s", code, body)
		}
	}
	admin.must("PUT", "/api/v1/models/churn/aliases/production", `{"version":1}`, http.StatusCreated, nil)
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[{"alias":"score","model":"churn@production"}]}`, http.StatusCreated, nil)
	anon := client{t: t, h: h}
	score := func() {
		t.Helper()
		anon.must("POST", "/webapi/DEFAULT/api/v1/services/churn/score", `{"data":[{"x":1}]}`, http.StatusOK, nil)
	}
	series := func(version string) string {
		return `scorehub_scoring_requests_total{alias="score",group="DEFAULT",model="churn",path="churn",status="200",version="` + version + `"}`
	}
	score()
	admin.must("PUT", "/api/v1/models/churn/aliases/production", `{"version":2}`, http.StatusOK, nil)
	score()
	score()
	_, metrics := anon.do("GET", "/metrics", "")
	for _, want := range []string{series("1") + " 1", series("2") + " 2"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("the metrics lack %s", want)
		}
	}
	admin.must("DELETE", "/api/v1/models/churn/versions/1", "", http.StatusNoContent, nil)
	if _, metrics := anon.do("GET", "/metrics", ""); strings.Contains(metrics, series("1")) || !strings.Contains(metrics, series("2")) {
		t.Errorf("after version 1 is deleted the metrics hold its series, or lost version 2's:\n%s", metrics)
	}
}
