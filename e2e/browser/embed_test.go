package browser

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// embedPassword is the admin password the embedded host is started with.
const embedPassword = "embed-admin-password"

// startEmbed builds examples/embed, which mounts the whole service under
// /ml/ of a host's mux, starts it on a free loopback port and returns its
// base URL; it is stopped when the test ends.
func startEmbed(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/scorehub/scorehub").Output()
	if err != nil {
		t.Fatalf("find the root module: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "embed")
	build := exec.Command("go", "build", "-o", bin, "./examples/embed")
	build.Dir = strings.TrimSpace(string(out))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/embed: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "SCOREHUB_ADMIN_PASSWORD="+embedPassword)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		// Stopped as an operator stops it: SIGINT drains and exits 0.
		cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the embed example, interrupted: %v\n%s", err, stderr.String())
			}
		case <-time.After(waitLimit):
			cmd.Process.Kill()
			<-exited
			t.Errorf("the embed example did not exit within %v of SIGINT", waitLimit)
		}
	})
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := regexp.MustCompile(`^listening on (http://\S+)/ `).FindStringSubmatch(sc.Text()); m != nil {
				listening <- m[1]
			}
		}
		close(listening)
		exited <- cmd.Wait()
	}()
	select {
	case base, ok := <-listening:
		if !ok {
			t.Fatalf("the embed example exited without listening:\n%s", stderr.String())
		}
		return base
	case <-time.After(waitLimit):
		t.Fatalf("the embed example did not say where it listens:\n%s", stderr.String())
	}
	return ""
}

// TestBrowserTestsAnEndpointOfAnEmbeddedService: a host mounts the whole
// service under /ml/; a model uploaded and deployed through /ml/ is tested
// on the test page at /ml/ui/, whose calls, URL and curl command all go
// through the prefix.
func TestBrowserTestsAnEndpointOfAnEmbeddedService(t *testing.T) {
	tab := newTab(t)
	base := startEmbed(t)

	req, _ := http.NewRequest(http.MethodGet, base+"/ml/api/rest/tokenservice", nil)
	req.SetBasicAuth("admin", embedPassword)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct{ IDToken string }
	json.NewDecoder(res.Body).Decode(&tok)
	res.Body.Close()
	if tok.IDToken == "" {
		t.Fatalf("the token service under /ml answered %d", res.StatusCode)
	}
	model, err := os.ReadFile("../../examples/models/iris.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ method, path, body string }{
		{http.MethodPost, "/ml/api/v1/models/iris/versions?label=species&classes=setosa,versicolor,virginica" +
			"&features=sepal_length,sepal_width,petal_length,petal_width", string(model)},
		{http.MethodPut, "/ml/api/v1/models/iris/aliases/production", `{"version":1}`},
		{http.MethodPost, "/ml/api/v1/deployments", `{"group":"DEFAULT","path":"flowers","enabled":true,"endpoints":[{"alias":"species","model":"iris@production"}]}`},
	} {
		req, _ := http.NewRequest(w.method, base+w.path, strings.NewReader(w.body))
		req.Header.Set("Authorization", "Bearer "+tok.IDToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("%s %s: %d", w.method, w.path, res.StatusCode)
		}
	}

	const key = "DEFAULT/flowers/species"
	b := browser{t: t, ctx: tab}
	b.do("open the page", chromedp.Navigate(base+"/ml/ui/"))
	b.signIn("admin", embedPassword)
	b.openEndpoint(key)
	url := base + "/ml/webapi/DEFAULT/api/v1/services/flowers/species"
	if got := eval[string](b, "document.getElementById('endpoint-url').value"); got != url {
		t.Errorf("the page shows the endpoint's URL as %q, want %s%s", got, url, b.problems())
	}
	b.runTwoFlowers()
	shown := b.rawJSON()
	b.do("show the curl command", chromedp.Click(chromedp.CSS("#show-curl")))
	b.do("wait for the curl command", chromedp.WaitVisible(chromedp.CSS("#curl")))
	command := b.text("#curl")
	if !strings.Contains(command, "'"+url+"'") {
		t.Errorf("the curl command does not call %s:\n%s", url, command)
	}
	got := decodeJSON(t, "curl's answer", runShell(t, command))
	if d := cmp.Diff(shown, got); d != "" {
		t.Errorf("the page showed (-) and the curl command answered (+):\n%s", d)
	}
	b.screenshot("ui-embedded.png")
}
