package browser

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/testutil"
)

// driftKey is the endpoint of the drift test: the 30-feature XGBoost
// classifier, uploaded with its producer's rows as verification rows, its
// reference.
const driftKey = "DEFAULT/cancer/diagnose"

// driftShifted is the input the test moves far past its reference: its
// values there are 13.37 to 28.92.
const (
	driftShifted = "mean_texture"
	driftShift   = 40.0
)

// driftNotMeasured starts what the section says before the endpoint
// scored a row.
const driftNotMeasured = "Drift is measured once the endpoint has scored rows against its version's reference"

// driftHistogram is one column's counts as GET …/drift answers them.
type driftHistogram struct {
	Counts     []int64 `json:"counts"`
	Missing    int64   `json:"missing"`
	OutOfRange int64   `json:"outOfRange"`
	Unseen     int64   `json:"unseen"`
}

// featureDriftAnswer is one column of GET …/drift.
type featureDriftAnswer struct {
	Name        string   `json:"name"`
	Kind        string   `json:"kind"`
	PSI         *float64 `json:"psi"`
	JS          *float64 `json:"js"`
	MissingRate struct {
		Reference float64 `json:"reference"`
		Live      float64 `json:"live"`
	} `json:"missingRate"`
	OutOfRange *float64       `json:"outOfRange"`
	Unseen     *float64       `json:"unseen"`
	Reference  driftHistogram `json:"reference"`
	Live       driftHistogram `json:"live"`
	Edges      []float64      `json:"edges"`
	Categories []string       `json:"categories"`
	Importance *float64       `json:"importance"`
}

// driftAnswer is the part of GET …/drift the page shows.
type driftAnswer struct {
	Model      string               `json:"model"`
	Version    string               `json:"version"`
	Rows       int64                `json:"rows"`
	Declared   bool                 `json:"declared"`
	Features   []featureDriftAnswer `json:"features"`
	Prediction *featureDriftAnswer  `json:"prediction"`
}

// featureDriftView is one column as the page shows it.
type featureDriftView struct {
	Name     string   `json:"name"`
	PSIText  string   `json:"psiText"`  // the figure beside the bar
	PSIBar   float64  `json:"psiBar"`   // the bar's width, px
	PSITrack float64  `json:"psiTrack"` // its track's, px
	Level    string   `json:"level"`    // the badge reading the PSI
	Figures  []string `json:"figures"`  // "name: value" lines
	Open     bool     `json:"open"`     // its histograms are shown, not folded
	Bins     []struct {
		Label     string   `json:"label"`
		Reference float64  `json:"reference"` // the bar's width, px; -1 when none is drawn
		Live      float64  `json:"live"`
		Shares    []string `json:"shares"` // reference, live
	} `json:"bins"`
	Overflow   bool `json:"overflow"`
	Histograms bool `json:"histograms"` // its histograms are there, folded or not
	// Outside are, for a declared reference, the shares of live values
	// outside it, each written and drawn as a gauge.
	Outside []struct {
		Text  string  `json:"text"`
		Share string  `json:"share"` // as the page holds it
		Fill  float64 `json:"fill"`  // the gauge's fill, px; -1 when none is drawn
		Track float64 `json:"track"` // the gauge's, px
	} `json:"outside"`
}

// driftView is the section as the page shows it.
type driftView struct {
	Shown          bool               `json:"shown"`
	Message        string             `json:"message"` // the section's notice, "" when hidden
	Rows           string             `json:"rows"`    // the rows measured, as the page holds them
	RowsText       string             `json:"rowsText"`
	Version        string             `json:"version"`
	Declared       bool               `json:"declared"`
	DeclaredText   string             `json:"declaredText"` // the declared reference's notice, "" when hidden
	Legend         bool               `json:"legend"`       // the histograms' and PSI's legend is shown
	Features       []featureDriftView `json:"features"`
	Prediction     *featureDriftView  `json:"prediction"`
	Importance     bool               `json:"importance"`     // the drift against importance is shown
	Points         []string           `json:"points"`         // its points' features
	ImportanceRows []string           `json:"importanceRows"` // its table's
}

