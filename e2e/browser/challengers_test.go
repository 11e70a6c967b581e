package browser

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/testutil"
)

// rivalsKey is the endpoint of the challenger test: iris@production, with
// iris@2 in shadow.
const rivalsKey = "DEFAULT/flowers/species"

// histogram is a distribution as GET …/challengers answers it.
type histogram struct {
	Bounds []float64 `json:"bounds"`
	Counts []uint64  `json:"counts"`
	Count  uint64    `json:"count"`
	Sum    float64   `json:"sum"`
}

// challengersAnswer is the part of GET …/challengers the page shows.
type challengersAnswer struct {
	Champion struct {
		Model     string `json:"model"`
		Version   string `json:"version"`
		AliasETag string `json:"aliasETag"`
	} `json:"champion"`
	Challengers []struct {
		Model             string    `json:"model"`
		Mode              string    `json:"mode"`
		Version           string    `json:"version"`
		AgreementRate     *float64  `json:"agreementRate"`
		Compared          uint64    `json:"compared"`
		Agreed            uint64    `json:"agreed"`
		Delta             histogram `json:"delta"`
		ChallengerLatency histogram `json:"challengerLatency"`
	} `json:"challengers"`
}

// rivalsView is the section as the page shows it.
type rivalsView struct {
	Shown           bool   `json:"shown"`
	Message         string `json:"message"` // the section's notice, "" when hidden
	Champion        string `json:"champion"`
	ChampionVersion string `json:"championVersion"`
	Challengers     []struct {
		Model     string `json:"model"`
		Version   string `json:"version"`
		Agreement string `json:"agreement"`
		Bars      []struct {
			Count  uint64  `json:"count"`
			Label  string  `json:"label"`
			Title  string  `json:"title"`
			Spoken string  `json:"spoken"`
			Width  float64 `json:"width"`
		} `json:"bars"`
		Latency  []string `json:"latency"`
		Promote  int      `json:"promote"` // Promote buttons
		Hint     string   `json:"hint"`    // why an administrator cannot promote
		Overflow bool     `json:"overflow"`
	} `json:"challengers"`
	Performance     bool     `json:"performance"` // the live performance is shown
	PerformanceRows []string `json:"performanceRows"`
}

const rivalsScript = `(() => {
  const section = document.getElementById('challengers');
  const message = document.getElementById('challengers-message');
  const text = (e) => (e ? e.textContent : '');
  return {
    shown: !section.hidden && section.getClientRects().length > 0,
    message: message.hidden ? '' : message.textContent,
    champion: text(document.getElementById('champion-model')),
    championVersion: text(document.getElementById('champion-version')),
    challengers: [...document.querySelectorAll('#challenger-list .challenger')].map((c) => ({
      model: c.dataset.challenger,
      version: text(c.querySelector('.challenger-version')),
      agreement: text(c.querySelector('.agreement-text')),
      bars: [...c.querySelectorAll('.histo-row')].map((li) => ({
        count: Number(li.dataset.count), label: text(li.querySelector('.histo-label')), title: li.title,
        spoken: text(li.querySelector('.sr-only')), width: li.querySelector('.histo-bar').getBoundingClientRect().width,
      })),
      latency: [...c.querySelectorAll('.latency dd')].map(text),
      promote: c.querySelectorAll('button.promote').length,
      hint: text(c.querySelector('.promote-hint')),
      overflow: c.scrollWidth > c.clientWidth + 1,
    })),
    performance: !document.getElementById('performance').hidden,
    performanceRows: [...document.querySelectorAll('#performance-table tbody')].map((b) => b.dataset.model),
  };
})()`

