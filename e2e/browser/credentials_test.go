package browser

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// The users of the htpasswd file the credential tests give the server:
// alice is an analyst, bob is in no group.
const (
	alicePassword = "alice's long password"
	bobPassword   = "bob's long password"
)

// usersFile writes the htpasswd file of alice and bob and returns its path.
func usersFile(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, u := range []struct{ line, password string }{
		{"alice:%s:analysts", alicePassword},
		{"bob:%s", bobPassword},
	} {
		// The least cost a users file may have: under the race detector a
		// login at the default cost takes seconds.
		hash, err := accounts.HashPassword(u.password, 10)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(strings.Replace(u.line, "%s", string(hash), 1) + "\n")
	}
	path := filepath.Join(t.TempDir(), "users.htpasswd")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runShellStdin runs script with sh -c in a session of its own, so that it
// has no terminal and curl reads the password it asks for from stdin,
// which gets input; env is added to the environment. It returns what the
// script printed.
func runShellStdin(t *testing.T, script, input string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdin = strings.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh -c of the page's command: %v\nstderr: %s\ncommand:\n%s", err, stderr.String(), script)
	}
	return string(out)
}

// callAs chooses how the page calls the endpoint in view.
func (b browser) callAs(kind string) {
	b.t.Helper()
	b.do("call as "+kind, chromedp.Click(chromedp.CSS("#call-as-"+kind)))
}

// offered returns the kinds of credentials the page offers for the
// endpoint in view, and the one chosen.
func (b browser) offered() (kinds []string, chosen string) {
	b.t.Helper()
	kinds = eval[[]string](b, `document.getElementById('call-as').hidden ? [] : [...document.querySelectorAll('input[name="call-as"]')].filter((r) => !r.closest('p').hidden).map((r) => r.value)`)
	chosen = eval[string](b, `(document.querySelector('input[name="call-as"]:checked') || {value: ''}).value`)
	return kinds, chosen
}

// openEndpoint opens the endpoint key from the menu and waits for its
// sample input.
func (b browser) openEndpoint(key string) {
	b.t.Helper()
	b.do("open "+key,
		chromedp.WaitVisible(chromedp.CSS(`button[data-endpoint="`+key+`"]`)),
		chromedp.Click(chromedp.CSS(`button[data-endpoint="`+key+`"]`)))
	group, _, _ := strings.Cut(key, "/")
	b.waitFor("the sample input of "+key, `document.getElementById('endpoint-crumbs').textContent.startsWith('`+group+` /') && document.getElementById('body').value.includes('sepal_length')`)
}

// wantPredictions checks the answer the page shows is the table of the
// four sample rows' species.
func (b browser) wantPredictions() {
	b.t.Helper()
	if code := b.text("#result-code"); code != "200 OK" {
		b.t.Fatalf("status shown %q, want 200 OK; error shown: %q %q%s", code, b.text("#result-error-message"), b.text("#result-error-auth"), b.problems())
	}
	predictions := eval[[]string](b, `[...document.querySelectorAll('#result-table td[data-column="prediction(species)"]')].map((td) => td.textContent)`)
	if d := cmp.Diff([]string{"setosa", "versicolor", "virginica", "virginica"}, predictions); d != "" {
		b.t.Errorf("prediction(species) cells (-want +got):\n%s", d)
	}
}

// createAPIToken creates an API token for owner as admin and returns its
// secret.
func createAPIToken(t *testing.T, srv *harness.Server, owner string) string {
	t.Helper()
	status, got := srv.API(t, srv.AdminToken(t), http.MethodPost, "/api/v1/apitokens", "application/json",
		`{"name":"test page","owner":"`+owner+`"}`)
	if status != http.StatusCreated {
		t.Fatalf("POST /api/v1/apitokens: %d %v", status, got)
	}
	secret, _ := got["token"].(string)
	if !strings.HasPrefix(secret, "scorehub_") {
		t.Fatalf("POST /api/v1/apitokens answered no token starting with scorehub_: %v", got)
	}
	return secret
}