const driftScript = `(() => {
  const section = document.getElementById('drift');
  const message = document.getElementById('drift-message');
  const text = (e) => (e ? e.textContent : '');
  const width = (e) => (e ? e.getBoundingClientRect().width : -1);
  const feature = (a) => ({
    name: a.dataset.feature,
    psiText: text(a.querySelector('.drift-psi-value')),
    psiBar: width(a.querySelector('.drift-psi-bar')),
    psiTrack: width(a.querySelector('.drift-psi-track')),
    level: text(a.querySelector('.drift-feature-head .badge:nth-of-type(2)')),
    figures: [...a.querySelectorAll('.drift-figures dt')].map((dt) => dt.textContent + ': ' + text(dt.nextElementSibling)),
    open: !!a.querySelector('details.drift-shapes[open]'),
    bins: [...a.querySelectorAll('.drift-bin')].map((tr) => ({
      label: text(tr.querySelector('.drift-bin-label [aria-hidden]')),
      reference: width(tr.querySelector('.drift-bar-ref')),
      live: width(tr.querySelector('.drift-bar-live')),
      shares: [...tr.querySelectorAll('td.num')].map(text),
    })),
    overflow: a.scrollWidth > a.clientWidth + 1,
    histograms: !!a.querySelector('.drift-shapes, .drift-histo'),
    outside: [...a.querySelectorAll('.drift-declared-share p')].map((p) => {
      const gauge = p.nextElementSibling && p.nextElementSibling.classList.contains('gauge') ? p.nextElementSibling : null;
      return {text: p.textContent, share: p.dataset.share || '', fill: width(gauge && gauge.querySelector('.gauge-fill')), track: width(gauge)};
    }),
  });
  const rows = document.getElementById('drift-rows');
  const prediction = document.querySelector('#drift-prediction:not([hidden]) .drift-feature');
  return {
    shown: !section.hidden && section.getClientRects().length > 0,
    message: message.hidden ? '' : message.textContent,
    rows: document.getElementById('drift-facts').hidden ? '' : rows.dataset.rows || '',
    rowsText: text(rows),
    version: text(document.getElementById('drift-version')),
    declared: !document.getElementById('drift-declared').hidden,
    declaredText: document.getElementById('drift-declared').hidden ? '' : text(document.getElementById('drift-declared')),
    legend: !document.getElementById('drift-legend').hidden,
    features: [...document.querySelectorAll('#drift-inputs:not([hidden]) .drift-feature')].map(feature),
    prediction: prediction ? feature(prediction) : null,
    importance: !document.getElementById('drift-importance').hidden,
    points: [...document.querySelectorAll('#drift-scatter .drift-point')].map((g) => g.dataset.feature),
    importanceRows: [...document.querySelectorAll('#drift-importance-table tbody tr')].map((tr) => tr.dataset.feature),
  };
})()`

// axeDriftRun runs axe-core over the drift section alone and returns
// every violation, whatever its impact.
const axeDriftRun = `axe.run(document.getElementById('drift'), {resultTypes: ['violations']}).then((r) => r.violations
  .map((v) => ({id: v.id, impact: v.impact || '', help: v.help,
    nodes: v.nodes.map((n) => n.target.join(' ') + ': ' + n.failureSummary.replace(/\s+/g, ' '))})))`

