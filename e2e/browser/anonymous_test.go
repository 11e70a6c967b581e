package browser

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// TestBrowserTestsAPublicEndpointWithoutSigningIn opens a deep link to the
// public iris endpoint in a page never signed in: it is listed, its body
// starts from the process's sample and runs, a protected group's endpoint is not listed until the tester signs in,
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
	// The sample is read without a token for a public endpoint: the body
	// starts from it, with no hint that signing in would give it.
	var body, want any
	if err := json.Unmarshal([]byte(eval[string](b, "document.getElementById('body').value")), &body); err != nil {
		t.Fatalf("the request body before sign-in is not JSON: %v", err)
	}
	if err := json.Unmarshal(sample, &want); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, body); d != "" {
		t.Errorf("request body before sign-in, want the process's sample (-want +got):\n%s", d)
	}
	if !eval[bool](b, "document.getElementById('body-sample-hint').hidden") {
		t.Errorf("a hint beside the sample says %q; the sample needs no sign-in", b.text("#body-sample-hint"))
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

// TestBrowserSaysWhyALinkedEndpointIsNotShown opens a link to a protected
// group's endpoint: a visitor not signed in is asked to sign in rather
// than shown the welcome card; signed in as someone the group keeps out,
// told that it does not exist or is not theirs to see; signed in as one
// it admits, shown the endpoint.
func TestBrowserSaysWhyALinkedEndpointIsNotShown(t *testing.T) {
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
	const secure = "secure/iris/classify"
	shown := func(b browser, id string) bool {
		return !eval[bool](b, "document.getElementById('"+id+"').hidden")
	}

	b := browser{t: t, ctx: tab}
	b.do("open a link to the protected endpoint", chromedp.Navigate(srv.Base+"/ui/#"+secure))
	b.waitFor("the menu", `document.querySelector('button[data-endpoint="`+irisKey+`"]')`)
	b.waitFor("a card in view", `!document.getElementById('unseen').hidden || !document.getElementById('welcome').hidden`)
	if got := b.text("#unseen-title"); !shown(b, "unseen") || got != "Sign in to see this endpoint" {
		t.Errorf("signed out, the link shows %q (shown: %v), want %q", got, shown(b, "unseen"), "Sign in to see this endpoint")
	}
	if shown(b, "welcome") || shown(b, "endpoint") {
		t.Error("signed out, the link to a protected endpoint shows the welcome card or an endpoint")
	}
	b.screenshot("ui-unseen-endpoint.png")

	b.signIn("bob", bobPassword)
	b.waitFor("the session", `!document.getElementById('session').hidden`)
	b.waitFor("the message for a tester signed in", `document.getElementById('unseen-title').textContent !== 'Sign in to see this endpoint'`)
	if msg := b.text("#unseen-message"); !shown(b, "unseen") || !strings.Contains(msg, secure) || !strings.Contains(msg, "does not exist") || !strings.Contains(msg, "bob") {
		t.Errorf("signed in as bob, whom the group keeps out, the page says %q (shown: %v); want that %s does not exist or is not his to see",
			msg, shown(b, "unseen"), secure)
	}

	b.do("sign out", chromedp.Click(chromedp.CSS("#sign-out")))
	b.signIn("alice", alicePassword)
	b.waitFor("the protected endpoint", `document.getElementById('endpoint-crumbs').textContent === 'secure / iris' && !document.getElementById('endpoint').hidden`)
	if shown(b, "unseen") {
		t.Error("the message stays beside the endpoint once it can be seen")
	}
	if p := eval[[]string](b, "window.__problems"); len(p) > 0 {
		t.Errorf("the page had problems: %v", p)
	}
}
