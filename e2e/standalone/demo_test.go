package standalone

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

func TestDemoEndpointClassifiesIris(t *testing.T) {
	t.Parallel()
	s := harness.Start(t, harness.Options{})
	status, got := s.PostJSON(t, harness.IrisURL, `{"data":[
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
	t.Parallel()
	s := harness.Start(t, harness.Options{})
	status, got := s.PostJSON(t, harness.IrisURL, `{"data":[{"sepal_length":"long","sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`)
	if status != http.StatusBadRequest {
		t.Errorf("status %d, want 400: %v", status, got)
	}
	if e, _ := got["error"].(map[string]any); e == nil || !strings.Contains(e["message"].(string), "sepal_length") {
		t.Errorf("error %v does not name the column", got)
	}
}

func TestRestartKeepsStoreAndOperatorChanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := harness.Start(t, harness.Options{Dir: dir})
	if status, _ := s.PostJSON(t, harness.IrisURL, `{"data":[`+harness.IrisRow+`]}`); status != 200 {
		t.Fatalf("first start: status %d", status)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "registry.json")); err != nil {
		t.Fatalf("no registry file after the first run: %v", err)
	}
	s = harness.Start(t, harness.Options{Dir: dir})
	if status, got := s.PostJSON(t, harness.IrisURL, `{"data":[`+harness.IrisRow+`]}`); status != 200 {
		t.Fatalf("after restart: status %d %v", status, got)
	}
}

// TestBinaryPrintsCurlAndExitsCleanlyOnSignal runs the server as the README
// says, follows the curl command it prints, and stops it with SIGTERM and
// SIGINT: each must exit 0.
func TestBinaryPrintsCurlAndExitsCleanlyOnSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			s := harness.Start(t, harness.Options{})
			printed := s.WaitStdout(t, "-d '")
			m := regexp.MustCompile(`curl -s -X POST '([^']+)'`).FindStringSubmatch(printed)
			body := regexp.MustCompile(`-d '([^']+)'`).FindStringSubmatch(printed)
			if m == nil || body == nil {
				t.Fatalf("printed text has no usable curl command:\n%s", printed)
			}
			path, ok := strings.CutPrefix(m[1], s.Base)
			if !ok {
				t.Fatalf("the printed command's URL %s is not on %s", m[1], s.Base)
			}
			status, got := s.PostJSON(t, path, body[1])
			row := got["data"].([]any)[0].(map[string]any)
			if status != 200 || row["prediction(species)"] != "setosa" {
				t.Errorf("the printed command answered %d %v, want setosa", status, got)
			}

			if err := s.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if err := s.Wait(); err != nil {
				t.Errorf("exit after %v: %v (want status 0); stderr:\n%s", sig, err, s.Stderr())
			}
		})
	}
}

func TestAdminPasswordIsPrintedOnceAndKeptAsHash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	random := harness.Options{Dir: dir, Env: map[string]string{"SCOREHUB_ADMIN_PASSWORD": ""}}
	s := harness.Start(t, random)
	m := regexp.MustCompile(`admin password \(shown once[^)]*\): (\S+)`).FindStringSubmatch(s.Stdout())
	if m == nil {
		t.Fatalf("no admin password printed on first start:\n%s", s.Stdout())
	}
	password := m[1]
	if status, got := s.Token(t, "admin", password); status != 200 || got["idToken"] == "" {
		t.Errorf("token with the printed password: %d %v", status, got)
	}
	if status, got := s.Token(t, "admin", password+"x"); status != 401 {
		t.Errorf("token with a wrong password: %d %v, want 401", status, got)
	}
	jwks1 := s.Get(t, "/api/rest/jwks.json")
	if err := s.Stop(); err != nil {
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

	s = harness.Start(t, random)
	if out := s.Stdout(); strings.Contains(out, password) || !strings.Contains(out, "admin.bcrypt") || !strings.Contains(out, "to replace it") ||
		!strings.Contains(out, "SCOREHUB_ADMIN_PASSWORD_FILE") {
		t.Errorf("on restart the admin password was printed again, or not where its hash is and how to replace it:\n%s", out)
	}
	if status, got := s.Token(t, "admin", password); status != 200 {
		t.Errorf("after restart the printed password gave %d %v", status, got)
	}
	if jwks2 := s.Get(t, "/api/rest/jwks.json"); jwks2 != jwks1 {
		t.Errorf("signing keys changed across a restart:\n%s\n%s", jwks1, jwks2)
	}
}

func TestWrongPasswordGetsBasicChallenge(t *testing.T) {
	t.Parallel()
	s := harness.Start(t, harness.Options{})
	req, _ := http.NewRequest(http.MethodGet, s.Base+"/api/rest/tokenservice", nil)
	req.SetBasicAuth("admin", "not the password")
	res, err := s.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Basic realm=") {
		t.Errorf("wrong password: %d %q, want 401 with a Basic challenge", res.StatusCode, res.Header.Get("WWW-Authenticate"))
	}
}