// TestBrowserDriftOfAnEndpoint deploys the 30-feature XGBoost classifier,
// uploaded with verification rows, on a model endpoint. Before it scored
// a row, the test page's Drift section says that drift is measured once
// it has. After it scored the verification rows, then the same rows with
// mean_texture raised by 40 (past its reference's greatest value),
// Refresh shows the route's figures: the inputs most drifted first,
// mean_texture at the top, read as shifted, with the widest PSI bar and
// its PSI written as the route's; for every input both histograms with
// one bar per bin of the route, each drawn to its share; the share out
// of range; the prediction's drift; and the drift against importance
// when the route gives importance. The stable inputs' histograms are
// folded, and one the tester opens stays open over a refresh. More rows
// scored, Refresh shows the new count. axe-core finds no violation in the
// section, on a desktop and on a phone.
func TestBrowserDriftOfAnEndpoint(t *testing.T) {
	tab := newTab(t)
	axe := axeSource(t)
	srv := harness.Start(t, harness.Options{})
	admin := srv.AdminToken(t)
	rows := uploadWideModel(t, srv, admin, "cancer")
	if status, got := srv.API(t, admin, http.MethodPost, "/api/v1/deployments", "application/json",
		`{"group":"DEFAULT","path":"cancer","enabled":true,"endpoints":[{"alias":"diagnose","model":"cancer@1"}]}`); status != http.StatusCreated {
		t.Fatalf("deploy the model: %d %v", status, got)
	}
	shifted := make([]map[string]any, len(rows))
	for i, r := range rows {
		s := make(map[string]any, len(r))
		for k, v := range r {
			s[k] = v
		}
		s[driftShifted] = r[driftShifted].(float64) + driftShift
		shifted[i] = s
	}

	b := browser{t: t, ctx: tab}
	b.do("size the window", chromedp.EmulateViewport(1280, 900))
	b.do("open the endpoint", chromedp.Navigate(srv.Base+"/ui/#"+driftKey))
	b.signIn("admin", harness.AdminPassword)
	var opened string // the stable input whose histograms the tester opens

	t.Run("before the endpoint scored a row, the section says why it has no figure", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		if status, _ := readDrift(t, srv, admin, driftKey); status != http.StatusNotFound {
			t.Fatalf("GET %s before any row: %d, want 404", driftRoute(driftKey), status)
		}
		b.waitFor("the drift section's notice", `!document.getElementById('drift').hidden && !document.getElementById('drift-message').hidden`)
		v := eval[driftView](b, driftScript)
		if !strings.HasPrefix(v.Message, driftNotMeasured) {
			t.Errorf("the section says %q, want it to start %q", v.Message, driftNotMeasured)
		}
		if v.Rows != "" || len(v.Features) != 0 || v.Prediction != nil || v.Importance {
			t.Errorf("with no row measured the section shows rows %q, %d inputs, a prediction %v, an importance view %v; want none",
				v.Rows, len(v.Features), v.Prediction != nil, v.Importance)
		}
		b.checkAccessibility(axe, "drift not measured")
		checkDriftAccessibility(b, axe, "drift not measured")
	})

	scoreRows(t, srv, driftKey, rows)
	scoreRows(t, srv, driftKey, shifted)
	a := awaitDrift(t, srv, admin, driftKey, int64(2*len(rows)))

	t.Run("Refresh shows the shifted input first, as the route measures it", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		refreshDrift(b, a.Rows)
		v := eval[driftView](b, driftScript)
		checkDrift(t, v, a)
		first := v.Features[0]
		if first.Name != driftShifted {
			t.Fatalf("the input listed first is %q, want %q, which the rows shifted", first.Name, driftShifted)
		}
		if first.Level != "shifted" {
			t.Errorf("%s's PSI is read as %q, want shifted", first.Name, first.Level)
		}
		for _, f := range v.Features[1:] {
			if f.PSIBar > first.PSIBar+0.5 {
				t.Errorf("%s's PSI bar (%.1f px) is wider than %s's (%.1f px)", f.Name, f.PSIBar, first.Name, first.PSIBar)
			}
		}
		// Every shifted value is above the reference's greatest: in the
		// last bin, and out of range.
		want := featureOf(t, a, driftShifted)
		if got := first.Figures; !slices.Contains(got, fmt.Sprintf("Out of range: %s of the live values (%d values), outside the reference's least and greatest",
			shareText(*want.OutOfRange), want.Live.OutOfRange)) {
			t.Errorf("%s's figures read %q, want its share out of range, %s", first.Name, got, shareText(*want.OutOfRange))
		}
		if want.Live.OutOfRange != int64(len(rows)) {
			t.Errorf("the route counts %d values of %s out of range, want the %d shifted", want.Live.OutOfRange, driftShifted, len(rows))
		}
		// Among 30 inputs the stable ones' histograms are folded; the
		// tester opens one, and it stays open over a refresh.
		for _, f := range v.Features {
			if psi := *featureOf(t, a, f.Name).PSI; f.Open != (psi >= 0.1) {
				t.Errorf("%s (PSI %g): its histograms are open: %v, want them open for a PSI of 0.1 or more", f.Name, psi, f.Open)
			}
		}
		stable := v.Features[1]
		b.do("open the histograms of "+stable.Name, chromedp.Click(chromedp.CSS(`#drift-feature-list .drift-feature[data-feature="`+stable.Name+`"] summary`)))
		b.waitFor("the histograms of "+stable.Name, `document.querySelector('#drift-feature-list .drift-feature[data-feature="`+stable.Name+`"] details').open`)
		v = eval[driftView](b, driftScript)
		checkFeatureDrift(t, v.Features[1], featureOf(t, a, stable.Name))
		opened = stable.Name
		checkImportance(t, v, a)
		b.checkAccessibility(axe, "drift")
		checkDriftAccessibility(b, axe, "drift")
		b.screenshotOf("#drift", "ui-drift.png")
	})

	scoreRows(t, srv, driftKey, rows)
	a = awaitDrift(t, srv, admin, driftKey, int64(3*len(rows)))
	if opened == "" {
		t.Fatal("no input's histograms were opened")
	}

	t.Run("Refresh after more rows shows the new count and figures", func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		refreshDrift(b, a.Rows)
		v := eval[driftView](b, driftScript)
		checkDrift(t, v, a)
		if want := fmt.Sprintf("%d rows scored in the last hour", a.Rows); !strings.HasPrefix(v.RowsText, want) {
			t.Errorf("the rows measured read %q, want them to start %q", v.RowsText, want)
		}
		for _, f := range v.Features {
			if f.Name == opened && !f.Open {
				t.Errorf("the histograms of %s, opened before, are folded again after Refresh", f.Name)
			}
		}
	})

	t.Run(viewportName(390, 844), func(t *testing.T) {
		b := browser{t: t, ctx: tab}
		b.do("size the window", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		refreshDrift(b, a.Rows)
		b.checkAccessibility(axe, "drift on a phone")
		checkDriftAccessibility(b, axe, "drift on a phone")
		b.checkPhone("drift", 2)
		v := eval[driftView](b, driftScript)
		shown := v.Features
		if v.Prediction != nil {
			shown = append(shown, *v.Prediction)
		}
		for _, f := range shown {
			if f.Overflow {
				t.Errorf("the drift of %s runs past its box", f.Name)
			}
		}
		b.screenshotOf("#drift", "ui-drift-390.png")
	})

	if p := eval[[]string](b, "window.__problems"); len(p) > 0 {
		t.Errorf("the page had problems: %q", p)
	}
}

