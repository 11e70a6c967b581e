package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// waterfallStep is one line of the waterfall as the page draws it.
type waterfallStep struct {
	Kind    string  `json:"kind"`    // bias, up, down or total
	Feature string  `json:"feature"` // a feature's name; bias; "" for the total
	Value   string  `json:"value"`   // the number the page holds, as text
	Shown   string  `json:"shown"`   // the number written beside the bar
	Width   float64 `json:"width"`   // of the bar, in px
	Left    float64 `json:"left"`    // of the bar
	Right   float64 `json:"right"`   // of the bar
	Spoken  string  `json:"spoken"`  // what the bar says to a screen reader
}

// waterfallView is the chart as shown.
type waterfallView struct {
	Shown bool            `json:"shown"`
	Row   string          `json:"row"` // the row charted, from 0
	Title string          `json:"title"`
	Steps []waterfallStep `json:"steps"`
	Right float64         `json:"right"` // of the chart
	Width float64         `json:"width"` // window.innerWidth
}

const waterfallScript = `(() => {
  const chart = document.getElementById('waterfall-chart');
  const section = document.getElementById('waterfall');
  return {
    shown: !section.hidden && section.getClientRects().length > 0,
    row: chart.dataset.row || '',
    title: document.getElementById('waterfall-title').textContent,
    steps: [...chart.querySelectorAll('tbody tr')].map((tr) => {
      const b = tr.querySelector('.wf-bar').getBoundingClientRect();
      return {
        kind: tr.dataset.kind, feature: tr.dataset.feature, value: tr.dataset.value,
        shown: tr.querySelector('.wf-value').textContent.replace('−', '-'),
        width: b.width, left: b.left, right: b.right,
        spoken: tr.querySelector('.wf-bar-cell .sr-only').textContent,
      };
    }),
    right: chart.getBoundingClientRect().right,
    width: window.innerWidth,
  };
})()`

// answerRow returns row i of the answer the page shows, its numbers as
// json.Number.
func answerRow(t *testing.T, b browser, i int) map[string]any {
	t.Helper()
	answer, ok := b.rawJSON().(map[string]any)
	if !ok {
		t.Fatal("the raw JSON is not an object")
	}
	rows, _ := answer["data"].([]any)
	if len(rows) <= i {
		t.Fatalf("the answer has %d rows, want a row %d", len(rows), i+1)
	}
	return rows[i].(map[string]any)
}

// contributionsOf returns each feature's contribution and the bias in
// row, as numbers: contribution(<feature>) and contribution(bias), or with
// class, contribution(<class>,<feature>) and contribution(<class>,bias).
func contributionsOf(t *testing.T, row map[string]any, class string) (map[string]float64, float64) {
	t.Helper()
	prefix := "contribution("
	if class != "" {
		prefix += class + ","
	}
	contributions := map[string]float64{}
	bias := math.NaN()
	for k, v := range row {
		name, ok := strings.CutPrefix(k, prefix)
		if !ok || v == nil { // not sent: not among the row's top contributions
			continue
		}
		f, err := v.(json.Number).Float64()
		if err != nil {
			t.Fatalf("%s is %v, not a number", k, v)
		}
		if name = strings.TrimSuffix(name, ")"); name == "bias" {
			bias = f
		} else {
			contributions[name] = f
		}
	}
	return contributions, bias
}

