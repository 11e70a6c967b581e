package browser

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// TestBrowserTestsAModelEndpoint deploys the example XGBoost model of
// docs/models.md behind an alias and opens its endpoint on the test page: it
// is listed like a process's, its sample input is a row of the model's
// features, and running it shows the model's prediction and confidences.
func TestBrowserTestsAModelEndpoint(t *testing.T) {
	tab := newTab(t)
	srv := harness.Start(t, harness.Options{})
	model, err := os.ReadFile("../../examples/models/iris.json")
	if err != nil {
		t.Fatal(err)
	}
	admin := srv.AdminToken(t)
	for _, w := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/v1/models/iris/versions?label=species&classes=setosa,versicolor,virginica" +
			"&features=sepal_length,sepal_width,petal_length,petal_width", string(model)},
		{http.MethodPut, "/api/v1/models/iris/aliases/production", `{"version":1}`},
		{http.MethodPost, "/api/v1/deployments", `{"group":"DEFAULT","path":"flowers","enabled":true,"endpoints":[{"alias":"species","model":"iris@production"}]}`},
	} {
		if status, got := srv.API(t, admin, w.method, w.path, "application/json", w.body); status != http.StatusCreated {
			t.Fatalf("%s %s: %d %v", w.method, w.path, status, got)
		}
	}

	const key = "DEFAULT/flowers/species"
	b := browser{t: t, ctx: tab}
	b.do("open the page", chromedp.Navigate(srv.Base+"/ui/"))
	b.signIn("admin", harness.AdminPassword) // the sample comes with a token
	b.openEndpoint(key)
	sample := decodeJSON(t, "the sample input", eval[string](b, "document.getElementById('body').value"))
	zero := json.Number("0")
	want := map[string]any{"data": []any{map[string]any{"sepal_length": zero, "sepal_width": zero, "petal_length": zero, "petal_width": zero}}}
	if d := cmp.Diff(want, sample); d != "" {
		t.Errorf("sample input of the model endpoint (-want +got):\n%s", d)
	}

	b.runTwoFlowers()
	for _, c := range []string{"setosa", "versicolor", "virginica"} {
		if n := eval[int](b, `document.querySelectorAll('#result-table td[data-column="confidence(`+c+`)"]').length`); n != 2 {
			t.Errorf("%d confidence(%s) cells, want one per row", n, c)
		}
	}
	if p := eval[[]string](b, "window.__problems"); len(p) > 0 {
		t.Errorf("the page had problems: %v", p)
	}
}

// runTwoFlowers runs a setosa and a virginica through the open iris model
// endpoint and checks the species the page shows.
func (b browser) runTwoFlowers() {
	b.t.Helper()
	b.typeInto("#body", `{"data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2},{"sepal_length":6.3,"sepal_width":3.3,"petal_length":6.0,"petal_width":2.5}]}`)
	b.runTest()
	if code := b.text("#result-code"); code != "200 OK" {
		b.t.Fatalf("status shown %q, want 200 OK%s", code, b.problems())
	}
	predictions := eval[[]string](b, `[...document.querySelectorAll('#result-table td[data-column="prediction(species)"]')].map((td) => td.textContent)`)
	if d := cmp.Diff([]string{"setosa", "virginica"}, predictions); d != "" {
		b.t.Errorf("prediction(species) cells (-want +got):\n%s", d)
	}
}