// declaredKey is the endpoint of the declared drift test: the LightGBM
// iris classifier of the format's tests, uploaded without rows, so that
// its version's reference is what its feature_infos declare, each
// input's range in training: sepal_length 4.3 to 7.9, sepal_width 2 to
// 4.4, petal_length 1 to 6.9, petal_width 0.1 to 2.5.
const declaredKey = "DEFAULT/flowers/species"

// declaredNotice starts what the section says of a declared reference.
const declaredNotice = "This version's reference comes from the model's declarations alone"

// TestBrowserDriftOfADeclaredReference deploys the LightGBM iris
// classifier, uploaded without reference or verification rows, on a
// model endpoint and scores flowers inside the ranges its file declares,
// three with petal_length above its range, one with sepal_width below
// its own and one without sepal_length. Refresh shows that the reference
// is declared, and for each input, the most outside first, the share of
// its live values outside the declared range, written and drawn as the
// route's figure; no PSI, no histograms, no legend of them, no drift
// against importance and no prediction, which a declared reference has
// not. axe-core finds no violation in the section.
func TestBrowserDriftOfADeclaredReference(t *testing.T) {
	tab := newTab(t)
	axe := axeSource(t)
	srv := harness.Start(t, harness.Options{})
	admin := srv.AdminToken(t)
	artifact, err := os.ReadFile(multiclassModel + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ method, path, contentType, body string }{
		{http.MethodPost, "/api/v1/models/flowers/versions?label=species&classes=setosa,versicolor,virginica", "application/octet-stream", string(artifact)},
		{http.MethodPost, "/api/v1/deployments", "application/json",
			`{"group":"DEFAULT","path":"flowers","enabled":true,"endpoints":[{"alias":"species","model":"flowers@1"}]}`},
	} {
		if status, got := srv.API(t, admin, w.method, w.path, w.contentType, w.body); status != http.StatusCreated {
			t.Fatalf("%s %s: %d %v", w.method, w.path, status, got)
		}
	}
	flower := func(sepalLength, sepalWidth, petalLength, petalWidth any) map[string]any {
		return map[string]any{"sepal_length": sepalLength, "sepal_width": sepalWidth, "petal_length": petalLength, "petal_width": petalWidth}
	}
	rows := []map[string]any{
		flower(5.1, 3.5, 1.4, 0.2), flower(4.9, 3.0, 1.4, 0.2), flower(6.3, 3.3, 4.7, 1.6),
		flower(5.8, 2.7, 4.1, 1.0), flower(6.5, 3.0, 5.8, 2.2),
		flower(7.2, 3.6, 6.1, 2.5), // the greatest petal_width declared is in range
		flower(6.7, 3.1, 9.5, 2.4), flower(7.4, 2.8, 9.5, 1.9), flower(6.9, 3.1, 9.5, 2.3),
		flower(5.0, 1.2, 3.5, 1.0),
		flower(nil, 3.4, 1.5, 0.2),
	}
	// The values of each input outside its declared range.
	outside := map[string]int64{"sepal_length": 0, "sepal_width": 1, "petal_length": 3, "petal_width": 0}
	scoreRows(t, srv, declaredKey, rows)
	a := awaitDrift(t, srv, admin, declaredKey, int64(len(rows)))
	if !a.Declared || a.Version != "flowers@1" || a.Prediction != nil {
		t.Fatalf("the route measures %s against a reference declared: %v, with a prediction: %v; want flowers@1's declared reference, without",
			a.Version, a.Declared, a.Prediction != nil)
	}
	for name, n := range outside {
		f := featureOf(t, a, name)
		if f.PSI != nil || f.JS != nil {
			t.Errorf("the route gives %s a PSI or a JS distance against a declared reference, want neither", name)
		}
		if f.OutOfRange == nil {
			t.Fatalf("the route gives %s no share out of range", name)
		}
		if f.Live.OutOfRange != n {
			t.Errorf("the route counts %d values of %s out of range, want %d", f.Live.OutOfRange, name, n)
		}
	}

	b := browser{t: t, ctx: tab}
	b.do("size the window", chromedp.EmulateViewport(1280, 900))
	b.do("open the endpoint", chromedp.Navigate(srv.Base+"/ui/#"+declaredKey))
	b.signIn("admin", harness.AdminPassword)
	b.waitFor("the drift section", `!document.getElementById('drift').hidden`)
	refreshDrift(b, a.Rows)
	v := eval[driftView](b, driftScript)

	if !v.Shown || v.Message != "" {
		t.Fatalf("the Drift section is shown: %v, with the notice %q; want it shown without one", v.Shown, v.Message)
	}
	if v.Rows != strconv.FormatInt(a.Rows, 10) || v.Version != a.Version {
		t.Errorf("the page shows %s rows of %s, the route %d of %s", v.Rows, v.Version, a.Rows, a.Version)
	}
	if !v.Declared || !strings.HasPrefix(v.DeclaredText, declaredNotice) {
		t.Errorf("the page says the reference is declared: %v, in the words %q; want it to, starting %q", v.Declared, v.DeclaredText, declaredNotice)
	}
	if v.Legend || v.Importance || v.Prediction != nil {
		t.Errorf("with a declared reference the page shows the legend of histograms and PSI: %v, a drift against importance: %v, a prediction: %v; want none",
			v.Legend, v.Importance, v.Prediction != nil)
	}
	// The most outside first; a tie keeps the model's order.
	want := append([]featureDriftAnswer(nil), a.Features...)
	sort.SliceStable(want, func(i, j int) bool { return *want[i].OutOfRange > *want[j].OutOfRange })
	var wantNames, names []string
	for _, f := range want {
		wantNames = append(wantNames, f.Name)
	}
	for _, f := range v.Features {
		names = append(names, f.Name)
	}
	if d := cmp.Diff([]string{"petal_length", "sepal_width", "sepal_length", "petal_width"}, wantNames); d != "" {
		t.Errorf("the route's inputs, the most outside their range first (-want +route):\n%s", d)
	}
	if d := cmp.Diff(wantNames, names); d != "" {
		t.Fatalf("the inputs, the most outside their range first (-route +page):\n%s", d)
	}
	for i, f := range v.Features {
		checkDeclaredDrift(t, f, want[i])
	}
	b.checkAccessibility(axe, "declared drift")
	checkDriftAccessibility(b, axe, "declared drift")
	b.screenshotOf("#drift", "ui-drift-declared.png")

	if p := eval[[]string](b, "window.__problems"); len(p) > 0 {
		t.Errorf("the page had problems: %q", p)
	}
}

