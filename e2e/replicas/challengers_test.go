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

// TestChallengersAcrossReplicas: two replicas over one database score
// through a shadow, and the comparison route of either sums what both
// measured within a few seconds; outcomes fed back through one measure
// the predictions both kept, in the log they share.
func TestChallengersAcrossReplicas(t *testing.T) {
	c := startCluster(t, 2)
	a, b := c.replicas[0], c.replicas[1]
	model, err := os.ReadFile("../../examples/models/iris.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"champion", "challenger"} {
		a.must(t, http.StatusCreated, http.MethodPost,
			"/api/v1/models/iris/versions?label=species&classes=setosa,versicolor,virginica&features=sepal_length,sepal_width,petal_length,petal_width&description="+d,
			string(model))
	}
	deployment := "/api/v1/deployments/DEFAULT/rivals"
	a.must(t, http.StatusCreated, http.MethodPut, deployment,
		`{"enabled":true,"endpoints":[{"alias":"species","model":"iris@1","rowId":"id","challengers":[{"model":"iris@2","mode":"shadow"}]}]}`)
	testutil.Eventually(t, 10*time.Second, "the deployment on the second replica", func() bool { return b.serves(deployment) })

	score := func(r *replica, ids ...string) {
		t.Helper()
		rows := make([]string, len(ids))
		for i, id := range ids {
			rows[i] = `{"id":"` + id + `",` + strings.TrimPrefix(harness.IrisRow, "{")
		}
		res, err := r.plain.Post(r.Base+"/webapi/DEFAULT/api/v1/services/rivals/species", "application/json",
			strings.NewReader(`{"data":[`+strings.Join(rows, ",")+`]}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("scoring on %s: %d", r.Base, res.StatusCode)
		}
	}
	score(a, "a1", "a2", "a3")
	score(b, "b1", "b2", "b3", "b4")
	for i, r := range c.replicas {
		testutil.Eventually(t, 10*time.Second, fmt.Sprintf("replica %d summing both replicas' comparisons", i), func() bool {
			got := r.must(t, http.StatusOK, http.MethodGet, "/api/v1/endpoints/DEFAULT/rivals/species/challengers", "")
			cs, _ := got.json["challengers"].([]any)
			if len(cs) != 1 {
				return false
			}
			f, _ := cs[0].(map[string]any)
			return f["compared"] == 7.0 && f["agreed"] == 7.0
		})
	}
	var outcomes []string
	for _, id := range []string{"a1", "a2", "a3", "b1", "b2", "b3", "b4"} {
		outcomes = append(outcomes, `{"id":"`+id+`","actual":"versicolor"}`)
	}
	fed := b.must(t, http.StatusOK, http.MethodPost, "/api/v1/endpoints/DEFAULT/rivals/species/feedback", `{"data":[`+strings.Join(outcomes, ",")+`]}`)
	if fed.json["matched"] != 7.0 {
		t.Errorf("feedback through the second replica matched %v of 7 rows: the first replica's predictions are not shared", fed.json["matched"])
	}
	testutil.Eventually(t, 10*time.Second, "both models measured on the shared log", func() bool {
		got := a.must(t, http.StatusOK, http.MethodGet, "/api/v1/endpoints/DEFAULT/rivals/species/performance", "")
		models, _ := got.json["models"].([]any)
		if got.json["rowsWithFeedback"] != 7.0 || len(models) != 2 {
			return false
		}
		for _, m := range models {
			total, _ := m.(map[string]any)["total"].(map[string]any)
			if total["rows"] != 7.0 {
				return false
			}
		}
		return true
	})
}