// boundText writes a bucket's bound as the page does (JavaScript's
// String of a number).
func boundText(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// TestBrowserChallengersAndPromotion deploys the XGBoost iris model
// (version 1, behind the alias production) with the LightGBM iris model
// (version 2) in shadow and scores flowers through it. The endpoint's test
// page then shows, to anyone signed in, the champion and the challenger,
// their agreement in words equal to the route's, the Δ distribution with
// one bar per bucket of the route's histogram and the mean latencies; a
// user who is not an administrator is offered no Promote button. An
// administrator promotes the challenger through a confirm dialog that
// says what changes: when someone moved the alias since the page read it,
// the page says so and reads it again; after the move the alias and the
// route's champion are version 2. axe-core finds no serious or critical
// violation, on a desktop and on phones.
func TestBrowserChallengersAndPromotion(t *testing.T) {
	tab := newTab(t)
	axe := axeSource(t)
	srv := harness.Start(t, harness.Options{Args: []string{"-users", usersFile(t)}})
	admin := srv.AdminToken(t)
	deployRivals(t, srv, admin, `{"alias":"species","model":"iris@production","challengers":[{"model":"iris@2","mode":"shadow"}]}`)
	raw, err := os.ReadFile(multiclassModel + ".rows.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	// The flowers measured in full: the fixture's others test missing and
	// infinite values.
	var flowers []map[string]any
	for _, r := range fx.Rows {
		measured := true
		for _, v := range r {
			_, ok := v.(float64)
			measured = measured && ok
		}
		if measured {
			flowers = append(flowers, r)
		}
	}
	body, err := json.Marshal(map[string]any{"data": flowers})
	if err != nil {
		t.Fatal(err)
	}
	if status, got := srv.PostJSON(t, "/webapi/"+strings.Replace(rivalsKey, "/", "/api/v1/services/", 1), string(body)); status != http.StatusOK {
		t.Fatalf("score the flowers: %d %v", status, got)
	}
	route := "/api/v1/endpoints/" + rivalsKey + "/challengers"
	read := func() challengersAnswer {
		t.Helper()
		status, got := srv.API(t, admin, http.MethodGet, route, "", "")
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %v", route, status, got)
		}
		b, _ := json.Marshal(got)
		var a challengersAnswer
		if err := json.Unmarshal(b, &a); err != nil || len(a.Challengers) != 1 {
			t.Fatalf("GET %s: %v %v, want one challenger", route, err, got)
		}
		return a
	}
	// The shadow scores after the champion answered.
	testutil.Eventually(t, waitLimit, "the shadow's comparison", func() bool { return read().Challengers[0].Compared > 0 })

	b := browser{t: t, ctx: tab}
	b.do("size the window", chromedp.EmulateViewport(1280, 900))
	b.do("open the endpoint", chromedp.Navigate(srv.Base+"/ui/#"+rivalsKey))
	shownFor := func(b browser, who string) rivalsView {
		b.t.Helper()
		b.signIn(who, map[string]string{"admin": harness.AdminPassword, "bob": bobPassword}[who])
		b.waitFor("the challengers of the endpoint", `!document.getElementById('challengers').hidden &&
			document.querySelector('#challenger-list [data-challenger="iris@2"] .agreement-text')`)
		return eval[rivalsView](b, rivalsScript)
	}

	t.Run("a user who is not an administrator sees the figures without Promote", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		v := shownFor(b, "bob")
		checkRivals(t, v, read(), "iris@1")
		if v.Challengers[0].Promote != 0 || v.Challengers[0].Hint != "" {
			t.Errorf("bob, no administrator, is offered %d Promote buttons (hint %q), want none", v.Challengers[0].Promote, v.Challengers[0].Hint)
		}
		b.do("sign out", chromedp.Click(chromedp.CSS("#sign-out")))
		b.waitFor("the section to go with the session", `document.getElementById('challengers').hidden && !document.querySelector('#challenger-list .challenger')`)
	})

	t.Run("an administrator promotes the challenger", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		v := shownFor(b, "admin")
		checkRivals(t, v, read(), "iris@1")
		if v.Challengers[0].Promote != 1 {
			t.Fatalf("the administrator is offered %d Promote buttons, want one", v.Challengers[0].Promote)
		}
		checkPerformance(t, srv, admin, v)
		b.checkAccessibility(axe, "challengers")
		b.screenshotOf("#challengers", "ui-challengers.png")

		const question = "Move iris@production from version 1 to version 2? Every endpoint naming iris@production will answer with version 2."
		ask := func() {
			b.t.Helper()
			b.do("press Promote", chromedp.Click(chromedp.CSS(`#challenger-list button.promote`)))
			b.waitFor("the confirm dialog", `document.getElementById('promote-dialog').open`)
			if got := b.text("#promote-text"); got != question {
				t.Errorf("the dialog asks %q, want %q", got, question)
			}
			if f := eval[string](b, "document.activeElement.id"); f != "promote-cancel" {
				t.Errorf("the dialog opens with the focus on %q, want Cancel", f)
			}
		}

		// Cancel leaves the alias as it is.
		ask()
		b.checkAccessibility(axe, "promote dialog")
		b.screenshot("ui-challengers-dialog.png")
		b.do("cancel", chromedp.Click(chromedp.CSS("#promote-cancel")))
		b.waitFor("the dialog to close", `!document.getElementById('promote-dialog').open && document.activeElement.classList.contains('promote')`)
		if got := read().Champion.Version; got != "iris@1" {
			t.Fatalf("after Cancel the champion is %s, want iris@1", got)
		}

		// Someone moves the alias (to the same version) behind the page's
		// back: the page's If-Match no longer holds.
		if status, got := srv.API(t, admin, http.MethodPut, "/api/v1/models/iris/aliases/production", "application/json", `{"version":1}`); status != http.StatusOK {
			t.Fatalf("move the alias behind the page: %d %v", status, got)
		}
		ask()
		b.do("confirm", chromedp.Click(chromedp.CSS("#promote-confirm")))
		b.waitFor("the refusal", `!document.getElementById('promote-dialog').open && !document.getElementById('challengers-message').hidden`)
		v = eval[rivalsView](b, rivalsScript)
		if !strings.HasPrefix(v.Message, "Someone moved iris@production since the page read it") {
			t.Errorf("after a move behind its back the page says %q, want it to say someone moved the alias", v.Message)
		}
		if got := read().Champion.Version; got != "iris@1" {
			t.Fatalf("a promotion on a stale ETag moved the champion to %s", got)
		}

		// Read again, the page promotes with the alias's new ETag.
		ask()
		start := time.Now()
		b.do("confirm", chromedp.Click(chromedp.CSS("#promote-confirm")))
		b.waitFor("the champion promoted", `!document.getElementById('promote-dialog').open && document.getElementById('champion-version').textContent === 'iris@2'`)
		t.Logf("promoted and read again in %v", time.Since(start).Round(time.Millisecond))
		a := read()
		if a.Champion.Version != "iris@2" || a.Champion.Model != "iris@production" {
			t.Errorf("after the promotion the route's champion is %s at %s, want iris@production at iris@2", a.Champion.Model, a.Champion.Version)
		}
		status, alias := srv.API(t, admin, http.MethodGet, "/api/v1/models/iris/aliases/production", "", "")
		if status != http.StatusOK || alias["version"] != 2.0 {
			t.Errorf("GET the alias: %d %v, want version 2", status, alias)
		}
		v = eval[rivalsView](b, rivalsScript)
		if want := "iris@production now points to version 2: every endpoint naming it answers with version 2."; v.Message != want {
			t.Errorf("after the promotion the page says %q, want %q", v.Message, want)
		}
		if c := v.Challengers[0]; c.Promote != 0 || !strings.Contains(c.Hint, "at this version already") {
			t.Errorf("the challenger, now the champion's version, offers %d Promote buttons and says %q", c.Promote, c.Hint)
		}
		b.checkAccessibility(axe, "challenger promoted")
	})

	for _, size := range []struct {
		width, height int64
		headerRows    int // the lines the signed-in top bar may take
	}{{390, 844, 2}, {320, 640, 3}} {
		t.Run(viewportName(size.width, size.height), func(t *testing.T) {
			b := browser{t: t, ctx: tab}
			b.do("size the window", chromedp.EmulateViewport(size.width, size.height, chromedp.EmulateMobile))
			b.do("read the figures again", chromedp.Click(chromedp.CSS("#challengers-refresh")))
			b.waitFor("the figures", `!document.getElementById('challengers-refresh').disabled && document.querySelector('#challenger-list .agreement-text')`)
			b.checkAccessibility(axe, "challengers")
			b.checkPhone("challengers", size.headerRows)
			for _, c := range eval[rivalsView](b, rivalsScript).Challengers {
				if c.Overflow {
					t.Errorf("the challenger %s runs past its box", c.Model)
				}
			}
			b.screenshotOf("#challengers", fmt.Sprintf("ui-challengers-%d.png", size.width))
		})
	}
	if p := eval[[]string](b, "window.__problems"); len(p) > 0 {
		t.Errorf("the page had problems: %q", p)
	}
}

