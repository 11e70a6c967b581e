package browser

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// TestBrowserTestsAPublicEndpointWithoutSigningIn opens a deep link to the
// public iris endpoint in a page never signed in: it is listed and runs,
// a protected group's endpoint is not listed until the tester signs in,
// and signing in keeps the endpoint in view.
func TestBrowserTestsAPublicEndpointWithoutSigningIn(t *testing.T) {
	tab := newTab(t)
	srv := harness.Start(t, harness.Options{Args: []string{"-users", usersFile(t)}})
	admin := srv.AdminToken(t)
	for _, w := range []struct{ path, body string }{
		{"/api/v1/webapigroups", `{"name":"secure","auth":{"mode":"token","groups":["analysts"]}}`},
		{"/api/v1/deployments", `{"group":"secure","path":"iris","enabled":true,"endpoints":[{"alias":"classify","process":"iris"}]}`},
	} {
		if status, got := srv.API(t, admin, http.MethodPost, w.path, "application/json", w.body); status != http.StatusCreated {
			t.Fatalf("POST %s: %d %v", w.path, status, got)
		}
	}
	status, process := srv.API(t, admin, http.MethodGet, "/api/v1/processes/iris", "", "")
	if status != http.StatusOK || process["sample"] == nil {
		t.Fatalf("GET /api/v1/processes/iris: %d %v", status, process)
	}
	sample, err := json.Marshal(map[string]any{"data": process["sample"]})
	if err != nil {
		t.Fatal(err)
	}
	const secure = "secure/iris/classify"
	listed := func(b browser, key string) bool {
		return eval[bool](b, `!!document.querySelector('button[data-endpoint="`+key+`"]')`)
	}

	b := browser{t: t, ctx: tab}
	b.do("open a link to the iris endpoint", chromedp.Navigate(srv.Base+"/ui/#"+irisKey))
	b.waitFor("the iris endpoint", `document.getElementById('endpoint-crumbs').textContent === 'DEFAULT / iris' && document.getElementById('body').value.includes('"data"')`)
	if !listed(b, irisKey) {
		t.Errorf("%s is not in the menu before sign-in%s", irisKey, b.problems())
	}
	if listed(b, secure) {
		t.Errorf("%s of a protected group is in the menu before sign-in", secure)
	}
	if got := b.text("#menu-signin"); got != "Sign in to see protected endpoints" || eval[bool](b, "document.getElementById('menu-signin').hidden") {
		t.Errorf("menu sign-in button %q (hidden: %v), want it shown", got, eval[bool](b, "document.getElementById('menu-signin').hidden"))
	}
	if hint := b.text("#body-sample-hint"); !strings.Contains(hint, "sign in") {
		t.Errorf("hint beside the empty sample %q, want it to say signing in gives the sample", hint)
	}

	b.typeInto("#body", string(sample))
	b.runTest()
	b.wantPredictions()
	if stored := eval[string](b, `JSON.stringify([localStorage.length, sessionStorage.length, document.cookie])`); stored != `[0,0,""]` {
		t.Errorf("the page stored %s in the browser, want nothing", stored)
	}

	b.signIn("alice", alicePassword)
	b.do("wait for the protected endpoint", chromedp.WaitVisible(chromedp.CSS(`button[data-endpoint="`+secure+`"]`)))
	if got := b.text("#endpoint-crumbs") + " " + b.text("#endpoint-title"); got != "DEFAULT / iris classify" {
		t.Errorf("endpoint in view after sign-in %q, want the iris endpoint kept", got)
	}
	if got := b.text("#result-code"); got != "200 OK" {
		t.Errorf("result after sign-in %q, want the answer shown before kept", got)
	}
	if !eval[bool](b, "document.getElementById('menu-signin').hidden") {
		t.Error("the menu still offers to sign in after sign-in")
	}
}