// checkDeclaredDrift fails the test unless f shows want, a column of a
// declared reference: the share of its live values out of the declared
// range, written as the route's and drawn as a gauge filled to it, and
// its missing rate; no PSI, no JS distance and no histograms.
func checkDeclaredDrift(t *testing.T, f featureDriftView, want featureDriftAnswer) {
	t.Helper()
	if f.PSIText != "" || f.PSIBar >= 0 || f.PSITrack >= 0 || f.Level != "" {
		t.Errorf("%s shows a PSI %q, a bar of %.1f px on a track of %.1f px and a level %q, against a declared reference; want none",
			f.Name, f.PSIText, f.PSIBar, f.PSITrack, f.Level)
	}
	if f.Histograms || len(f.Bins) > 0 {
		t.Errorf("%s shows histograms (%d bins) of a declared reference, which counts no row", f.Name, len(f.Bins))
	}
	if len(f.Outside) != 1 {
		t.Fatalf("%s shows %d shares outside its reference, want its share out of range alone: %+v", f.Name, len(f.Outside), f.Outside)
	}
	o, share := f.Outside[0], *want.OutOfRange
	if text := shareText(share) + " of the live values are outside the declared range."; o.Text != text {
		t.Errorf("%s reads %q, want %q", f.Name, o.Text, text)
	}
	if got, err := strconv.ParseFloat(o.Share, 64); err != nil || got != share {
		t.Errorf("%s's share outside its range is %q on the page, the route's is %g", f.Name, o.Share, share)
	}
	if o.Fill < 0 || o.Track <= 0 {
		t.Errorf("%s's share outside its range has no gauge", f.Name)
	} else if drawn := share * o.Track; math.Abs(o.Fill-drawn) > 1.5 {
		t.Errorf("%s's gauge is filled %.1f px of %.1f px, want %.1f for a share of %g", f.Name, o.Fill, o.Track, drawn, share)
	}
	missing := fmt.Sprintf("Missing: %s of the rows measured", shareText(want.MissingRate.Live))
	if !slices.Contains(f.Figures, missing) {
		t.Errorf("%s's figures read %q, want %q", f.Name, f.Figures, missing)
	}
	for _, line := range f.Figures {
		for _, measured := range []string{"JS distance:", "Out of range:", "Unseen:"} {
			if strings.HasPrefix(line, measured) {
				t.Errorf("%s's figures read %q, a figure of a reference of rows", f.Name, line)
			}
		}
	}
}

