package browser

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// phoneFacts is what a person on a phone sees of the page as it is.
type phoneFacts struct {
	PageOverflow   bool     `json:"pageOverflow"`   // the page is wider than the window
	SmallFields    []string `json:"smallFields"`    // form fields whose text is under 16 px, which iOS zooms into on focus
	Overflowing    []string `json:"overflowing"`    // visible elements that run past their box's right edge
	HeaderRows     int      `json:"headerRows"`     // lines the top bar takes
	TitleTop       float64  `json:"titleTop"`       // the opened endpoint's title, from the window's top (-1: none shown)
	URLClipped     bool     `json:"urlClipped"`     // the endpoint URL is cut off in its field
	CurlClipped    bool     `json:"curlClipped"`    // a line of the curl command is cut off
	HiddenResults  []string `json:"hiddenResults"`  // result columns not wholly inside the table's frame
	CutHeaders     []string `json:"cutHeaders"`     // column headers whose text does not fit them
	WindowHeight   float64  `json:"windowHeight"`   // window.innerHeight
	ResultColumns  int      `json:"resultColumns"`  // result columns in the table
	ContainerWidth float64  `json:"containerWidth"` // the width of the result's card
}

// phoneScript measures phoneFacts in the page.
const phoneScript = `(() => {
  const shown = (e) => e && !e.closest('[hidden]') && e.getClientRects().length > 0;
  const name = (e) => e.id ? '#' + e.id : e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ').join('.') : '') + ' "' + e.textContent.trim().slice(0, 40) + '"';
  const small = [...document.querySelectorAll('input:not([type=radio]):not([type=checkbox]), textarea, select')]
    .filter(shown).filter((e) => parseFloat(getComputedStyle(e).fontSize) < 16).map(name);
  const overflowing = [...document.querySelectorAll('button, .menu, .card, .topbar, .session, .notice')].filter(shown)
    .filter((e) => {
      // Past the parent's padding, into its border or beyond.
      const ps = getComputedStyle(e.parentElement);
      const edge = e.parentElement.getBoundingClientRect().right - parseFloat(ps.paddingRight) - parseFloat(ps.borderRightWidth);
      const r = e.getBoundingClientRect();
      return r.right > edge + 1 || r.right > window.innerWidth + 1 || e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'visible';
    })
    .map(name);
  const rows = [];
  for (const e of [document.querySelector('.brand'), ...document.querySelectorAll('#session > *')].filter(shown)) {
    const top = e.getBoundingClientRect().top;
    if (!rows.some((t) => Math.abs(t - top) < 12)) rows.push(top);
  }
  const title = document.getElementById('endpoint-title');
  const url = document.getElementById('endpoint-url');
  const curl = document.getElementById('curl');
  const wrap = document.getElementById('result-table-wrap');
  const hiddenResults = [];
  const cutHeaders = [];
  let resultColumns = 0;
  if (shown(wrap)) {
    const w = wrap.getBoundingClientRect();
    // The cells of the first row: the headers may be laid out for screen
    // readers only.
    for (const td of wrap.querySelectorAll('tbody tr:first-child td.result-col')) {
      resultColumns++;
      const r = td.getBoundingClientRect();
      if (r.left < w.left - 1 || r.right > w.right + 1) hiddenResults.push(td.dataset.column);
    }
    for (const th of wrap.querySelectorAll('th')) {
      if (th.getBoundingClientRect().width > 1 && th.scrollWidth > th.clientWidth + 1) cutHeaders.push(th.textContent);
    }
  }
  return {
    pageOverflow: document.documentElement.scrollWidth > window.innerWidth,
    smallFields: small, overflowing, headerRows: rows.length,
    titleTop: shown(title) ? title.getBoundingClientRect().top : -1,
    urlClipped: shown(url) && (url.scrollWidth > url.clientWidth + 1 || url.scrollHeight > url.clientHeight + 1),
    curlClipped: shown(curl) && curl.scrollWidth > curl.clientWidth + 1,
    hiddenResults, cutHeaders, resultColumns,
    windowHeight: window.innerHeight,
    containerWidth: shown(wrap) ? wrap.getBoundingClientRect().width : 0,
  };
})()`