// checkWaterfall fails the test unless the chart v shows row row of the
// answer: one bar per feature, largest first, from the bias to a total that
// is the bias plus the contributions.
func checkWaterfall(t *testing.T, v waterfallView, contributions map[string]float64, bias float64, row int) {
	t.Helper()
	if !v.Shown {
		t.Fatal("no chart of the contributions is shown")
	}
	if v.Row != fmt.Sprint(row) {
		t.Errorf("the chart shows row %s, want row %d", v.Row, row)
	}
	if v.Right > v.Width+1 {
		t.Errorf("the chart ends at %.0f px, past the window's %.0f", v.Right, v.Width)
	}
	if len(v.Steps) < 2 || v.Steps[0].Kind != "bias" || v.Steps[len(v.Steps)-1].Kind != "total" {
		t.Fatalf("the chart's steps %+v, want the bias first and the total last", v.Steps)
	}
	number := func(s waterfallStep) float64 {
		var f float64
		if _, err := fmt.Sscan(s.Value, &f); err != nil {
			t.Fatalf("the %s step holds %q, not a number", s.Kind, s.Value)
		}
		return f
	}
	if got := number(v.Steps[0]); got != bias {
		t.Errorf("the chart starts at %v, want the answer's bias %v", got, bias)
	}
	bars := v.Steps[1 : len(v.Steps)-1]
	var charted []string
	sum := bias
	for i, s := range bars {
		charted = append(charted, s.Feature)
		want, ok := contributions[s.Feature]
		got := number(s)
		if !ok || got != want {
			t.Errorf("the bar of %q holds %v; the answer's contribution is %v (sent: %v)", s.Feature, got, want, ok)
		}
		sum += want
		if wantKind := map[bool]string{true: "up", false: "down"}[want >= 0]; s.Kind != wantKind {
			t.Errorf("the bar of %q (%v) is drawn as %s, want %s", s.Feature, want, s.Kind, wantKind)
		}
		if sign := map[bool]string{true: "+", false: "-"}[want >= 0]; !strings.HasPrefix(s.Shown, sign) {
			t.Errorf("the bar of %q (%v) is labelled %q, without its sign %s", s.Feature, want, s.Shown, sign)
		}
		if word := map[bool]string{true: "raises", false: "lowers"}[want >= 0]; !strings.HasPrefix(s.Spoken, word) {
			t.Errorf("the bar of %q (%v) says %q to a screen reader, want it to say it %s the margin", s.Feature, want, s.Spoken, word)
		}
		if i > 0 && math.Abs(number(bars[i-1])) < math.Abs(got) {
			t.Errorf("the bar of %q (%v) comes after the smaller %q (%v): want the bars largest first",
				s.Feature, got, bars[i-1].Feature, number(bars[i-1]))
		}
		if i > 0 && math.Abs(s.Left-bars[i-1].Right) > 1 && math.Abs(s.Right-bars[i-1].Left) > 1 &&
			math.Abs(s.Left-bars[i-1].Left) > 1 && math.Abs(s.Right-bars[i-1].Right) > 1 {
			t.Errorf("the bar of %q (%.1f–%.1f px) does not start where the bar before it ends (%.1f–%.1f px)",
				s.Feature, s.Left, s.Right, bars[i-1].Left, bars[i-1].Right)
		}
	}
	var features []string
	for f := range contributions {
		features = append(features, f)
	}
	slices.Sort(features)
	sorted := slices.Sorted(slices.Values(charted))
	if !slices.Equal(features, sorted) {
		t.Errorf("the chart has bars for %q, want one for each feature of the answer %q", sorted, features)
	}
	total := v.Steps[len(v.Steps)-1]
	if got := number(total); math.Abs(got-sum) > 1e-9 {
		t.Errorf("the chart's total is %v, want the bias plus the contributions, %v", got, sum)
	}
	var shown float64
	if _, err := fmt.Sscan(total.Shown, &shown); err != nil || math.Abs(shown-sum) > 5e-4*math.Max(1, math.Abs(sum)) {
		t.Errorf("the total is written %q, want %v to four digits", total.Shown, sum)
	}
}