// driftRoute is the path of GET …/drift of the endpoint key.
func driftRoute(key string) string { return "/api/v1/endpoints/" + key + "/drift" }

// scoreRows scores rows on the model endpoint key (group/path/alias) and
// fails the test unless they are answered.
func scoreRows(t *testing.T, srv *harness.Server, key string, rows []map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"data": rows})
	if err != nil {
		t.Fatal(err)
	}
	group, endpoint, _ := strings.Cut(key, "/")
	if status, got := srv.PostJSON(t, "/webapi/"+group+"/api/v1/services/"+endpoint, string(body)); status != http.StatusOK {
		t.Fatalf("score %d rows on %s: %d %v", len(rows), key, status, got)
	}
}

// readDrift reads GET …/drift of the endpoint key with token: its status,
// and its answer when 200.
func readDrift(t *testing.T, srv *harness.Server, token, key string) (int, driftAnswer) {
	t.Helper()
	status, got := srv.API(t, token, http.MethodGet, driftRoute(key), "", "")
	var a driftAnswer
	if status == http.StatusOK {
		b, _ := json.Marshal(got)
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("GET %s: %v", driftRoute(key), err)
		}
	}
	return status, a
}

// awaitDrift waits for GET …/drift of the endpoint key to measure n rows,
// as rows are counted once their answer is written, and returns it.
func awaitDrift(t *testing.T, srv *harness.Server, token, key string, n int64) driftAnswer {
	t.Helper()
	var a driftAnswer
	testutil.Eventually(t, waitLimit, fmt.Sprintf("the route to measure %d rows", n), func() bool {
		var status int
		status, a = readDrift(t, srv, token, key)
		return status == http.StatusOK && a.Rows == n
	})
	return a
}

// refreshDrift presses the section's Refresh and waits for the figures
// of rows rows.
func refreshDrift(b browser, rows int64) {
	b.t.Helper()
	b.do("press Refresh drift", chromedp.Click(chromedp.CSS("#drift-refresh")))
	b.waitFor(fmt.Sprintf("the drift of %d rows", rows), `!document.getElementById('drift-refresh').disabled &&
		!document.getElementById('drift-facts').hidden && document.getElementById('drift-rows').dataset.rows === '`+strconv.FormatInt(rows, 10)+`'`)
}

