package main

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens"
)

// BenchmarkProtectedScoring measures a one-row request to the iris demo
// through the whole server's handler (access log off, metrics on), at a
// public group and at a protected one with each kind of credential: the
// steady state of a client that sends the same credentials on every
// request, Basic ones remembered by the password cache.
func BenchmarkProtectedScoring(b *testing.B) {
	ctx := context.Background()
	getenv := func(k string) string {
		if k == "SCOREHUB_ADMIN_PASSWORD" {
			return smokePassword
		}
		return ""
	}
	cfg, err := parseConfig([]string{"-data", b.TempDir(), "-access-log=false"}, getenv, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := newServer(ctx, cfg, getenv, io.Discard, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	if _, err := srv.reg.PutGroup(ctx, registry.Group{Name: "secure", Auth: registry.AuthPolicy{Mode: registry.TokenRequired,
		Groups: []string{"analysts"}, Schemes: registry.AllSchemes()}}); err != nil {
		b.Fatal(err)
	}
	if _, err := srv.reg.PutDeployment(ctx, registry.Deployment{Group: "secure", Path: demoPath, Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: demoAlias, Process: "iris"}}}); err != nil {
		b.Fatal(err)
	}
	accounts := srv.auth.accounts
	if _, err := accounts.CreateUser(ctx, tokens.NewUser{Name: "ann", Password: "ann-password-1", Groups: []string{"analysts"}}); err != nil {
		b.Fatal(err)
	}
	_, secret, err := accounts.CreateAPIToken(ctx, tokens.NewAPIToken{Name: "bench", Owner: "ann"})
	if err != nil {
		b.Fatal(err)
	}
	p, err := accounts.Authenticate(ctx, "ann", "ann-password-1")
	if err != nil {
		b.Fatal(err)
	}
	idToken, _, err := srv.auth.issuer.Issue(p)
	if err != nil {
		b.Fatal(err)
	}

	body := `{"data":[` + irisRow + `]}`
	for _, c := range []struct{ name, group, auth string }{
		{"public", registry.DefaultGroup, ""},
		{"basic", "secure", "Basic " + base64.StdEncoding.EncodeToString([]byte("ann:ann-password-1"))},
		{"apitoken", "secure", "apitoken " + secret},
		{"bearer", "secure", "Bearer " + idToken},
	} {
		b.Run(c.name, func(b *testing.B) {
			url := "/webapi/" + c.group + "/api/v1/services/" + demoPath + "/" + demoAlias
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r := httptest.NewRequest(http.MethodPost, url, strings.NewReader(body))
					r.Header.Set("Content-Type", "application/json")
					if c.auth != "" {
						r.Header.Set("Authorization", c.auth)
					}
					w := httptest.NewRecorder()
					srv.handler.ServeHTTP(w, r)
					if w.Code != http.StatusOK {
						b.Fatalf("%d %s", w.Code, w.Body)
					}
				}
			})
		})
	}
}
