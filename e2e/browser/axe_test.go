package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/scorehub/scorehub/internal/testenv"
)

// axe-core, installed by `npm ci --prefix e2e/browser/testdata/axe`, checks
// the page as it is shown against the WCAG rules it knows.

// axeDir is where package.json pins axe-core.
const axeDir = "testdata/axe"

// axeSource returns axe-core's script, ending the test when it is not
// installed.
func axeSource(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(axeDir, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		testenv.SkipOrFail(t, "axe-core is not installed: run npm ci --prefix e2e/browser/%s (%v)", axeDir, err)
	}
	return string(src)
}

// axeViolation is one rule axe-core found broken, with where.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// axeRun runs axe-core over the whole document and returns the serious
// and critical violations, each with the elements that break it.
const axeRun = `axe.run(document, {resultTypes: ['violations']}).then((r) => r.violations
  .filter((v) => v.impact === 'serious' || v.impact === 'critical')
  .map((v) => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => n.target.join(' ') + ': ' + n.failureSummary.replace(/\s+/g, ' '))})))`

// checkAccessibility runs axe-core, which src holds, in the page as it is
// now and fails the test for every serious or critical violation; state
// names what the page shows. axe-core goes in through the protocol, as the
// page's Content-Security-Policy admits no script of the test's.
func (b browser) checkAccessibility(src, state string) {
	b.t.Helper()
	if !eval[bool](b, "typeof axe === 'object'") {
		b.do("load axe-core", chromedp.Evaluate[chromedp.Void](src+"\n;undefined"))
	}
	found := eval[[]axeViolation](b, axeRun, chromedp.EvalAwaitPromise)
	for _, v := range found {
		b.t.Errorf("%s: %s violation %s (%s):\n  %s", state, v.Impact, v.ID, v.Help, strings.Join(v.Nodes, "\n  "))
	}
	if len(found) == 0 {
		b.t.Logf("%s: no serious or critical accessibility violation", state)
	}
}

// viewportName names a window size in screenshots and subtests.
func viewportName(width, height int64) string { return fmt.Sprintf("%dx%d", width, height) }