// checkDrift fails the test unless v shows the route's answer a: its
// version and rows, every input most drifted first (by the route's PSI,
// those without last), each PSI written as the route's and drawn to it,
// both histograms with one bar per bin, each the width of its share,
// and the prediction.
func checkDrift(t *testing.T, v driftView, a driftAnswer) {
	t.Helper()
	if !v.Shown || v.Message != "" {
		t.Fatalf("the Drift section is shown: %v, with the notice %q; want it shown without one", v.Shown, v.Message)
	}
	if v.Rows != strconv.FormatInt(a.Rows, 10) || v.Version != a.Version || v.Version != "cancer@1" {
		t.Errorf("the page shows %s rows of %s, the route %d of %s; want the same, of cancer@1", v.Rows, v.Version, a.Rows, a.Version)
	}
	if v.Declared != a.Declared || a.Declared || !v.Legend {
		t.Errorf("the page says the reference is declared: %v, the route %v, with the legend of histograms and PSI shown: %v; want a reference of verification rows, with its legend",
			v.Declared, a.Declared, v.Legend)
	}
	want := append([]featureDriftAnswer(nil), a.Features...)
	rank := func(f featureDriftAnswer) float64 {
		if f.PSI == nil {
			return -1
		}
		return *f.PSI
	}
	sort.SliceStable(want, func(i, j int) bool { return rank(want[i]) > rank(want[j]) })
	if len(want) == 0 || want[0].Name != driftShifted {
		t.Fatalf("the route's most drifted input is not %s: %v", driftShifted, want)
	}
	names := func(fs []featureDriftView) []string {
		var s []string
		for _, f := range fs {
			s = append(s, f.Name)
		}
		return s
	}
	var wantNames []string
	for _, f := range want {
		wantNames = append(wantNames, f.Name)
	}
	if d := cmp.Diff(wantNames, names(v.Features)); d != "" {
		t.Fatalf("the inputs, most drifted first (-route +page):\n%s", d)
	}
	for i, f := range v.Features {
		checkFeatureDrift(t, f, want[i])
	}
	if a.Prediction == nil {
		if v.Prediction != nil {
			t.Errorf("the page shows the drift of the prediction %s, which the route does not measure", v.Prediction.Name)
		}
		return
	}
	if v.Prediction == nil {
		t.Fatalf("the route measures the prediction %s, the page does not show it", a.Prediction.Name)
	}
	checkFeatureDrift(t, *v.Prediction, *a.Prediction)
}

// checkFeatureDrift fails the test unless f shows want: its PSI written
// (to the page's three decimals) and drawn as a share of the track's
// 0…0.5, and both histograms with one bar per bin, each written as its
// share and, unless folded, drawn to its share of the largest.
func checkFeatureDrift(t *testing.T, f featureDriftView, want featureDriftAnswer) {
	t.Helper()
	if want.PSI == nil {
		t.Errorf("the route has no PSI of %s after rows of it were scored", want.Name)
		return
	}
	psi := *want.PSI
	switch shown, err := strconv.ParseFloat(f.PSIText, 64); {
	case psi < 0.001:
		if f.PSIText != "0" && f.PSIText != "< 0.001" {
			t.Errorf("%s's PSI is written %q, the route's is %g", want.Name, f.PSIText, psi)
		}
	case err != nil || math.Abs(shown-psi) > 0.0005:
		t.Errorf("%s's PSI is written %q, the route's is %g", want.Name, f.PSIText, psi)
	}
	if drawn := math.Min(psi/0.5, 1) * f.PSITrack; math.Abs(f.PSIBar-drawn) > 1.5 {
		t.Errorf("%s's PSI bar is %.1f px of its %.1f px track, want %.1f for a PSI of %g", want.Name, f.PSIBar, f.PSITrack, drawn, psi)
	}
	bins := len(want.Live.Counts)
	if want.Kind == "number" && bins != len(want.Edges)+1 || want.Kind == "text" && bins != len(want.Categories)+1 {
		t.Fatalf("the route's %s has %d bins for %d edges and %d categories", want.Name, bins, len(want.Edges), len(want.Categories))
	}
	if len(f.Bins) != bins || !f.Histograms {
		t.Fatalf("%s's histograms (shown: %v) have %d bins, want the route's %d", want.Name, f.Histograms, len(f.Bins), bins)
	}
	if len(f.Outside) > 0 {
		t.Errorf("%s shows shares outside a declared reference, against verification rows: %+v", want.Name, f.Outside)
	}
	ref, live := shares(want.Reference.Counts), shares(want.Live.Counts)
	most := max(slices.Max(ref), slices.Max(live))
	widest := 0.0
	for _, bin := range f.Bins {
		widest = math.Max(widest, math.Max(bin.Reference, bin.Live))
	}
	for i, bin := range f.Bins {
		if bin.Reference < 0 || bin.Live < 0 {
			t.Errorf("%s's bin %d (%s) lacks its reference or its live bar", want.Name, i, bin.Label)
			continue
		}
		if !f.Open {
			continue // folded: drawn once opened
		}
		for _, side := range []struct {
			name  string
			width float64
			share float64
		}{{"reference", bin.Reference, ref[i]}, {"live", bin.Live, live[i]}} {
			if drawn := side.share / most * widest; math.Abs(side.width-drawn) > 1.5 {
				t.Errorf("%s's bin %d (%s): the %s bar is %.1f px, want %.1f for a share of %g", want.Name, i, bin.Label, side.name, side.width, drawn, side.share)
			}
		}
		if d := cmp.Diff([]string{shareText(ref[i]), shareText(live[i])}, bin.Shares); d != "" {
			t.Errorf("%s's bin %d (%s): the shares written (-want +got):\n%s", want.Name, i, bin.Label, d)
		}
	}
	if want.Kind == "number" && len(want.Edges) > 0 {
		first, last := f.Bins[0].Label, f.Bins[bins-1].Label
		if !strings.HasPrefix(first, "≤ ") || !strings.HasPrefix(last, "> ") {
			t.Errorf("%s's bins are labelled %q … %q, want ≤ the first edge … > the last", want.Name, first, last)
		}
	}
	if want.Kind == "text" && f.Bins[bins-1].Label != "other" {
		t.Errorf("%s's last bin is labelled %q, want other", want.Name, f.Bins[bins-1].Label)
	}
}

