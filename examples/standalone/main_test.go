package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// startServer runs the server in-process on a free loopback port with its
// data in dir, and returns its base URL and a stop function that waits for
// run to return.
func startServer(t *testing.T, dir string, extraArgs ...string) (base string, stop func() error) {
	t.Helper()
	base, _, stop = startServerEnv(t, dir, map[string]string{"SCOREHUB_ADMIN_PASSWORD": testAdminPassword}, extraArgs...)
	return base, stop
}

const testAdminPassword = "correct horse battery staple"

// startServerEnv is startServer with the given environment; it also returns
// what the server printed by the time it listened.
func startServerEnv(t *testing.T, dir string, env map[string]string, extraArgs ...string) (base, printed string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	var out bytes.Buffer
	args := append([]string{"-addr", "127.0.0.1:0", "-data", dir}, extraArgs...)
	go func() {
		done <- run(ctx, args, func(k string) string { return env[k] }, &out, io.Discard, func(a string) { addr <- a })
	}()
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		cancel()
		t.Fatalf("server stopped before listening: %v", err)
	}
	return base, out.String(), func() error {
		cancel()
		return <-done
	}
}

func postJSON(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want JSON", ct)
	}
	var got map[string]any
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatalf("response is not JSON: %v", err)
	}
	return res.StatusCode, got
}

const irisURL = "/webapi/DEFAULT/api/v1/services/iris/classify"

func TestDemoEndpointClassifiesIris(t *testing.T) {
	base, stop := startServer(t, t.TempDir())
	defer stop()

	status, got := postJSON(t, base+irisURL, `{"data":[
		{"id":"a","sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2},
		{"id":"b","sepal_length":6.4,"sepal_width":3.2,"petal_length":4.5,"petal_width":1.5},
		{"id":"c","sepal_length":6.3,"sepal_width":3.3,"petal_length":6.0,"petal_width":2.5},
		{"id":"d","sepal_length":null,"petal_length":6.0}
	]}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, got)
	}
	rows := got["data"].([]any)
	wantSpecies := []string{"setosa", "versicolor", "virginica", "virginica"}
	for i, r := range rows {
		row := r.(map[string]any)
		if row["prediction(species)"] != wantSpecies[i] {
			t.Errorf("row %d predicted %v, want %s", i, row["prediction(species)"], wantSpecies[i])
		}
		if row["id"] != string(rune('a'+i)) {
			t.Errorf("row %d: extra column id = %v, want it echoed", i, row["id"])
		}
		sum := 0.0
		for _, c := range []string{"setosa", "versicolor", "virginica"} {
			v, ok := row["confidence("+c+")"].(float64)
			if !ok {
				t.Errorf("row %d: confidence(%s) = %v, want a number", i, c, row["confidence("+c+")"])
			}
			sum += v
		}
		if sum < 0.999 || sum > 1.001 {
			t.Errorf("row %d: confidences sum to %v", i, sum)
		}
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows back, want 4", len(rows))
	}
}

func TestDemoRejectsTextForAMeasurement(t *testing.T) {
	base, stop := startServer(t, t.TempDir())
	defer stop()
	status, got := postJSON(t, base+irisURL, `{"data":[{"sepal_length":"long","sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`)
	if status != http.StatusBadRequest {
		t.Errorf("status %d, want 400: %v", status, got)
	}
	if e, _ := got["error"].(map[string]any); e == nil || !strings.Contains(e["message"].(string), "sepal_length") {
		t.Errorf("error %v does not name the column", got)
	}
}

func TestRestartKeepsStoreAndOperatorChanges(t *testing.T) {
	dir := t.TempDir()
	base, stop := startServer(t, dir)
	if status, _ := postJSON(t, base+irisURL, `{"data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`); status != 200 {
		t.Fatalf("first start: status %d", status)
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "registry.json")); err != nil {
		t.Fatalf("no registry file after the first run: %v", err)
	}
	base, stop = startServer(t, dir)
	defer stop()
	if status, got := postJSON(t, base+irisURL, `{"data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`); status != 200 {
		t.Fatalf("after restart: status %d %v", status, got)
	}
}

func TestConfigFlagsAndEnvironment(t *testing.T) {
	env := map[string]string{"SCOREHUB_ADDR": "127.0.0.1:9999", "SCOREHUB_MAX_ROWS": "7", "SCOREHUB_PREFIX": "scoring/"}
	c, err := parseConfig([]string{"-addr", "127.0.0.1:1234"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:1234" || c.MaxRows != 7 || c.Prefix != "/scoring" || c.DataDir != "./scorehub-data" {
		t.Errorf("config %+v: want the flag over the environment, the environment over defaults", c)
	}
	for _, bad := range [][]string{{"-max-rows", "0"}, {"-prefix", "/"}, {"-prefix", "/api/score"}, {"-prefix", "health"}, {"-prefix", "/executions"}, {"-timeout", "-1s"}, {"stray"}} {
		if _, err := parseConfig(bad, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("parseConfig(%q) succeeded, want an error", bad)
		}
	}
	if _, err := parseConfig(nil, func(k string) string {
		if k == "SCOREHUB_MAX_BODY" {
			return "lots"
		}
		return ""
	}, io.Discard); err == nil || !strings.Contains(err.Error(), "SCOREHUB_MAX_BODY") {
		t.Errorf("a bad environment value gave %v, want an error naming the variable", err)
	}
}

// TestBinaryPrintsCurlAndExitsCleanlyOnSignal builds the command, runs it as
// the README says, follows the curl command it prints, and stops it with
// SIGTERM and SIGINT: each must exit 0.
func TestBinaryPrintsCurlAndExitsCleanlyOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := filepath.Join(t.TempDir(), "standalone")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-data", t.TempDir())
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()

			lines := make(chan string, 16)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			var printed strings.Builder
			deadline := time.After(30 * time.Second)
			for !strings.Contains(printed.String(), "-d '") {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("server exited early; stdout:\n%s\nstderr:\n%s", printed.String(), stderr.String())
					}
					printed.WriteString(l + "\n")
				case <-deadline:
					t.Fatalf("no curl command printed; stdout so far:\n%s", printed.String())
				}
			}
			m := regexp.MustCompile(`curl -s -X POST '([^']+)'`).FindStringSubmatch(printed.String())
			body := regexp.MustCompile(`-d '([^']+)'`).FindStringSubmatch(printed.String())
			if m == nil || body == nil {
				t.Fatalf("printed text has no usable curl command:\n%s", printed.String())
			}
			status, got := postJSON(t, m[1], body[1])
			row := got["data"].([]any)[0].(map[string]any)
			if status != 200 || row["prediction(species)"] != "setosa" {
				t.Errorf("the printed command answered %d %v, want setosa", status, got)
			}

			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("exit after %v: %v (want status 0); stderr:\n%s", sig, err, stderr.String())
			}
		})
	}
}