// checkRivals fails the test unless v shows the route's answer a: the
// champion at version champion, the challenger with its version, its
// agreement in words, one bar per bucket of its Δ histogram (the largest
// count the widest), and both latencies.
func checkRivals(t *testing.T, v rivalsView, a challengersAnswer, champion string) {
	t.Helper()
	if !v.Shown {
		t.Fatal("the section Champion and challengers is not shown")
	}
	if v.Champion != "iris@production" || v.ChampionVersion != champion || a.Champion.Version != champion {
		t.Errorf("the page shows the champion %s at %s and the route %s, want iris@production at %s", v.Champion, v.ChampionVersion, a.Champion.Version, champion)
	}
	if len(v.Challengers) != 1 {
		t.Fatalf("the page shows %d challengers, want iris@2", len(v.Challengers))
	}
	c, want := v.Challengers[0], a.Challengers[0]
	if c.Model != "iris@2" || c.Version != want.Version {
		t.Errorf("the challenger shown is %s at %s, want iris@2 at %s", c.Model, c.Version, want.Version)
	}
	if want.AgreementRate == nil {
		t.Fatal("the route has no agreement rate after the rows were compared")
	}
	percent := strconv.FormatFloat(math.Round(*want.AgreementRate*1000)/10, 'f', -1, 64)
	if text := fmt.Sprintf("Agreed on %d of %d rows compared (%s%%).", want.Agreed, want.Compared, percent); c.Agreement != text {
		t.Errorf("the agreement reads %q, want the route's %q", c.Agreement, text)
	}
	h := want.Delta
	if len(c.Bars) != len(h.Counts) {
		t.Fatalf("the Δ chart has %d bars, want one for each of the route's %d buckets", len(c.Bars), len(h.Counts))
	}
	widest := 0
	for i, bar := range c.Bars {
		if bar.Count != h.Counts[i] {
			t.Errorf("bar %d counts %d rows, the route %d", i, bar.Count, h.Counts[i])
		}
		var label string
		switch i {
		case 0:
			label = "≤ " + boundText(h.Bounds[0])
		case len(h.Bounds):
			label = "> " + boundText(h.Bounds[i-1])
		default:
			label = boundText(h.Bounds[i-1]) + "–" + boundText(h.Bounds[i])
		}
		if bar.Label != label {
			t.Errorf("bar %d is labelled %q, want the bucket's bounds %q", i, bar.Label, label)
		}
		rows := fmt.Sprintf(": %d rows", bar.Count)
		if bar.Count == 1 {
			rows = ": 1 row"
		}
		if !strings.HasSuffix(bar.Title, rows) || "|Δ| "+bar.Spoken != bar.Title {
			t.Errorf("bar %d: on hover %q, to a screen reader %q: want its range and count %d in both", i, bar.Title, bar.Spoken, bar.Count)
		}
		if (bar.Count == 0) != (bar.Width == 0) {
			t.Errorf("bar %d of %d rows is %.1f px wide", i, bar.Count, bar.Width)
		}
		if bar.Count > c.Bars[widest].Count {
			widest = i
		}
	}
	for i, bar := range c.Bars {
		if bar.Width > c.Bars[widest].Width+0.5 {
			t.Errorf("bar %d (%d rows) is wider than bar %d (%d rows)", i, bar.Count, widest, c.Bars[widest].Count)
		}
	}
	if len(c.Latency) != 2 || !strings.Contains(c.Latency[0], " on average over ") || !strings.Contains(c.Latency[1], " on average over ") {
		t.Errorf("the latencies read %q, want the champion's and the challenger's means", c.Latency)
	}
}

