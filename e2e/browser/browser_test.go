// Package browser drives Debian's chromium, headless, through the Chrome
// DevTools Protocol against the reference server, as a person would use
// the endpoint test page.
package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/testenv"
	"github.com/scorehub/scorehub/internal/testutil"
)

// The browser tests drive Debian's chromium (headless) through the Chrome
// DevTools Protocol against the standalone server, as a person would use
// the endpoint test page. Set SCOREHUB_TEST_ARTIFACTS to a directory to keep
// the screenshot there instead of in the test's temporary directory.

// waitLimit bounds each wait for the page: a generous bound so a loaded
// machine is not mistaken for a broken page, never a speed assertion.
const waitLimit = 45 * time.Second

// browserSetup records, in every document the tab opens, what a reviewer
// would see in the console: Content-Security-Policy violations and uncaught
// errors.
const browserSetup = `
window.__problems = [];
document.addEventListener('securitypolicyviolation', (e) => window.__problems.push('CSP blocked ' + e.violatedDirective + ' ' + e.blockedURI));
window.addEventListener('error', (e) => window.__problems.push('error: ' + e.message));
window.addEventListener('unhandledrejection', (e) => window.__problems.push('unhandled rejection: ' + e.reason));
`

// newTab starts a headless chromium with a fresh profile (once per test)
// and returns a tab in it; everything is stopped when the test ends.
func newTab(t *testing.T) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	var chrome string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			chrome = p
			break
		}
	}
	if chrome == "" {
		testenv.SkipOrFail(t, "no chromium, chromium-browser or google-chrome in PATH (apt-get install chromium)")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.SkipOrFail(t, "no curl in PATH: the test runs the page's curl command")
	}
	profile := t.TempDir()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chrome),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
	)
	ctx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser to exit, before the profile is removed
	})
	// The first Run starts the browser; it must not carry a timeout.
	_, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) (page.ScriptIdentifier, error) {
		r, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: browserSetup})
		return r.Identifier, err
	})
	if err != nil {
		t.Fatalf("start %s: %v", chrome, err)
	}
	return ctx
}

// browser is one tab under test.
type browser struct {
	t   *testing.T
	ctx context.Context
}

// do runs steps with the wait limit, failing the test on an error.
func (b browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitLimit)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v%s", what, err, b.problems())
	}
}

// text returns the text content of the element sel.
func (b browser) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitLimit)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("read %s: %v%s", sel, err, b.problems())
	}
	return s
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](b browser, expr string, opts ...chromedp.EvaluateOption) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitLimit)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor waits until the JavaScript expression cond is true. It polls
// from the protocol side, as the page's Content-Security-Policy rightly
// forbids the eval that in-page polling would need.
func (b browser) waitFor(what, cond string) {
	b.t.Helper()
	var err error
	if !testutil.Poll(waitLimit, func() bool {
		ctx, cancel := context.WithTimeout(b.ctx, waitLimit)
		defer cancel()
		var ok bool
		ok, err = chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+cond+")"))
		return err == nil && ok
	}) {
		b.t.Fatalf("waiting for %s: %v (not true: %s)%s", what, err, cond, b.problems())
	}
}

// problems describes the CSP violations and script errors the page had.
func (b browser) problems() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	p, err := chromedp.Run(ctx, chromedp.Evaluate[[]string]("window.__problems || []"))
	if err != nil || len(p) == 0 {
		return ""
	}
	return "\npage problems:\n  " + strings.Join(p, "\n  ")
}

// typeInto replaces the value of the input or textarea sel by typing s, so
// the page sees the input events a person's typing makes.
func (b browser) typeInto(sel, s string) {
	b.t.Helper()
	q, _ := json.Marshal(sel)
	eval[bool](b, "(document.querySelector("+string(q)+").value = '') === ''")
	b.do("type into "+sel, chromedp.SendKeys(chromedp.CSS(sel), s))
}