func TestWelcomeNamesTheEndpoint(t *testing.T) {
	var out bytes.Buffer
	printWelcome(&out, "http://127.0.0.1:8080", "/webapi")
	want := "demo endpoint: http://127.0.0.1:8080/webapi/DEFAULT/api/v1/services/iris/classify\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("welcome text:\n%s\nwant the line %q", out.String(), want)
	}
	if d := cmp.Diff(1, strings.Count(out.String(), "curl ")); d != "" {
		t.Errorf("curl commands printed (-want +got):\n%s", d)
	}
}

// getToken asks the token service for an idToken with HTTP Basic.
func getToken(t *testing.T, base, user, password string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/rest/tokenservice", nil)
	req.SetBasicAuth(user, password)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got map[string]any
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatalf("token service answered %d with no JSON: %v", res.StatusCode, err)
	}
	return res.StatusCode, got
}

func TestAdminPasswordIsPrintedOnceAndKeptAsHash(t *testing.T) {
	dir := t.TempDir()
	base, printed, stop := startServerEnv(t, dir, nil)
	m := regexp.MustCompile(`admin password \(shown once[^)]*\): (\S+)`).FindStringSubmatch(printed)
	if m == nil {
		stop()
		t.Fatalf("no admin password printed on first start:\n%s", printed)
	}
	password := m[1]
	if status, got := getToken(t, base, "admin", password); status != 200 || got["idToken"] == "" {
		t.Errorf("token with the printed password: %d %v", status, got)
	}
	if status, got := getToken(t, base, "admin", password+"x"); status != 401 {
		t.Errorf("token with a wrong password: %d %v, want 401", status, got)
	}
	jwks1 := getBody(t, base+"/api/rest/jwks.json")
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	stored, err := os.ReadFile(filepath.Join(dir, "admin.bcrypt"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored), password) || !strings.HasPrefix(string(stored), "$2") {
		t.Errorf("stored admin secret %q is not a bcrypt hash of the password", stored)
	}
	for _, name := range []string{"admin.bcrypt", "keys.json"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", name, fi.Mode().Perm(), err)
		}
	}

	base, printed, stop = startServerEnv(t, dir, nil)
	defer stop()
	if strings.Contains(printed, "admin password") {
		t.Errorf("the admin password was printed again on restart:\n%s", printed)
	}
	if status, got := getToken(t, base, "admin", password); status != 200 {
		t.Errorf("after restart the printed password gave %d %v", status, got)
	}
	if jwks2 := getBody(t, base+"/api/rest/jwks.json"); jwks2 != jwks1 {
		t.Errorf("signing keys changed across a restart:\n%s\n%s", jwks1, jwks2)
	}
}

func getBody(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, b)
	}
	return string(b)
}
