package management_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

func TestAPITokenRoutes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withAccounts())
	f.putGroup(t, registry.Group{Name: "risk"})
	ctx := context.Background()

	// ann creates one for herself: the answer shows the secret, once.
	created := f.do(t, request{method: http.MethodPost, path: "/api/v1/apitokens", token: f.reader, body: `{"name":"notebook"}`})
	created.want(t, 201, "")
	id, _ := created.json["id"].(string)
	secret, _ := created.json["token"].(string)
	if !strings.HasPrefix(secret, accounts.APITokenPrefix) || id == "" || strings.Contains(secret, id) {
		t.Fatalf("created %s", created.body)
	}
	if created.json["owner"] != "ann" || created.json["expiresAt"] != nil || created.json["lastUsedAt"] != nil ||
		cmp.Diff([]any{}, created.json["webApiGroups"]) != "" {
		t.Errorf("created %s", created.body)
	}
	if created.header.Get("Location") != "apitokens/"+id || created.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Location %q, Cache-Control %q", created.header.Get("Location"), created.header.Get("Cache-Control"))
	}
	if _, _, err := f.accounts.VerifyAPIToken(ctx, secret); err != nil {
		t.Fatalf("the secret shown does not verify: %v", err)
	}

	// Reading it again never shows the secret; the use is recorded.
	got := f.do(t, request{method: http.MethodGet, path: "/api/v1/apitokens/" + id, token: f.reader})
	got.want(t, 200, "")
	if _, shown := got.json["token"]; shown || strings.Contains(string(got.body), secret) {
		t.Errorf("GET shows the secret: %s", got.body)
	}
	if got.json["lastUsedAt"] == nil {
		t.Errorf("lastUsedAt null after a use: %s", got.body)
	}

	// An admin creates one for ann, restricted and expiring.
	expires := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	forAnn := f.do(t, request{method: http.MethodPost, path: "/api/v1/apitokens", token: f.admin,
		body: `{"name":"batch","owner":"ann","expiresAt":"` + expires + `","webApiGroups":["risk"]}`})
	forAnn.want(t, 201, "")
	if forAnn.json["owner"] != "ann" || forAnn.json["expiresAt"] != expires || cmp.Diff([]any{"risk"}, forAnn.json["webApiGroups"]) != "" {
		t.Errorf("created for ann: %s", forAnn.body)
	}
	f.do(t, request{method: http.MethodPost, path: "/api/v1/apitokens", token: f.admin, body: `{"name":"own"}`}).want(t, 201, "")

	owners := func(r response) []string {
		t.Helper()
		var out []string
		for _, item := range r.page(t).Content {
			out = append(out, item["owner"].(string))
		}
		return out
	}
	lists := []struct {
		name  string
		rq    request
		owner []string
	}{
		{"an admin sees all", request{method: "GET", path: "/api/v1/apitokens", token: f.admin}, []string{"ann", "ann", "root"}},
		{"an admin filters by owner", request{method: "GET", path: "/api/v1/apitokens?owner=root", token: f.admin}, []string{"root"}},
		{"a user sees their own", request{method: "GET", path: "/api/v1/apitokens", token: f.reader}, []string{"ann", "ann"}},
		{"a user filters by themself", request{method: "GET", path: "/api/v1/apitokens?owner=ann&size=1", token: f.reader}, []string{"ann"}},
	}
	for _, tt := range lists {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(t, tt.rq)
			r.want(t, 200, "")
			if d := cmp.Diff(tt.owner, owners(r)); d != "" {
				t.Errorf("owners (-want +got):\n%s", d)
			}
			if strings.Contains(string(r.body), accounts.APITokenPrefix) {
				t.Errorf("a list shows a secret: %s", r.body)
			}
		})
	}

	// ann revokes hers; the secret stops working at once.
	f.do(t, request{method: http.MethodDelete, path: "/api/v1/apitokens/" + id, token: f.reader}).want(t, 204, "")
	f.do(t, request{method: http.MethodGet, path: "/api/v1/apitokens/" + id, token: f.reader}).want(t, 404, "not_found")
	f.do(t, request{method: http.MethodDelete, path: "/api/v1/apitokens/" + id, token: f.admin}).want(t, 404, "not_found")
	if _, _, err := f.accounts.VerifyAPIToken(ctx, secret); !errors.Is(err, tokens.ErrBadCredentials) {
		t.Errorf("a revoked token verifies: %v", err)
	}
	// An admin revokes another user's.
	f.do(t, request{method: http.MethodDelete, path: "/api/v1/apitokens/" + forAnn.json["id"].(string), token: f.admin}).want(t, 204, "")
	if l := f.do(t, request{method: "GET", path: "/api/v1/apitokens?owner=ann", token: f.admin}).page(t); l.TotalElements != 0 {
		t.Errorf("ann's tokens after both were revoked: %+v", l)
	}
}