// runTest presses Run Test and waits for the answer to be shown.
func (b browser) runTest() {
	b.t.Helper()
	b.do("press Run Test", chromedp.Click(chromedp.CSS("#run")))
	b.waitFor("the answer", `!document.getElementById('run').disabled && !document.getElementById('result').hidden && document.getElementById('result-code')`)
}

// rawJSON returns the JSON the page shows for the last answer, decoded.
func (b browser) rawJSON() any {
	b.t.Helper()
	return decodeJSON(b.t, "the page's raw JSON", b.text("#raw-json"))
}

func decodeJSON(t *testing.T, what, s string) any {
	t.Helper()
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber() // compare numbers as the digits sent
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", what, err, s)
	}
	return v
}

// runShell runs script with sh -c, as a person pasting it would, and
// returns what it printed.
func runShell(t *testing.T, script string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh -c of the page's command: %v\nstderr: %s\ncommand:\n%s", err, stderr.String(), script)
	}
	return string(out)
}

func artifactDir(t *testing.T) string {
	if d := os.Getenv("SCOREHUB_TEST_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

func (b browser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitLimit)
	defer cancel()
	eval[bool](b, "window.scrollTo(0, 0) === undefined") // the sticky menu then sits at the top
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(artifactDir(b.t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot of the test page: %s", path)
}

// signIn fills in the sign-in form, submits it and waits for the answer:
// a refusal, or the menu of the session it starts, so that what the test
// does next is not undone by the menu's reload.
func (b browser) signIn(user, password string) {
	b.t.Helper()
	b.do("wait for the sign-in form", chromedp.WaitVisible(chromedp.CSS("#username")))
	b.typeInto("#username", user)
	b.typeInto("#password", password)
	b.do("submit the sign-in form", chromedp.Click(chromedp.CSS("#signin-submit")))
	b.waitFor("the sign-in's answer", `!document.getElementById('signin-submit').disabled &&
		(document.getElementById('session').hidden || document.getElementById('queue-list'))`)
}

const irisKey = "DEFAULT/iris/classify"

// TestBrowserEndpointTestPage walks through the page as a person would:
// sign in (first with a wrong password), find the iris endpoint, read its
// URL, run a test, copy the curl command and run it, send broken JSON, and
// use an endpoint of a group that needs a token.
func TestBrowserEndpointTestPage(t *testing.T) {
	tab := newTab(t)
	srv := harness.Start(t, harness.Options{})
	base := srv.Base
	b := browser{t: t, ctx: tab}

	b.do("open /ui", chromedp.Navigate(base+"/ui"))
	if loc := eval[string](b, "location.pathname"); loc != "/ui/" {
		t.Errorf("/ui led to %s, want /ui/", loc)
	}
	if bg := eval[string](b, "getComputedStyle(document.getElementById('signin-submit')).backgroundColor"); bg != "rgb(31, 79, 209)" {
		t.Errorf("the sign-in button's background is %q: the stylesheet did not load under the page's CSP and integrity check", bg)
	}

	t.Run("a wrong password is refused with a clear message", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		b.signIn("admin", "not the password")
		b.waitFor("the sign-in message", `!document.getElementById('signin-message').hidden`)
		if msg := b.text("#signin-message"); msg != "Sign-in failed: the username or password is not correct." {
			t.Errorf("message %q, want it to say the username or password is not correct", msg)
		}
		if !eval[bool](b, "document.getElementById('session').hidden") {
			t.Error("signed in after a failed sign-in")
		}
	})

	t.Run("sign in and find the iris endpoint with its URL", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		b.typeInto("#password", harness.AdminPassword)
		b.do("submit the sign-in form", chromedp.Click(chromedp.CSS("#signin-submit")))
		b.do("wait for the menu", chromedp.WaitVisible(chromedp.CSS("#session")), chromedp.WaitVisible(chromedp.CSS(`#queue-list`)))
		if user := b.text("#session-user"); user != "admin" {
			t.Errorf("signed in as %q, want admin", user)
		}
		if got := b.text(`button[data-endpoint="` + irisKey + `"] .badge`); got != "enabled" {
			t.Errorf("iris endpoint state in the menu %q, want enabled", got)
		}
		if q := b.text(`#queue-list li[data-queue="DEFAULT"]`); !strings.Contains(q, "running") {
			t.Errorf("queue figures in the menu: %q, want running/waiting/done figures", q)
		}
		b.do("open the iris endpoint", chromedp.Click(chromedp.CSS(`button[data-endpoint="`+irisKey+`"]`)))
		b.waitFor("the sample input", `document.getElementById('body').value.includes('sepal_length')`)
		url := eval[string](b, "document.getElementById('endpoint-url').value")
		if want := base + harness.IrisURL; url != want {
			t.Errorf("endpoint URL %q, want %q", url, want)
		}
		if stored := eval[int](b, "localStorage.length + sessionStorage.length + document.cookie.length"); stored != 0 {
			t.Errorf("the page stored %d things in the browser, want the token in memory only", stored)
		}
	})

	t.Run("Run Test shows the prediction, and the curl command gives the same answer", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		b.runTest()
		if code := b.text("#result-code"); code != "200 OK" {
			t.Fatalf("status shown %q, want 200 OK%s", code, b.problems())
		}
		if d := b.text("#result-duration"); !regexp.MustCompile(`^\d+ ms$`).MatchString(d) {
			t.Errorf("duration shown %q, want milliseconds", d)
		}
		head := eval[[]string](b, `[...document.querySelectorAll('#result-table th[data-column]')].map((th) => th.textContent)`)
		wantHead := []string{"prediction(species)", "confidence(setosa)", "confidence(versicolor)", "confidence(virginica)",
			"sepal_length", "sepal_width", "petal_length", "petal_width"}
		if d := cmp.Diff(wantHead, head); d != "" {
			t.Errorf("table columns, results then the inputs echoed (-want +got):\n%s", d)
		}
		predictions := eval[[]string](b, `[...document.querySelectorAll('#result-table td[data-column="prediction(species)"]')].map((td) => td.textContent)`)
		if d := cmp.Diff([]string{"setosa", "versicolor", "virginica", "virginica"}, predictions); d != "" {
			t.Errorf("prediction(species) cells (-want +got):\n%s", d)
		}
		highlighted := eval[bool](b, `document.querySelector('#result-table th[data-column="prediction(species)"]').classList.contains('result-col') && !document.querySelector('#result-table th[data-column="sepal_length"]').classList.contains('result-col')`)
		if !highlighted {
			t.Error("result columns are not highlighted apart from input columns")
		}
		shown := b.rawJSON()

		b.do("show the curl command", chromedp.Click(chromedp.CSS("#show-curl")))
		b.do("wait for the curl command", chromedp.WaitVisible(chromedp.CSS("#curl")))
		command := b.text("#curl")
		for _, want := range []string{"curl ", "'" + base + harness.IrisURL + "'", "-H 'Content-Type: application/json'", "--data-raw '"} {
			if !strings.Contains(command, want) {
				t.Errorf("curl command lacks %q:\n%s", want, command)
			}
		}
		if strings.Contains(command, "Authorization") {
			t.Errorf("curl command for a public group sends a token:\n%s", command)
		}
		got := decodeJSON(t, "curl's answer", runShell(t, command))
		if d := cmp.Diff(shown, got); d != "" {
			t.Errorf("the page showed (-) and the curl command answered (+):\n%s", d)
		}
		b.screenshot("ui-test-page.png")
	})

	t.Run("the curl command quotes text for the shell", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		const note = `it's "quoted" $HOME ` + "`id`" + ` \ back\slash; echo no`
		noteJSON, _ := json.Marshal(note)
		b.typeInto("#body", `{"data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2,"note":`+string(noteJSON)+`}]}`)
		b.runTest()
		b.waitFor("the answer with the note", `document.getElementById('raw-json').textContent.includes('it\'s')`)
		shown := b.rawJSON()
		command := b.text("#curl")
		got := decodeJSON(t, "curl's answer", runShell(t, command))
		if d := cmp.Diff(shown, got); d != "" {
			t.Errorf("the page showed (-) and the curl command answered (+):\n%s\ncommand:\n%s", d, command)
		}
		row := got.(map[string]any)["data"].([]any)[0].(map[string]any)
		if row["note"] != note {
			t.Errorf("the note came back through the shell as %q, want %q unchanged", row["note"], note)
		}
	})

	t.Run("invalid JSON shows the error type of the 400", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		b.typeInto("#body", `{"data":[{"sepal_length":5.1,"sepal_width":3.5,}]}`)
		b.runTest()
		b.waitFor("the error", `!document.getElementById('result-error').hidden`)
		if code := b.text("#result-code"); code != "400 Bad Request" {
			t.Errorf("status shown %q, want 400 Bad Request", code)
		}
		if typ := b.text("#result-error-type"); typ != "malformed_json" {
			t.Errorf("error type shown %q, want malformed_json", typ)
		}
		if msg := b.text("#result-error-message"); msg == "" {
			t.Error("the error's message is not shown")
		}
		if !eval[bool](b, "document.getElementById('result-table-wrap').hidden") {
			t.Error("a result table is still shown beside the error")
		}
	})

	t.Run("a group that needs a token: the page sends it, the curl command says where it goes", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		token := srv.AdminToken(t)
		for _, w := range []struct{ path, body string }{
			{"/api/v1/webapigroups", `{"name":"secure","description":"Needs an idToken","auth":{"mode":"token"}}`},
			{"/api/v1/deployments", `{"group":"secure","path":"iris","enabled":true,"endpoints":[{"alias":"classify","process":"iris"}]}`},
		} {
			if status, got := srv.API(t, token, http.MethodPost, w.path, "application/json", w.body); status != http.StatusCreated {
				t.Fatalf("POST %s: %d %v", w.path, status, got)
			}
		}
		const key = "secure/iris/classify"
		b.do("refresh the menu", chromedp.Click(chromedp.CSS("#refresh")))
		b.do("open the protected endpoint",
			chromedp.WaitVisible(chromedp.CSS(`button[data-endpoint="`+key+`"]`)),
			chromedp.Click(chromedp.CSS(`button[data-endpoint="`+key+`"]`)))
		b.waitFor("the sample input", `document.getElementById('endpoint-title').textContent === 'classify' && document.getElementById('body').value.includes('sepal_length') && document.getElementById('endpoint-url').value.includes('/secure/')`)
		b.runTest()
		if code := b.text("#result-code"); code != "200 OK" {
			t.Fatalf("status shown %q, want 200 OK: the page must send the idToken", code)
		}
		shown := b.rawJSON()

		command := b.text("#curl")
		for _, want := range []string{`-H "Authorization: Bearer $TOKEN"`, "TOKEN=$(curl -sS -u 'admin' '" + base + "/api/rest/tokenservice'"} {
			if !strings.Contains(command, want) {
				t.Errorf("curl command lacks %q:\n%s", want, command)
			}
		}
		// As pasted, after giving the password curl asks for.
		withPassword := strings.Replace(command, "-u 'admin'", "-u 'admin:"+harness.AdminPassword+"'", 1)
		if d := cmp.Diff(shown, decodeJSON(t, "curl's answer", runShell(t, withPassword))); d != "" {
			t.Errorf("the page showed (-) and the curl command with $TOKEN answered (+):\n%s", d)
		}

		b.do("put the token in the command", chromedp.Click(chromedp.CSS("#curl-token")))
		command = b.text("#curl")
		if strings.Contains(command, "$TOKEN") || !strings.Contains(command, "-H 'Authorization: Bearer ey") {
			t.Errorf("with the box ticked the command should carry the token itself:\n%s", command)
		}
		if d := cmp.Diff(shown, decodeJSON(t, "curl's answer", runShell(t, command))); d != "" {
			t.Errorf("the page showed (-) and the curl command with the token answered (+):\n%s", d)
		}
	})

	if p := eval[[]string](b, "window.__problems"); len(p) > 0 {
		t.Errorf("the page had problems:\n  %s", strings.Join(p, "\n  "))
	}
}