// TestBrowserCallsAProtectedEndpointAsChosen calls an endpoint of a group
// that takes every kind of credential with each of them, right and wrong,
// runs the curl command the page shows for each, and checks that a group
// that takes Basic only offers only Basic.
func TestBrowserCallsAProtectedEndpointAsChosen(t *testing.T) {
	tab := newTab(t)
	srv := harness.Start(t, harness.Options{Args: []string{"-users", usersFile(t)}})
	base := srv.Base
	admin := srv.AdminToken(t)
	for _, w := range []struct{ path, body string }{
		{"/api/v1/webapigroups", `{"name":"secure","auth":{"mode":"token","groups":["analysts"],"schemes":["basic","apitoken","bearer"]}}`},
		{"/api/v1/deployments", `{"group":"secure","path":"iris","enabled":true,"endpoints":[{"alias":"classify","process":"iris"}]}`},
		{"/api/v1/webapigroups", `{"name":"gate","auth":{"mode":"token","schemes":["basic"]}}`},
		{"/api/v1/deployments", `{"group":"gate","path":"iris","enabled":true,"endpoints":[{"alias":"classify","process":"iris"}]}`},
	} {
		if status, got := srv.API(t, admin, http.MethodPost, w.path, "application/json", w.body); status != http.StatusCreated {
			t.Fatalf("POST %s: %d %v", w.path, status, got)
		}
	}
	const secure, gate = "secure/iris/classify", "gate/iris/classify"
	b := browser{t: t, ctx: tab}
	b.do("open the page", chromedp.Navigate(base+"/ui/"))
	b.signIn("alice", alicePassword)
	b.openEndpoint(secure)

	t.Run("every kind the group takes is offered, the idToken first, and it is sent", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		kinds, chosen := b.offered()
		if d := cmp.Diff([]string{"bearer", "basic", "apitoken"}, kinds); d != "" {
			t.Errorf("kinds offered (-want +got):\n%s", d)
		}
		if chosen != "bearer" {
			t.Errorf("chosen by default: %q, want the signed-in user's idToken", chosen)
		}
		if legend := b.text("#call-as legend"); legend != "Call as" {
			t.Errorf("the choice's legend is %q, want Call as", legend)
		}
		b.runTest()
		b.wantPredictions()
	})

	t.Run("Basic: a missing or wrong password is refused with a message that says so", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		b.callAs("basic")
		if user := eval[string](b, "document.getElementById('call-user').value"); user != "alice" {
			t.Errorf("user name field %q, want the signed-in alice", user)
		}
		b.do("press Run Test", chromedp.Click(chromedp.CSS("#run")))
		b.waitFor("the missing password message", `!document.getElementById('call-as-message').hidden`)
		if msg := b.text("#call-as-message"); msg != "Enter the password of alice." {
			t.Errorf("message %q, want it to ask for alice's password", msg)
		}
		if focused := eval[string](b, "document.activeElement.id"); focused != "call-password" {
			t.Errorf("focus on %q, want the password field", focused)
		}

		b.typeInto("#call-password", "not the password")
		b.runTest()
		b.waitFor("the refusal", `!document.getElementById('result-error-auth').hidden`)
		if code := b.text("#result-code"); code != "401 Unauthorized" {
			t.Errorf("status shown %q, want 401 Unauthorized", code)
		}
		want := `Refused: the user name and password of "alice" (Basic). The group secure takes user name and password (Basic), API token (apitoken) or idToken (Bearer).`
		if msg := b.text("#result-error-auth"); msg != want {
			t.Errorf("refusal shown:\n%s\nwant:\n%s", msg, want)
		}
		b.screenshot("ui-call-as-basic-refused.png")
		if !eval[bool](b, "document.getElementById('session').hidden === false") {
			t.Error("a refused password ended the session")
		}
	})

	t.Run("Basic: the right password gets the answer, and the curl command gets the same", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		b.typeInto("#call-password", alicePassword)
		b.runTest()
		b.wantPredictions()
		shown := b.rawJSON()

		b.do("show the curl command", chromedp.Click(chromedp.CSS("#show-curl")))
		b.do("wait for the curl command", chromedp.WaitVisible(chromedp.CSS("#curl")))
		command := b.text("#curl")
		if !strings.Contains(command, "-u 'alice' ") || strings.Contains(command, alicePassword) || strings.Contains(command, "Authorization") {
			t.Errorf("curl command for Basic: want -u 'alice' and curl asking for the password, nothing more:\n%s", command)
		}
		if d := cmp.Diff(shown, decodeJSON(t, "curl's answer", runShellStdin(t, command, alicePassword+"\n"))); d != "" {
			t.Errorf("the page showed (-) and the curl command, given the password it asks for, answered (+):\n%s", d)
		}

		b.do("put the password in the command", chromedp.Click(chromedp.CSS("#curl-token")))
		if label := b.text("#curl-token-label"); !strings.Contains(label, "Put the password in the command") {
			t.Errorf("the box says %q, want it to say it puts the password in the command", label)
		}
		command = b.text("#curl")
		if !strings.Contains(command, "-u 'alice:"+strings.ReplaceAll(alicePassword, "'", `'\''`)+"'") {
			t.Errorf("with the box ticked the command should carry the password:\n%s", command)
		}
		if d := cmp.Diff(shown, decodeJSON(t, "curl's answer", runShell(t, command))); d != "" {
			t.Errorf("the page showed (-) and the curl command with the password answered (+):\n%s", d)
		}
	})

	t.Run("Basic: a user outside the group's user groups is not allowed", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		b.typeInto("#call-user", "bob")
		b.typeInto("#call-password", bobPassword)
		b.runTest()
		b.waitFor("the refusal", `!document.getElementById('result-error-auth').hidden`)
		if code := b.text("#result-code"); code != "403 Forbidden" {
			t.Errorf("status shown %q, want 403 Forbidden", code)
		}
		want := `Not allowed: the user name and password of "bob" (Basic) was accepted, but may not call the group secure.`
		if msg := b.text("#result-error-auth"); msg != want {
			t.Errorf("refusal shown:\n%s\nwant:\n%s", msg, want)
		}
		b.typeInto("#call-user", "alice")
	})

	t.Run("API token: pasted, it is sent; the curl command reads it from a variable", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		secret := createAPIToken(t, srv, "alice")
		b.callAs("apitoken")
		if typ := eval[string](b, "document.getElementById('call-token').type"); typ != "password" {
			t.Errorf("the API token field is of type %q, want password", typ)
		}
		if eval[bool](b, "document.getElementById('curl-token').checked") {
			t.Error("the box ticked for the password stays ticked for the API token")
		}
		b.typeInto("#call-token", "scorehub_not-a-token")
		b.runTest()
		b.waitFor("the refusal", `!document.getElementById('result-error-auth').hidden`)
		if msg := b.text("#result-error-auth"); !strings.HasPrefix(msg, "Refused: the API token (apitoken). The group secure takes ") {
			t.Errorf("refusal shown %q, want it to name the API token", msg)
		}

		b.typeInto("#call-token", secret)
		b.runTest()
		b.wantPredictions()
		shown := b.rawJSON()
		command := b.text("#curl")
		if !strings.Contains(command, `-H "Authorization: apitoken $SCOREHUB_API_TOKEN"`) || !strings.Contains(command, "# Set SCOREHUB_API_TOKEN") || strings.Contains(command, secret) {
			t.Errorf("curl command for an API token: want it from $SCOREHUB_API_TOKEN, with a line saying to set it, and not the token:\n%s", command)
		}
		if d := cmp.Diff(shown, decodeJSON(t, "curl's answer", runShellStdin(t, command, "", "SCOREHUB_API_TOKEN="+secret))); d != "" {
			t.Errorf("the page showed (-) and the curl command with SCOREHUB_API_TOKEN set answered (+):\n%s", d)
		}
		b.do("put the API token in the command", chromedp.Click(chromedp.CSS("#curl-token")))
		command = b.text("#curl")
		if !strings.Contains(command, "-H 'Authorization: apitoken "+secret+"'") {
			t.Errorf("with the box ticked the command should carry the API token:\n%s", command)
		}
		if d := cmp.Diff(shown, decodeJSON(t, "curl's answer", runShellStdin(t, command, ""))); d != "" {
			t.Errorf("the page showed (-) and the curl command with the API token answered (+):\n%s", d)
		}
		b.screenshot("ui-call-as-apitoken.png")

		// Nothing typed outlives the tab: not in storage, not in the URL.
		stored := eval[string](b, `JSON.stringify([localStorage, sessionStorage, document.cookie, location.href])`)
		if strings.Contains(stored, secret) || strings.Contains(stored, alicePassword) || strings.Contains(stored, "scorehub_") {
			t.Errorf("a secret is kept outside the form: %s", stored)
		}
	})

	t.Run("a group that takes Basic only offers Basic only, and another endpoint clears the secrets", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		b.openEndpoint(gate)
		kinds, chosen := b.offered()
		if d := cmp.Diff([]string{"basic"}, kinds); d != "" {
			t.Errorf("kinds offered for gate (-want +got):\n%s", d)
		}
		if chosen != "basic" {
			t.Errorf("chosen %q, want basic", chosen)
		}
		secrets := eval[string](b, "document.getElementById('call-password').value + document.getElementById('call-token').value")
		if secrets != "" {
			t.Errorf("the password and API token typed for secure are still in the form after opening gate")
		}
		b.typeInto("#call-password", alicePassword)
		b.runTest()
		b.wantPredictions()
		command := b.text("#curl")
		if strings.Contains(command, "TOKEN") || !strings.Contains(command, "-u 'alice'") {
			t.Errorf("curl command for a Basic-only group:\n%s", command)
		}
	})

	t.Run("a public endpoint offers no credentials and sends none", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		b.openEndpoint(irisKey)
		if !eval[bool](b, "document.getElementById('call-as').hidden") {
			t.Error("a public endpoint offers credentials")
		}
		b.runTest()
		b.wantPredictions()
		if command := b.text("#curl"); strings.Contains(command, "Authorization") || strings.Contains(command, " -u ") {
			t.Errorf("curl command for a public group sends credentials:\n%s", command)
		}
	})

	if p := eval[[]string](b, "window.__problems"); len(p) > 0 {
		t.Errorf("the page had problems:\n  %s", strings.Join(p, "\n  "))
	}
}