// checkPhone fails the test for what phoneFacts shows a phone's user
// cannot read or reach.
func (b browser) checkPhone(state string, headerRows int) phoneFacts {
	b.t.Helper()
	f := eval[phoneFacts](b, phoneScript)
	if f.PageOverflow {
		b.t.Errorf("%s: the page is wider than the window", state)
	}
	if len(f.SmallFields) > 0 {
		b.t.Errorf("%s: form fields with text under 16 px, which a phone zooms into: %q", state, f.SmallFields)
	}
	if len(f.Overflowing) > 0 {
		b.t.Errorf("%s: elements run past their box: %q", state, f.Overflowing)
	}
	if f.HeaderRows > headerRows {
		b.t.Errorf("%s: the top bar takes %d lines, want at most %d", state, f.HeaderRows, headerRows)
	}
	if f.URLClipped {
		b.t.Errorf("%s: the endpoint URL is cut off in its field", state)
	}
	if f.CurlClipped {
		b.t.Errorf("%s: the curl command is cut off", state)
	}
	if len(f.HiddenResults) > 0 {
		b.t.Errorf("%s: result columns %q are not in the table's frame (%.0f px wide)", state, f.HiddenResults, f.ContainerWidth)
	}
	if len(f.CutHeaders) > 0 {
		b.t.Errorf("%s: column headers cut off: %q", state, f.CutHeaders)
	}
	return f
}

// TestBrowserAccessibleOnDesktopAndPhone walks through the test page as a
// person does, anonymous and signed in: the home page, an endpoint, its
// result with the curl command, an error. At each step axe-core finds no
// serious or critical violation, at desktop size and at phone sizes; on a
// phone, nothing is cut off or wider than the window, the results are
// read first, and an endpoint opened from the menu is shown at the top.
func TestBrowserAccessibleOnDesktopAndPhone(t *testing.T) {
	tab := newTab(t) // first: it skips under -short
	axe := axeSource(t)
	srv := harness.Start(t, harness.Options{})

	for _, size := range []struct {
		width, height int64
		phone         bool
		headerRows    int // the lines the signed-in top bar may take
	}{{1280, 800, false, 1}, {390, 844, true, 2}, {360, 740, true, 2}, {320, 640, true, 3}} {
		t.Run(viewportName(size.width, size.height), func(t *testing.T) {
			b := browser{t: t, ctx: tab}
			shot := func(state string) { b.screenshot(fmt.Sprintf("ui-a11y-%d-%s.png", size.width, state)) }
			check := func(state string) {
				b.checkAccessibility(axe, state)
				if size.phone {
					b.checkPhone(state, size.headerRows)
				}
				shot(state)
			}
			var mobile []chromedp.EmulateViewportOption
			if size.phone {
				mobile = append(mobile, chromedp.EmulateMobile)
			}
			b.do("size the window", chromedp.EmulateViewport(size.width, size.height, mobile...))
			b.do("open the test page", chromedp.Navigate(srv.Base+"/ui/"))
			b.do("wait for the menu", chromedp.WaitVisible(chromedp.CSS(`button[data-endpoint="`+irisKey+`"]`)))
			check("anonymous")

			b.signIn("admin", harness.AdminPassword)
			b.do("wait for the signed-in menu", chromedp.WaitVisible(chromedp.CSS("#session")), chromedp.WaitVisible(chromedp.CSS("#queue-list")))
			check("signed-in")

			b.do("open the iris endpoint", chromedp.Click(chromedp.CSS(`button[data-endpoint="`+irisKey+`"]`)))
			b.waitFor("the sample input", `document.getElementById('body').value.includes('sepal_length')`)
			if size.phone {
				// Opened from the menu, the endpoint comes to the top of
				// the window, not to its bottom edge.
				f := eval[phoneFacts](b, phoneScript)
				if f.TitleTop < -1 || f.TitleTop > f.WindowHeight/4 {
					t.Errorf("the opened endpoint's title is %.0f px from the top of a %.0f px window, want it in the top quarter", f.TitleTop, f.WindowHeight)
				}
			}
			check("endpoint")

			b.runTest()
			if code := b.text("#result-code"); code != "200 OK" {
				t.Fatalf("status shown %q, want 200 OK%s", code, b.problems())
			}
			b.do("show the curl command", chromedp.Click(chromedp.CSS("#show-curl")), chromedp.WaitVisible(chromedp.CSS("#curl")))
			check("result")
			if f := eval[phoneFacts](b, phoneScript); f.ResultColumns != 4 {
				t.Errorf("%d result columns measured in the first row, want prediction(species) and 3 confidences", f.ResultColumns)
			}

			b.typeInto("#body", `{"data":[{"sepal_length":5.1,}]}`)
			b.runTest()
			b.waitFor("the error", `!document.getElementById('result-error').hidden`)
			check("error")
		})
	}
	if p := eval[[]string](browser{t: t, ctx: tab}, "window.__problems"); len(p) > 0 {
		t.Errorf("the page had problems: %q", p)
	}
}