// TestBrowserStaysSignedInAndAsksAgainWhenRenewalFails signs in on a
// server whose tokens live two seconds: the page renews its token and
// stays signed in for several lifetimes, without the password; once the
// token service cannot be reached the token expires and the page asks to
// sign in again.
func TestBrowserStaysSignedInAndAsksAgainWhenRenewalFails(t *testing.T) {
	tab := newTab(t)
	// Short tokens, but not so short that a renewal delayed by a loaded
	// machine (a browser and servers on two cores) arrives after expiry.
	srv := harness.Start(t, harness.Options{Args: []string{"-token-validity", "4s"}})
	base := srv.Base
	b := browser{t: t, ctx: tab}

	b.do("open the page", chromedp.Navigate(base+"/ui/"))
	b.signIn("admin", harness.AdminPassword)
	b.do("wait for the menu", chromedp.WaitVisible(chromedp.CSS("#session")), chromedp.WaitVisible(chromedp.CSS(`button[data-endpoint="`+irisKey+`"]`)))
	first := b.text("#session-expiry")
	time.Sleep(10 * time.Second) // two and a half lifetimes of a token
	if eval[bool](b, "document.getElementById('session').hidden") {
		t.Fatalf("signed out after 10 s with 4 s tokens: the page did not renew its token (%s)%s", b.text("#signin-message"), b.problems())
	}
	if b.text("#session-expiry") == first {
		t.Errorf("the session still ends at %s: renewal did not move it", first)
	}
	if pw := eval[string](b, "document.getElementById('password').value"); pw != "" {
		t.Error("the password is still in its field after signing in")
	}

	// Refresh renews too, and keeps the menu.
	before := eval[string](b, "document.getElementById('session-expiry').dateTime")
	time.Sleep(1100 * time.Millisecond) // expiry times are in whole seconds
	b.do("press Refresh", chromedp.Click(chromedp.CSS("#refresh")))
	b.waitFor("a later expiry", `document.getElementById('session-expiry').dateTime > `+strconv.Quote(before))

	b.do("cut the page off from renewal", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return chromedp.Void{}, err
		}
		_, err := cdp.Call(ctx, tg, network.SetBlockedURLs, network.SetBlockedURLsParams{
			URLPatterns: []*network.BlockPattern{{URLPattern: base + "/api/rest/tokenservice/renew", Block: true}}})
		return chromedp.Void{}, err
	})
	b.waitFor("the expiry message", `!document.getElementById('signin').hidden && document.getElementById('signin-message').textContent.includes('expired')`)
	if msg := b.text("#signin-message"); msg != "Your session expired — sign in again." {
		t.Errorf("message %q, want the page to ask to sign in again", msg)
	}
	if !eval[bool](b, "document.getElementById('session').hidden") {
		t.Error("still signed in after the session expired")
	}
	if user := eval[string](b, "document.getElementById('username').value"); user != "admin" {
		t.Errorf("username field %q after expiry, want it kept for the next sign-in", user)
	}
	b.screenshot("ui-session-expired.png")

	// Signing in again brings the menu back.
	b.typeInto("#password", harness.AdminPassword)
	b.do("sign in again", chromedp.Click(chromedp.CSS("#signin-submit")))
	b.waitFor("the menu or a second expiry", `!document.getElementById('session').hidden || document.getElementById('signin-message').textContent.includes('expired')`)
	if p := eval[[]string](b, "window.__problems"); len(p) > 0 {
		t.Errorf("the page had problems:\n  %s", strings.Join(p, "\n  "))
	}
}