func TestAPITokenBodies(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withAccounts())
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	tests := []struct {
		name   string
		body   string
		status int
		typ    string
		fields [][2]string
	}{
		{"every field at fault", `{"name":"","owner":"a:b","expiresAt":"tomorrow","webApiGroups":["risk","risk"],"secret":"x"}`,
			400, string(problem.ValidationFailed), [][2]string{
				{"/name", "is required"},
				{"/owner", "must be a user name: at most 256 bytes, no colon and no control characters"},
				{"/expiresAt", "must be a date and time in RFC 3339, such as 2030-01-31T00:00:00Z"},
				{"/webApiGroups", "appears more than once"},
				{"/secret", "is not a member of this object"},
			}},
		{"a bad group name", `{"name":"x","webApiGroups":["a/b"]}`, 400, string(problem.ValidationFailed),
			[][2]string{{"/webApiGroups/0", nameRule}}},
		{"a wrong type", `{"name":"x","webApiGroups":"risk"}`, 400, string(problem.ValidationFailed),
			[][2]string{{"/webApiGroups", "must be an array"}}},
		{"an expiry past", `{"name":"x","expiresAt":"` + past + `"}`, 400, string(problem.ValidationFailed), nil},
		{"groups that do not exist", `{"name":"x","webApiGroups":["DEFAULT","nope","gone"]}`, 422, "invalid_reference",
			[][2]string{{"/webApiGroups/1", `names no web API group: "nope"`}, {"/webApiGroups/2", `names no web API group: "gone"`}}},
		{"an owner who does not exist", `{"name":"x","owner":"ghost"}`, 422, "invalid_reference", nil},
		{"not JSON", `{"name":"x"`, 400, string(problem.MalformedJSON), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(t, request{method: http.MethodPost, path: "/api/v1/apitokens", token: f.admin, body: tt.body})
			r.want(t, tt.status, tt.typ)
			if tt.fields != nil {
				if d := cmp.Diff(tt.fields, r.fields()); d != "" {
					t.Errorf("fields (-want +got):\n%s", d)
				}
			}
		})
	}
	f.do(t, request{method: http.MethodPost, path: "/api/v1/apitokens", token: f.admin, contentType: "text/plain", body: `{"name":"x"}`}).
		want(t, 415, string(problem.UnsupportedMediaType))
	f.do(t, request{method: http.MethodGet, path: "/api/v1/apitokens?owner=", token: f.admin}).want(t, 400, string(problem.InvalidParameter))
	if ts := f.accounts.APITokens(); len(ts) != 0 {
		t.Errorf("refused bodies stored tokens: %+v", ts)
	}
}

// TestAccountSecretsNeverLogged sends passwords and gets a token's secret
// through every kind of answer, refusals included, with the log at debug
// level, and looks for them in it.
func TestAccountSecretsNeverLogged(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withAccounts(), withDebugLogs())
	const (
		password = "hunter2hunter2-distinctive"
		wrong    = "wrong-current-distinctive"
		rejected = "rejected-password-distinctive"
	)
	patch := "application/merge-patch+json"
	f.do(t, request{method: "POST", path: "/api/v1/users", token: f.admin, body: `{"name":"bob","password":"` + password + `"}`}).want(t, 201, "")
	f.do(t, request{method: "POST", path: "/api/v1/users", token: f.admin, body: `{"name":"bob","password":"` + rejected + `","x":1}`}).want(t, 400, "")
	f.do(t, request{method: "POST", path: "/api/v1/users", token: f.reader, body: `{"name":"eve","password":"` + rejected + `"}`}).want(t, 403, "")
	f.do(t, request{method: "PATCH", path: "/api/v1/users/bob", token: f.tokenFor(t, "bob", false), contentType: patch,
		body: `{"password":"` + rejected + `","currentPassword":"` + wrong + `"}`}).want(t, 403, "forbidden")
	f.do(t, request{method: "PUT", path: "/api/v1/users/bob", token: f.admin, body: `{"password":"` + rejected + `","admin":"no"}`}).want(t, 400, "")
	created := f.do(t, request{method: "POST", path: "/api/v1/apitokens", token: f.admin, body: `{"name":"t","owner":"bob"}`})
	created.want(t, 201, "")
	secret := created.json["token"].(string)
	// A secret sent where its ID goes is answered for what it is.
	if r := f.do(t, request{method: "GET", path: "/api/v1/apitokens/" + secret, token: f.admin}); r.status != 404 ||
		!strings.Contains(r.errorField("message").(string), "secret") || strings.Contains(string(r.body), secret) {
		t.Errorf("GET of the secret: %d %s", r.status, r.body)
	}
	f.do(t, request{method: "DELETE", path: "/api/v1/apitokens/" + secret, token: f.admin}).want(t, 404, "")

	logs := f.logs.String()
	for _, s := range []string{password, wrong, rejected, secret, secret[len(accounts.APITokenPrefix):]} {
		if strings.Contains(logs, s) {
			t.Errorf("the log holds the secret %q:\n%s", s, logs)
		}
	}
	// The writes were logged, so the log was there to hold them.
	var routes []string
	for _, rec := range logRecords(t, f.logs, "management: write") {
		routes = append(routes, rec["route"].(string)+" "+rec["subject"].(string))
	}
	want := []string{
		"POST /api/v1/users root", "POST /api/v1/users root", "POST /api/v1/users ann",
		"PATCH /api/v1/users/{name} bob", "PUT /api/v1/users/{name} root",
		"POST /api/v1/apitokens root", "DELETE /api/v1/apitokens/{id} root",
	}
	if d := cmp.Diff(want, routes); d != "" {
		t.Errorf("write records (-want +got):\n%s", d)
	}
	if len(logRecords(t, f.logs, "request failed")) == 0 {
		t.Error("no refusal logged at debug level")
	}
}