// checkImportance fails the test unless the drift against importance is
// shown, with a point and a line of its table per input, exactly when
// the route gives the inputs importance.
func checkImportance(t *testing.T, v driftView, a driftAnswer) {
	t.Helper()
	var with []string
	for _, f := range a.Features {
		if f.Importance != nil && f.PSI != nil {
			with = append(with, f.Name)
		}
	}
	if len(with) == 0 {
		t.Log("the route gives no input an importance: the drift against importance is not shown")
		if v.Importance {
			t.Error("the page shows a drift against importance, yet the route gives no importance")
		}
		return
	}
	if !v.Importance {
		t.Fatalf("the route gives %d inputs an importance, the page shows no drift against importance", len(with))
	}
	sort.Strings(with)
	for _, got := range [][]string{v.Points, v.ImportanceRows} {
		got = append([]string(nil), got...)
		sort.Strings(got)
		if d := cmp.Diff(with, got); d != "" {
			t.Errorf("the drift against importance (-route +page):\n%s", d)
		}
	}
}

// checkDriftAccessibility runs axe-core, which checkAccessibility loaded,
// over the drift section and fails the test for any violation, of any
// impact.
func checkDriftAccessibility(b browser, src, state string) {
	b.t.Helper()
	if !eval[bool](b, "typeof axe === 'object'") {
		b.do("load axe-core", chromedp.Evaluate[chromedp.Void](src+"\n;undefined"))
	}
	for _, v := range eval[[]axeViolation](b, axeDriftRun, chromedp.EvalAwaitPromise) {
		b.t.Errorf("%s: %s violation %s in the drift section (%s):\n  %s", state, v.Impact, v.ID, v.Help, strings.Join(v.Nodes, "\n  "))
	}
}

func featureOf(t *testing.T, a driftAnswer, name string) featureDriftAnswer {
	t.Helper()
	for _, f := range a.Features {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("the route has no input %s", name)
	return featureDriftAnswer{}
}

// shares returns counts as shares of their sum.
func shares(counts []int64) []float64 {
	var sum int64
	for _, c := range counts {
		sum += c
	}
	s := make([]float64, len(counts))
	for i, c := range counts {
		if sum > 0 {
			s[i] = float64(c) / float64(sum)
		}
	}
	return s
}

// shareText writes a share as the page does: a percentage to a tenth,
// a share not 0 (or not 1) never rounded to 0% (or 100%).
func shareText(s float64) string {
	switch {
	case s > 0 && s < 0.001:
		return "< 0.1%"
	case s < 1 && s > 0.999:
		return "> 99.9%"
	}
	return strconv.FormatFloat(math.Round(s*1000)/10, 'f', -1, 64) + "%"
}
