package browser

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// wideModel is the breast-cancer XGBoost classifier of the format's tests:
// 30 features, a model whose echoed inputs fill several screens.
const wideModel = "../../registry/xgboost/testdata/breast_cancer_logistic"

// wideFixture is what the format's tests hold beside the model: its
// metadata, rows and the predictions its producer made for them.
type wideFixture struct {
	Metadata struct {
		Label   string   `json:"label"`
		Classes []string `json:"classes"`
	} `json:"metadata"`
	Rows        []map[string]any `json:"rows"`
	Predictions [][]float64      `json:"predictions"`
}

// uploadWideModel uploads the 30-feature model as model name, verified
// with its producer's rows and predictions, and returns the rows.
func uploadWideModel(t *testing.T, srv *harness.Server, admin, name string) []map[string]any {
	t.Helper()
	artifact, err := os.ReadFile(wideModel + ".json")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(wideModel + ".rows.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx wideFixture
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	meta, err := json.Marshal(map[string]any{
		"label":   fx.Metadata.Label,
		"classes": fx.Metadata.Classes,
		// float32 trees: the producer's confidences agree to about 1e-6.
		"verification": map[string]any{"rows": fx.Rows, "expected": fx.Predictions, "tolerance": 1e-5},
	})
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, p := range []struct {
		name string
		b    []byte
	}{{"artifact", artifact}, {"metadata", meta}} {
		w, err := mw.CreateFormField(p.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(p.b)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	if status, got := srv.API(t, admin, http.MethodPost, "/api/v1/models/"+name+"/versions", mw.FormDataContentType(), body.String()); status != http.StatusCreated {
		t.Fatalf("upload the 30-feature model: %d %v", status, got)
	}
	return fx.Rows
}

// wideView is what a person sees of the answer of the wide model, the
// page scrolled down to the table but the table not scrolled sideways.
type wideView struct {
	First       string  `json:"first"`       // the first column's header
	Prediction  string  `json:"prediction"`  // the first row's prediction cell
	Left        float64 `json:"left"`        // of the prediction cell
	Right       float64 `json:"right"`       // of the prediction cell
	WrapLeft    float64 `json:"wrapLeft"`    // of the table's frame
	WrapRight   float64 `json:"wrapRight"`   // of the table's frame
	Width       float64 `json:"width"`       // window.innerWidth
	OnTop       bool    `json:"onTop"`       // the cell is what is drawn at its centre
	Scrolled    bool    `json:"scrolled"`    // the page or the table is scrolled sideways
	Overflows   bool    `json:"overflows"`   // the table is wider than its frame
	PinnedRight float64 `json:"pinnedRight"` // the prediction cell's right, the table scrolled to its end
	PinnedLeft  float64 `json:"pinnedLeft"`  // and its left
}

const wideScript = `(() => {
  const cell = document.querySelector('#result-table td[data-column="prediction(diagnosis)"]');
  const wrap = document.getElementById('result-table-wrap');
  // Down to the table, as a reader scrolls; never sideways.
  window.scrollTo(0, window.scrollY + wrap.getBoundingClientRect().top - 80);
  const r = cell.getBoundingClientRect();
  const w = wrap.getBoundingClientRect();
  const at = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
  const view = {
    first: document.querySelector('#result-table th[data-column]').textContent,
    prediction: cell.textContent,
    left: r.left, right: r.right, wrapLeft: w.left, wrapRight: w.right, width: window.innerWidth,
    onTop: at === cell || cell.contains(at),
    scrolled: window.scrollX !== 0 || wrap.scrollLeft !== 0,
    overflows: wrap.scrollWidth > wrap.clientWidth,
  };
  wrap.scrollLeft = wrap.scrollWidth;
  const p = cell.getBoundingClientRect();
  view.pinnedLeft = p.left;
  view.pinnedRight = p.right;
  wrap.scrollLeft = 0;
  return view;
})()`

// TestBrowserShowsTheResultOfAWideModelFirst deploys a 30-feature model
// uploaded with its producer's rows as verification and opens its test
// page at 1280×800 without signing in: the request body starts from the
// verification rows, not a row of zeros, and once run, the prediction is
// the table's first column, in view without scrolling the table sideways,
// and stays in view when the inputs are scrolled past it.
func TestBrowserShowsTheResultOfAWideModelFirst(t *testing.T) {
	tab := newTab(t)
	srv := harness.Start(t, harness.Options{})
	admin := srv.AdminToken(t)
	rows := uploadWideModel(t, srv, admin, "cancer")
	if status, got := srv.API(t, admin, http.MethodPost, "/api/v1/deployments", "application/json",
		`{"group":"DEFAULT","path":"cancer","enabled":true,"endpoints":[{"alias":"diagnose","model":"cancer@1"}]}`); status != http.StatusCreated {
		t.Fatalf("deploy the model: %d %v", status, got)
	}

	b := browser{t: t, ctx: tab}
	b.do("size the window 1280×800", chromedp.EmulateViewport(1280, 800))
	b.do("open a link to the model's endpoint", chromedp.Navigate(srv.Base+"/ui/#DEFAULT/cancer/diagnose"))
	b.waitFor("the sample input", `document.getElementById('body').value.includes('mean_radius')`)

	var body struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal([]byte(eval[string](b, "document.getElementById('body').value")), &body); err != nil {
		t.Fatalf("the request body is not JSON: %v", err)
	}
	if len(body.Data) != 3 {
		t.Fatalf("the request body has %d rows, want the first 3 verification rows", len(body.Data))
	}
	for i, row := range body.Data {
		// The page keeps the digits the server sent; read as numbers, they
		// are the values uploaded.
		if d := cmp.Diff(rows[i], row); d != "" {
			t.Errorf("row %d of the request body, want verification row %d (-want +got):\n%s", i, i, d)
		}
	}

	b.runTest()
	if code := b.text("#result-code"); code != "200 OK" {
		t.Fatalf("status shown %q, want 200 OK%s", code, b.problems())
	}
	v := eval[wideView](b, wideScript)
	b.screenshot("ui-wide-model.png")
	if v.First != "prediction(diagnosis)" {
		t.Errorf("the table starts with %q, want the prediction", v.First)
	}
	if v.Prediction != "malignant" && v.Prediction != "benign" {
		t.Errorf("the prediction cell shows %q, want a class", v.Prediction)
	}
	if v.Scrolled {
		t.Error("the page or the table was scrolled sideways to show the result")
	}
	if v.Left < v.WrapLeft-1 || v.Right > v.WrapRight+1 || v.Right > v.Width || !v.OnTop {
		t.Errorf("the prediction cell spans %.0f–%.0f px (drawn on top: %v); want it inside the table's frame (%.0f–%.0f) and the window (%.0f wide)",
			v.Left, v.Right, v.OnTop, v.WrapLeft, v.WrapRight, v.Width)
	}
	if !v.Overflows {
		t.Error("the 30 inputs fit the frame: the test no longer shows that the result is pinned")
	}
	if v.PinnedLeft < v.WrapLeft-1 || v.PinnedRight > v.WrapRight+1 {
		t.Errorf("scrolled to the last input, the prediction cell spans %.0f–%.0f px; want it pinned inside the frame (%.0f–%.0f)",
			v.PinnedLeft, v.PinnedRight, v.WrapLeft, v.WrapRight)
	}
	if p := eval[[]string](b, "window.__problems"); len(p) > 0 {
		t.Errorf("the page had problems: %v", p)
	}
}
