package redact_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/redact"
)

const (
	apiToken = "scorehub_4Jq0VZ3bWm9Xc1yTfLpR8sN2uK7hD5gA6eB0oQiCzwt3kPY1z2"
	jwt      = "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlLWJ5dGVz"
)

func TestSecrets(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain path", "/webapi/g/p/a", "/webapi/g/p/a"},
		{"API token in a path", "/api/v1/apitokens/" + apiToken, "/api/v1/apitokens/scorehub_REDACTED"},
		{"API token in a path, more after", "/api/v1/apitokens/" + apiToken + "/x", "/api/v1/apitokens/scorehub_REDACTED/x"},
		{"JWT in a path", "/api/v1/apitokens/" + jwt, "/api/v1/apitokens/REDACTED"},
		{"short eyJ name", "/webapi/eyJack", "/webapi/eyJack"},
		{"access_token in a query", "a=1&access_token=" + jwt + "&b=2", "a=1&access_token=REDACTED&b=2"},
		{"password in a query", "user=admin&Password=hunter2", "user=admin&Password=REDACTED"},
		{"harmless query", "outputs=1&format=json", "outputs=1&format=json"},
		{"URL password", "postgres://app:s3cret@127.0.0.1:5432/db?sslmode=disable", "postgres://app:REDACTED@127.0.0.1:5432/db?sslmode=disable"},
		{"URL password with @", "postgres://app:p@ss@127.0.0.1/db", "postgres://app:REDACTED@127.0.0.1/db"},
		{"URL without password", "postgres://app@127.0.0.1/db", "postgres://app@127.0.0.1/db"},
		{"key=value connection string", "host=127.0.0.1 user=app password=s3cret dbname=x", "host=127.0.0.1 user=app password=REDACTED dbname=x"},
		{"error quoting a URL", `parse "postgres://u:pw@h/db": bad`, `parse "postgres://u:REDACTED@h/db": bad`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact.Secrets(tt.in); got != tt.want {
				t.Errorf("Secrets(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSecretsDoesNotAllocateForPlainPaths(t *testing.T) {
	path := "/webapi/group/deployment/alias"
	if n := testing.AllocsPerRun(100, func() { _ = redact.Secrets(path) }); n != 0 {
		t.Errorf("Secrets allocates %v times for a plain path, want 0", n)
	}
}

func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(redact.Handler(slog.NewTextHandler(&buf, nil))).With("conn", "postgres://u:pw1@h/db")
	log.Info("GET /api/v1/apitokens/"+apiToken, "path", "/x/"+jwt,
		slog.Group("g", "q", "password=pw2"), "cause", errors.New("open postgres://u:pw3@h: refused"), "n", 1)
	out := buf.String()
	for _, secret := range []string{apiToken, jwt, "pw1", "pw2", "pw3"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "n=1") || !strings.Contains(out, `g.q="password=REDACTED"`) {
		t.Errorf("the log lost what is not secret:\n%s", out)
	}
}