// checkPerformance checks the live performance the page shows against the
// performance route: one group of rows per model when it answers, nothing
// (and no error) when it does not.
func checkPerformance(t *testing.T, srv *harness.Server, token string, v rivalsView) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.Base+"/api/v1/endpoints/"+rivalsKey+"/performance", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v.Message != "" {
		t.Errorf("the section says %q, want no message", v.Message)
	}
	if res.StatusCode != http.StatusOK {
		if v.Performance {
			t.Errorf("the route answers %d, yet the page shows a live performance", res.StatusCode)
		}
		t.Logf("the performance route answers %d: nothing shown", res.StatusCode)
		return
	}
	var perf struct {
		Models []struct {
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &perf); err != nil {
		t.Fatalf("the performance route: %v\n%s", err, b)
	}
	models := map[string]bool{}
	for _, m := range perf.Models {
		models[m.Model] = true
	}
	if len(models) > 0 && !v.Performance {
		t.Errorf("the route answers the figures of %d models, yet the page shows no live performance", len(models))
	}
	for _, m := range v.PerformanceRows {
		if !models[m] {
			t.Errorf("the live performance shows %q, which the route does not name", m)
		}
	}
}

// TestBrowserPromoteSwapsAliases: a challenger named by another alias of
// the champion's model is promoted through the promote route: the two
// aliases trade versions, and the page shows the former champion as the
// challenger.
func TestBrowserPromoteSwapsAliases(t *testing.T) {
	tab := newTab(t)
	srv := harness.Start(t, harness.Options{})
	admin := srv.AdminToken(t)
	deployRivals(t, srv, admin, `{"alias":"species","model":"iris@production","rowId":"id","challengers":[{"model":"iris@candidate","mode":"shadow"}]}`)
	// Rows with IDs, and their outcomes, for the live performance.
	rows := `{"data":[{"id":"f1","sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2},` +
		`{"id":"f2","sepal_length":6.4,"sepal_width":3.2,"petal_length":4.5,"petal_width":1.5},` +
		`{"id":"f3","sepal_length":6.3,"sepal_width":3.3,"petal_length":6.0,"petal_width":2.5}]}`
	if status, got := srv.PostJSON(t, "/webapi/DEFAULT/api/v1/services/flowers/species", rows); status != http.StatusOK {
		t.Fatalf("scoring: %d %v", status, got)
	}
	perf := "/api/v1/endpoints/" + rivalsKey + "/performance"
	testutil.Eventually(t, waitLimit, "both models' predictions kept", func() bool {
		status, got := srv.API(t, admin, http.MethodPost, "/api/v1/endpoints/"+rivalsKey+"/feedback", "application/json",
			`{"data":[{"id":"f1","actual":"setosa"},{"id":"f2","actual":"versicolor"},{"id":"f3","actual":"virginica"}]}`)
		if status != http.StatusOK {
			t.Fatalf("feedback: %d %v", status, got)
		}
		_, p := srv.API(t, admin, http.MethodGet, perf, "", "")
		models, _ := p["models"].([]any)
		return len(models) == 2
	})
	b := browser{t: t, ctx: tab}
	b.do("size the window", chromedp.EmulateViewport(1280, 900))
	b.do("open the endpoint", chromedp.Navigate(srv.Base+"/ui/#"+rivalsKey))
	b.signIn("admin", harness.AdminPassword)
	b.waitFor("the challenger", `!document.getElementById('challengers').hidden && document.querySelector('#challenger-list button.promote')`)
	b.waitFor("the live performance", `!document.getElementById('performance').hidden`)
	v := eval[rivalsView](b, rivalsScript)
	checkPerformance(t, srv, admin, v)
	if len(v.PerformanceRows) < 2 {
		t.Errorf("the live performance shows %q, want the champion's and the challenger's figures", v.PerformanceRows)
	}
	b.do("press Promote", chromedp.Click(chromedp.CSS(`#challenger-list button.promote`)))
	b.waitFor("the confirm dialog", `document.getElementById('promote-dialog').open`)
	if got, want := b.text("#promote-text"), "Promote iris@candidate (iris@2) to champion? iris@production (iris@1) becomes its shadow challenger in the same write"; !strings.HasPrefix(got, want) {
		t.Errorf("the dialog asks %q, want it to start %q", got, want)
	}
	b.do("confirm", chromedp.Click(chromedp.CSS("#promote-confirm")))
	b.waitFor("the champion promoted", `!document.getElementById('promote-dialog').open && document.getElementById('champion-version').textContent === 'iris@2'`)
	status, got := srv.API(t, admin, http.MethodGet, "/api/v1/models/iris/aliases/candidate", "", "")
	if status != http.StatusOK || got["version"] != 1.0 {
		t.Errorf("after the promotion the candidate alias is %d %v, want version 1, the former champion", status, got)
	}
}

