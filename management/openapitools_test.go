package management_test

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/testenv"
	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/tokens"
)

// The OpenAPI tools of testdata/openapi-tools, installed by `npm ci --prefix
// management/testdata/openapi-tools`, read the document as its users'
// tools do: redocly lints it, openapi-typescript turns it into the types
// of a TypeScript client that tsc checks and node runs against the server.

// openapiToolsDir is where package.json pins the tools.
const openapiToolsDir = "testdata/openapi-tools"

// openapiTool returns the path of an installed tool's command, ending the
// test when node or the tool is missing.
func openapiTool(t *testing.T, name string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		testenv.SkipOrFail(t, "node is not installed: %v", err)
	}
	path, err := filepath.Abs(filepath.Join(openapiToolsDir, "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		testenv.SkipOrFail(t, "%s is not installed: run npm ci --prefix management/%s", name, openapiToolsDir)
	}
	return path
}

// runTool runs a tool in dir and returns its output, failing the test when
// it fails.
func runTool(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// servedDocument fetches the OpenAPI document f's server serves.
func servedDocument(t *testing.T, f *fixture) []byte {
	t.Helper()
	res, err := f.client.Get(f.srv.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/openapi.json: %d, %v", res.StatusCode, err)
	}
	return body
}

// TestOpenAPILintsClean runs redocly lint with its recommended rules over
// the document with every optional route: no errors; warnings are allowed.
func TestOpenAPILintsClean(t *testing.T) {
	t.Parallel()
	redocly := openapiTool(t, "redocly")
	f := newFixture(t, withAccounts(), withConfig(management.Config{
		TokenRoutes: []string{"GET " + tokens.PathTokenService, "GET " + tokens.PathExchange, "GET " + tokens.PathJWKS},
		Payloads:    payloadLog(t),
	}))
	dir := t.TempDir()
	doc := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(doc, servedDocument(t, f), 0o600); err != nil {
		t.Fatal(err)
	}
	config, err := filepath.Abs(filepath.Join(openapiToolsDir, "redocly.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Redocly reports usage to its makers unless told not to; tests talk to
	// 127.0.0.1 only.
	env := []string{"REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1"}
	out := runTool(t, dir, env, redocly, "lint", "--config", config, doc)
	if !strings.Contains(out, "Your API description is valid") {
		t.Errorf("redocly lint passed without saying the document is valid:\n%s", out)
	}
}

// TestOpenAPITypedClient generates TypeScript types from the served
// document, type-checks testdata/openapi-tools/client.ts against them and
// runs it against the server: sign in, create a group and a deployment,
// score, patch with If-Match, run a job.
func TestOpenAPITypedClient(t *testing.T) {
	t.Parallel()
	generate := openapiTool(t, "openapi-typescript")
	tsc := openapiTool(t, "tsc")
	f := newFixture(t)
	dir := t.TempDir()
	for _, name := range []string{"client.ts", "tsconfig.json"} {
		b, err := os.ReadFile(filepath.Join(openapiToolsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), servedDocument(t, f), 0o600); err != nil {
		t.Fatal(err)
	}
	runTool(t, dir, nil, generate, "openapi.json", "-o", "api.d.ts")
	// One run checks the types and, only when they fit (noEmitOnError),
	// emits the JavaScript: tsc --noEmit's check and the build at once.
	runTool(t, dir, nil, tsc, "-p", ".", "--outDir", "out")
	out := runTool(t, dir, []string{"SCOREHUB_URL=" + f.srv.URL, "SCOREHUB_USER=root", "SCOREHUB_PASSWORD=" + adminPassword},
		"node", filepath.Join("out", "client.js"))
	if want := "job FINISHED with 1 row"; !strings.Contains(out, want) {
		t.Errorf("the typed client printed %q, want it to say %q", out, want)
	}
}
