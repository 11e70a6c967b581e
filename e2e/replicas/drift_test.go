package replicas

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/testutil"
)

// TestDriftAndPayloadsAcrossReplicas: two replicas over one database
// score rows of one endpoint, and the drift route of either adds up both
// replicas' windows within a few seconds; the rows both logged are in
// the payload log they share.
func TestDriftAndPayloadsAcrossReplicas(t *testing.T) {
	c := startCluster(t, 2)
	a, b := c.replicas[0], c.replicas[1]
	model, err := os.ReadFile("../../examples/models/iris.json")
	if err != nil {
		t.Fatal(err)
	}
	a.must(t, http.StatusCreated, http.MethodPost,
		"/api/v1/models/iris/versions?label=species&classes=setosa,versicolor,virginica&features=sepal_length,sepal_width,petal_length,petal_width",
		string(model))
	var reference []string
	for i := range 40 {
		reference = append(reference, fmt.Sprintf(`{"sepal_length":%g,"sepal_width":%g,"petal_length":%g,"petal_width":%g}`,
			4.5+float64(i%8)*0.4, 2.2+float64(i%5)*0.4, 1+float64(i%10)*0.6, 0.1+float64(i%6)*0.4))
	}
	a.must(t, http.StatusOK, http.MethodPut, "/api/v1/models/iris/versions/1/reference", `{"data":[`+strings.Join(reference, ",")+`]}`)
	deployment := "/api/v1/deployments/DEFAULT/watched"
	a.must(t, http.StatusCreated, http.MethodPut, deployment,
		`{"enabled":true,"endpoints":[{"alias":"species","model":"iris@1","payloadLog":{"rate":1}}]}`)
	testutil.Eventually(t, 10*time.Second, "the deployment on the second replica", func() bool { return b.serves(deployment) })

	score := func(r *replica, n int) {
		t.Helper()
		rows := strings.TrimSuffix(strings.Repeat(harness.IrisRow+",", n), ",")
		res, err := r.plain.Post(r.Base+"/webapi/DEFAULT/api/v1/services/watched/species", "application/json", strings.NewReader(`{"data":[`+rows+`]}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("scoring on %s: %d", r.Base, res.StatusCode)
		}
	}
	score(a, 3)
	score(b, 4)
	for i, r := range c.replicas {
		testutil.Eventually(t, 10*time.Second, fmt.Sprintf("replica %d adding up both replicas' drift", i), func() bool {
			got, err := r.do(http.MethodGet, "/api/v1/endpoints/DEFAULT/watched/species/drift", "")
			if err != nil || got.status != http.StatusOK {
				return false
			}
			features, _ := got.json["features"].([]any)
			if got.json["rows"] != 7.0 || got.json["replicas"] != 2.0 || len(features) != 4 {
				return false
			}
			// Every row had a petal_length of 1.4: all seven in one bin.
			for _, f := range features {
				f := f.(map[string]any)
				if f["name"] == "petal_length" {
					live := f["live"].(map[string]any)["counts"].([]any)
					var sum float64
					for _, n := range live {
						sum = max(sum, n.(float64))
					}
					return sum == 7
				}
			}
			return false
		})
	}
	// The first replica appends its rows off the answer's path.
	testutil.Eventually(t, 10*time.Second, "both replicas' 7 rows in the payload log, read through the second", func() bool {
		got := b.must(t, http.StatusOK, http.MethodGet, "/api/v1/endpoints/DEFAULT/watched/species/payloads", "")
		records, _ := got.json["records"].([]any)
		return len(records) == 7
	})
}