// TestBrowserChartsTheContributionsOfAnExplainedRow deploys the 30-feature
// breast-cancer model on a second alias that explains its predictions and
// runs its test page: the answer's contributions are charted as a
// waterfall from the bias to the margin, one bar per feature largest
// first, each value shown on hover and written for screen readers;
// pointing at another row of the table charts that row. axe-core finds no
// serious or critical violation, on a desktop and on a phone.
func TestBrowserChartsTheContributionsOfAnExplainedRow(t *testing.T) {
	tab := newTab(t)
	axe := axeSource(t)
	srv := harness.Start(t, harness.Options{})
	admin := srv.AdminToken(t)
	uploadWideModel(t, srv, admin, "cancer")
	if status, got := srv.API(t, admin, http.MethodPost, "/api/v1/deployments", "application/json",
		`{"group":"DEFAULT","path":"cancer","enabled":true,"endpoints":[{"alias":"diagnose","model":"cancer@1"},`+
			`{"alias":"why","model":"cancer@1","explain":{"method":"treeshap"}},`+
			`{"alias":"top","model":"cancer@1","explain":{"method":"treeshap","top":3}}]}`); status != http.StatusCreated {
		t.Fatalf("deploy the model: %d %v", status, got)
	}

	for _, size := range []struct {
		width, height int64
		phone         bool
	}{{1280, 800, false}, {390, 844, true}} {
		t.Run(viewportName(size.width, size.height), func(t *testing.T) {
			b := browser{t: t, ctx: tab}
			var mobile []chromedp.EmulateViewportOption
			if size.phone {
				mobile = append(mobile, chromedp.EmulateMobile)
			}
			b.do("size the window", chromedp.EmulateViewport(size.width, size.height, mobile...))
			// A fresh page: the one before kept the answer it was shown.
			b.do("open the explained endpoint", chromedp.Navigate("about:blank"), chromedp.Navigate(srv.Base+"/ui/#DEFAULT/cancer/why"))
			b.waitFor("the sample input", `document.getElementById('body').value.includes('mean_radius')`)
			if !eval[bool](b, "document.getElementById('waterfall').hidden") {
				t.Error("a chart is shown before the test is run")
			}
			b.runTest()
			if code := b.text("#result-code"); code != "200 OK" {
				t.Fatalf("status shown %q, want 200 OK%s", code, b.problems())
			}
			contributions, bias := contributionsOf(t, answerRow(t, b, 0), "")
			if len(contributions) != 30 {
				t.Fatalf("the answer has %d contributions, want one for each of the 30 features", len(contributions))
			}
			v := eval[waterfallView](b, waterfallScript)
			checkWaterfall(t, v, contributions, bias, 0)

			b.checkAccessibility(axe, "waterfall")
			if size.phone {
				b.checkPhone("waterfall", 2)
			}
			b.screenshot(fmt.Sprintf("ui-waterfall-%d.png", size.width))
			b.screenshotOf("#waterfall", fmt.Sprintf("ui-waterfall-%d-chart.png", size.width))

			// Hovering a bar shows its value with every digit sent.
			b.do("scroll to the chart", chromedp.ScrollIntoView(chromedp.CSS(`#waterfall-chart tr[data-kind="down"], #waterfall-chart tr[data-kind="up"]`)))
			bar := eval[struct {
				X, Y    float64
				Feature string
				Value   string
			}](b, `(() => {
  const tr = document.querySelector('#waterfall-chart tr[data-kind="down"], #waterfall-chart tr[data-kind="up"]');
  const r = tr.querySelector('.wf-bar').getBoundingClientRect();
  return {X: r.left + r.width / 2, Y: r.top + r.height / 2, Feature: tr.dataset.feature, Value: tr.dataset.value};
})()`)
			b.do("point at the largest bar", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, bar.X, bar.Y))
			b.waitFor("the bar's value", `!document.getElementById('waterfall-tip').hidden`)
			if tip := b.text("#waterfall-tip"); !strings.HasPrefix(tip, bar.Feature+": "+bar.Value) {
				t.Errorf("pointing at the bar of %s shows %q, want its name and value %s", bar.Feature, tip, bar.Value)
			}

			if size.phone {
				return
			}
			// Pointing at the third row of the table charts it.
			b.do("scroll to the table", chromedp.ScrollIntoView(chromedp.CSS(`#result-table tbody tr[data-row="2"]`)))
			row := eval[struct{ X, Y float64 }](b, `(() => {
  const r = document.querySelector('#result-table tbody tr[data-row="2"] td.row-num').getBoundingClientRect();
  return {X: r.left + r.width / 2, Y: r.top + r.height / 2};
})()`)
			b.do("point at the third row", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, row.X, row.Y))
			b.waitFor("the third row's chart", `document.getElementById('waterfall-chart').dataset.row === '2'`)
			contributions, bias = contributionsOf(t, answerRow(t, b, 2), "")
			checkWaterfall(t, eval[waterfallView](b, waterfallScript), contributions, bias, 2)
			b.checkAccessibility(axe, "waterfall of the third row")

			// An endpoint that answers each row's three largest contributions
			// only: three bars, and the chart says the others are left out.
			b.do("open the endpoint of the top contributions", chromedp.Navigate(srv.Base+"/ui/#DEFAULT/cancer/top"))
			b.waitFor("the endpoint", `document.getElementById('endpoint-title').textContent === 'top' && document.getElementById('body').value.includes('mean_radius')`)
			b.runTest()
			b.waitFor("the chart of the top contributions", `!document.getElementById('waterfall').hidden`)
			contributions, bias = contributionsOf(t, answerRow(t, b, 0), "")
			if len(contributions) != 3 {
				t.Fatalf("the answer has %d contributions, want the 3 largest", len(contributions))
			}
			checkWaterfall(t, eval[waterfallView](b, waterfallScript), contributions, bias, 0)
			if note := b.text("#waterfall-note"); !strings.Contains(note, "27 other features are left out") {
				t.Errorf("the chart of the 3 largest contributions says %q, want it to say the 27 others are left out", note)
			}

			if p := eval[[]string](b, "window.__problems"); len(p) > 0 {
				t.Errorf("the page had problems: %q", p)
			}
		})
	}
}

