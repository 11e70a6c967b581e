package browser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// layoutFacts is what a person sees of the result at one window width.
type layoutFacts struct {
	PageOverflow   bool     `json:"pageOverflow"`   // the page itself is wider than the window
	WrapInWindow   bool     `json:"wrapInWindow"`   // the table's frame ends inside the window
	LastVisible    bool     `json:"lastVisible"`    // the last column's header is inside the frame as laid out
	Scrollable     bool     `json:"scrollable"`     // the frame scrolls sideways to what it cannot show
	LastAfter      bool     `json:"lastAfter"`      // scrolled to the end, the last column is inside the frame
	Hint           bool     `json:"hint"`           // the page says the table scrolls sideways
	RawClipped     bool     `json:"rawClipped"`     // a raw JSON line is wider than its box
	ConfidenceText []string `json:"confidenceText"` // the confidence(virginica) cells
}

// layoutScript measures layoutFacts in the page.
const layoutScript = `(() => {
  const wrap = document.getElementById('result-table-wrap');
  const heads = [...document.querySelectorAll('#result-table th[data-column]')];
  const last = heads[heads.length - 1];
  const w = wrap.getBoundingClientRect();
  const inside = () => { const r = last.getBoundingClientRect(); return r.left >= w.left - 1 && r.right <= w.right + 1; };
  const lastVisible = inside();
  const style = getComputedStyle(wrap).overflowX;
  const scrollable = wrap.scrollWidth > wrap.clientWidth && (style === 'auto' || style === 'scroll');
  wrap.scrollLeft = wrap.scrollWidth;
  const lastAfter = inside();
  wrap.scrollLeft = 0;
  const raw = document.getElementById('raw-json');
  return {
    pageOverflow: document.documentElement.scrollWidth > window.innerWidth,
    wrapInWindow: w.right <= window.innerWidth,
    lastVisible, scrollable, lastAfter,
    hint: !document.getElementById('result-table-hint').hidden,
    rawClipped: raw.scrollWidth > raw.clientWidth,
    confidenceText: [...document.querySelectorAll('#result-table td[data-column="confidence(virginica)"]')].map((td) => td.textContent),
  };
})()`

// TestBrowserLayout: a browser sent to the server's address lands on the
// test page; at 1280×900 and at 420 px wide, every result column can be
// seen (at once or by scrolling the table, never by scrolling the whole
// page), numbers are shown with every digit the server sent, and raw JSON
// lines are not clipped.
func TestBrowserLayout(t *testing.T) {
	tab := newTab(t)
	srv := harness.Start(t, harness.Options{})
	b := browser{t: t, ctx: tab}

	b.do("open the server's address", chromedp.Navigate(srv.Base+"/"))
	if loc := eval[string](b, "location.pathname"); loc != "/ui/" {
		t.Fatalf("a browser opening / landed on %s, want the test page /ui/", loc)
	}

	b.signIn("admin", harness.AdminPassword)
	b.do("open the iris endpoint",
		chromedp.WaitVisible(chromedp.CSS(`button[data-endpoint="`+irisKey+`"]`)),
		chromedp.Click(chromedp.CSS(`button[data-endpoint="`+irisKey+`"]`)))
	b.waitFor("the sample input", `document.getElementById('body').value.includes('sepal_length')`)
	b.runTest()
	if code := b.text("#result-code"); code != "200 OK" {
		t.Fatalf("status shown %q, want 200 OK%s", code, b.problems())
	}
	raw := b.text("#raw-json")

	for _, size := range []struct{ width, height int64 }{{1280, 900}, {420, 900}} {
		t.Run(fmt.Sprintf("%dx%d", size.width, size.height), func(t *testing.T) {
			b := browser{t: t, ctx: tab}
			b.do("resize the window", chromedp.EmulateViewport(size.width, size.height))
			// The hint follows the frame's width after a resize.
			b.waitFor("the scroll hint to match the frame", `(() => {
				const w = document.getElementById('result-table-wrap');
				return document.getElementById('result-table-hint').hidden === !(w.scrollWidth > w.clientWidth + 1);
			})()`)
			f := eval[layoutFacts](b, layoutScript)
			b.screenshot(fmt.Sprintf("ui-layout-%d.png", size.width))
			if f.PageOverflow {
				t.Error("the page is wider than the window: the result must scroll in its own frame")
			}
			if !f.WrapInWindow {
				t.Error("the result table's frame runs past the window's right edge")
			}
			if !f.LastVisible && !f.Scrollable {
				t.Error("the last result column is cut off and the table does not scroll sideways")
			}
			if f.Scrollable && !f.Hint {
				t.Error("the table scrolls sideways but the page does not say so")
			}
			if !f.LastAfter {
				t.Error("scrolled to its end, the table still does not show its last column")
			}
			if f.RawClipped {
				t.Error("a raw JSON line is wider than its box")
			}
			if len(f.ConfidenceText) == 0 {
				t.Fatal("no confidence(virginica) cells")
			}
			for _, s := range f.ConfidenceText {
				if !strings.Contains(raw, `"confidence(virginica)": `+s) {
					t.Errorf("confidence(virginica) shown as %q, which is not the number the server sent:\n%s", s, raw)
				}
			}
		})
	}
	if p := eval[[]string](b, "window.__problems"); len(p) > 0 {
		t.Errorf("the page had problems:\n  %s", strings.Join(p, "\n  "))
	}
}