// deployRivals uploads the XGBoost iris model as version 1 of iris, behind
// the alias production, and the LightGBM one as version 2 (and the alias
// candidate), and deploys endpoint, a model endpoint of DEFAULT/flowers.
func deployRivals(t *testing.T, srv *harness.Server, admin, endpoint string) {
	t.Helper()
	xgboost, err := os.ReadFile("../../examples/models/iris.json")
	if err != nil {
		t.Fatal(err)
	}
	lightgbm, err := os.ReadFile(multiclassModel + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	const meta = "label=species&classes=setosa,versicolor,virginica"
	for _, w := range []struct{ method, path, contentType, body string }{
		{http.MethodPost, "/api/v1/models/iris/versions?" + meta + "&features=sepal_length,sepal_width,petal_length,petal_width", "application/json", string(xgboost)},
		{http.MethodPost, "/api/v1/models/iris/versions?" + meta, "application/octet-stream", string(lightgbm)},
		{http.MethodPut, "/api/v1/models/iris/aliases/production", "application/json", `{"version":1}`},
		{http.MethodPut, "/api/v1/models/iris/aliases/candidate", "application/json", `{"version":2}`},
		{http.MethodPost, "/api/v1/deployments", "application/json", `{"group":"DEFAULT","path":"flowers","enabled":true,"endpoints":[` + endpoint + `]}`},
	} {
		if status, got := srv.API(t, admin, w.method, w.path, w.contentType, w.body); status != http.StatusCreated {
			t.Fatalf("%s %s: %d %v", w.method, w.path, status, got)
		}
	}
}