// multiclassModel is a LightGBM classifier of three classes over the four
// iris features, from the format's tests.
const multiclassModel = "../../registry/lightgbm/testdata/multiclass"

// TestBrowserChartsTheContributionsOfEveryClass deploys a classifier of
// three classes on an endpoint that answers every class's contributions:
// the chart shows those of each row's predicted class, and another class
// once the tester picks it, each from its own bias to its own total.
func TestBrowserChartsTheContributionsOfEveryClass(t *testing.T) {
	tab := newTab(t)
	axe := axeSource(t)
	srv := harness.Start(t, harness.Options{})
	admin := srv.AdminToken(t)

	artifact, err := os.ReadFile(multiclassModel + ".txt")
	if err != nil {
		t.Fatal(err)
	}
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
	var upload bytes.Buffer
	mw := multipart.NewWriter(&upload)
	w, err := mw.CreateFormField("artifact")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(artifact)
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	if status, got := srv.API(t, admin, http.MethodPost, "/api/v1/models/flowers/versions", mw.FormDataContentType(), upload.String()); status != http.StatusCreated {
		t.Fatalf("upload the model: %d %v", status, got)
	}
	if status, got := srv.API(t, admin, http.MethodPost, "/api/v1/deployments", "application/json",
		`{"group":"DEFAULT","path":"flowers","enabled":true,"endpoints":[`+
			`{"alias":"why","model":"flowers@1","explain":{"method":"treeshap","class":"all"}}]}`); status != http.StatusCreated {
		t.Fatalf("deploy the model: %d %v", status, got)
	}

	b := browser{t: t, ctx: tab}
	b.do("size the window 1280×800", chromedp.EmulateViewport(1280, 800))
	b.do("open the explained endpoint", chromedp.Navigate(srv.Base+"/ui/#DEFAULT/flowers/why"))
	b.waitFor("the sample input", `document.getElementById('body').value.includes('sepal_length')`)
	// A flower of each class.
	body, err := json.Marshal(map[string]any{"data": []map[string]any{fx.Rows[13], fx.Rows[0], fx.Rows[7]}})
	if err != nil {
		t.Fatal(err)
	}
	b.typeInto("#body", string(body))
	b.runTest()
	if code := b.text("#result-code"); code != "200 OK" {
		t.Fatalf("status shown %q, want 200 OK%s", code, b.problems())
	}
	if eval[bool](b, "document.getElementById('waterfall-class-field').hidden") {
		t.Error("no choice of the class whose contributions are charted")
	}

	row := answerRow(t, b, 0)
	var predicted string
	for k, v := range row {
		if strings.HasPrefix(k, "prediction(") {
			predicted, _ = v.(string)
		}
	}
	if predicted == "" {
		t.Fatalf("the answer's first row has no predicted class: %v", row)
	}
	v := eval[waterfallView](b, waterfallScript)
	if !strings.HasSuffix(v.Title, "of the class "+predicted) {
		t.Errorf("the chart is titled %q, want it to name the predicted class %s", v.Title, predicted)
	}
	contributions, bias := contributionsOf(t, row, predicted)
	if len(contributions) != 4 {
		t.Fatalf("the answer has %d contributions of the class %s, want one for each of the 4 features", len(contributions), predicted)
	}
	checkWaterfall(t, v, contributions, bias, 0)
	b.checkAccessibility(axe, "waterfall of the predicted class")
	b.screenshotOf("#waterfall", "ui-waterfall-classes.png")

	other := map[bool]string{true: "1", false: "0"}[predicted == "0"]
	b.do("pick the class "+other, chromedp.SetValue(chromedp.CSS("#waterfall-class"), other))
	// Chosen in the list, the class is taken once the list says so.
	eval[bool](b, `document.getElementById('waterfall-class').dispatchEvent(new Event('change'))`)
	b.waitFor("the chart of the class picked", `document.getElementById('waterfall-title').textContent.endsWith('of the class `+other+`')`)
	contributions, bias = contributionsOf(t, row, other)
	checkWaterfall(t, eval[waterfallView](b, waterfallScript), contributions, bias, 0)

	if p := eval[[]string](b, "window.__problems"); len(p) > 0 {
		t.Errorf("the page had problems: %q", p)
	}
}

// screenshotOf keeps a picture of the element sel alone, where the whole
// page is too long to read it in.
func (b browser) screenshotOf(sel, name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitLimit)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("screenshot of %s: %v", sel, err)
	}
	path := filepath.Join(artifactDir(b.t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot of %s: %s", sel, path)
}
