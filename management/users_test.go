package management_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// The fixture withAccounts has root (admin) and ann as users of a users
// file; the tests create the users they change. Every bcrypt comparison
// or hash takes a second or more under the race detector, so the tests
// make few.

// bobPassword is the password bob is created with.
const bobPassword = "bob's long enough password"

// createBob stores the user bob, in the user group analysts, directly.
func (f *fixture) createBob(t *testing.T) accounts.Account {
	t.Helper()
	a, err := f.accounts.CreateUser(context.Background(), accounts.NewUser{Name: "bob", Password: bobPassword, Groups: []string{"analysts"}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestUserRoutes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withAccounts())

	list := f.do(t, request{method: http.MethodGet, path: "/api/v1/users", token: f.admin})
	list.want(t, 200, "")
	want := []map[string]any{
		{"name": "ann", "admin": false, "groups": []any{"analysts"}, "source": "file", "revision": 0.0, "createdAt": nil, "updatedAt": nil},
		{"name": "root", "admin": true, "groups": []any{}, "source": "file", "revision": 0.0, "createdAt": nil, "updatedAt": nil},
	}
	if d := cmp.Diff(want, list.page(t).Content); d != "" {
		t.Errorf("users (-want +got):\n%s", d)
	}

	created := f.do(t, request{method: http.MethodPost, path: "/api/v1/users", token: f.admin,
		body: `{"name":"bob","password":"` + bobPassword + `","groups":["analysts"]}`})
	created.want(t, 201, "")
	if created.header.Get("Location") != "users/bob" || created.header.Get("ETag") != `"1"` {
		t.Errorf("Location %q, ETag %q", created.header.Get("Location"), created.header.Get("ETag"))
	}
	if created.json["source"] != "api" || created.json["revision"] != 1.0 || created.json["createdAt"] == nil {
		t.Errorf("created %s", created.body)
	}
	if strings.Contains(string(created.body), "password") || strings.Contains(string(created.body), bobPassword) {
		t.Errorf("the answer shows the password: %s", created.body)
	}

	bob := f.tokenFor(t, "bob", false)
	for _, tok := range []string{f.admin, bob} {
		got := f.do(t, request{method: http.MethodGet, path: "/api/v1/users/bob", token: tok})
		got.want(t, 200, "")
		if got.header.Get("ETag") != `"1"` || got.json["name"] != "bob" {
			t.Errorf("GET bob: ETag %q, %s", got.header.Get("ETag"), got.body)
		}
	}
	if r := f.do(t, request{method: http.MethodGet, path: "/api/v1/users/ann", token: f.admin}); r.header.Get("ETag") != "" {
		t.Errorf("a user of the users file has ETag %q", r.header.Get("ETag"))
	}

	put := f.do(t, request{method: http.MethodPut, path: "/api/v1/users/bob", token: f.admin,
		body: `{"groups":["quants","analysts"]}`, header: map[string]string{"If-Match": `"1"`}})
	put.want(t, 200, "")
	if put.header.Get("ETag") != `"2"` || cmp.Diff([]any{"quants", "analysts"}, put.json["groups"]) != "" {
		t.Errorf("PUT: ETag %q, %s", put.header.Get("ETag"), put.body)
	}
	f.do(t, request{method: http.MethodPut, path: "/api/v1/users/bob", token: f.admin,
		body: `{"groups":[]}`, header: map[string]string{"If-Match": `"1"`}}).want(t, 412, "precondition_failed")
	f.do(t, request{method: http.MethodPut, path: "/api/v1/users/bob", token: f.admin,
		body: `{"revision":1}`}).want(t, 412, "precondition_failed")
	f.do(t, request{method: http.MethodPut, path: "/api/v1/users/nobody", token: f.admin, body: `{}`}).want(t, 404, "not_found")

	patch := f.do(t, request{method: http.MethodPatch, path: "/api/v1/users/bob", token: f.admin,
		contentType: "application/merge-patch+json", body: `{"groups":null,"admin":true}`})
	patch.want(t, 200, "")
	if patch.json["admin"] != true || cmp.Diff([]any{}, patch.json["groups"]) != "" || patch.json["revision"] != 3.0 {
		t.Errorf("PATCH: %s", patch.body)
	}
	f.do(t, request{method: http.MethodPatch, path: "/api/v1/users/bob", token: f.admin, contentType: "application/merge-patch+json",
		body: `{"admin":false}`, header: map[string]string{"If-Match": `"2"`}}).want(t, 412, "precondition_failed")

	if p := f.do(t, request{method: http.MethodGet, path: "/api/v1/users?size=2&page=1", token: f.admin}).page(t); p.TotalElements != 3 || len(p.Content) != 1 || p.Content[0]["name"] != "root" {
		t.Errorf("second page of two: %+v", p)
	}

	f.do(t, request{method: http.MethodDelete, path: "/api/v1/users/bob", token: f.admin, header: map[string]string{"If-Match": `"2"`}}).want(t, 412, "precondition_failed")
	f.do(t, request{method: http.MethodDelete, path: "/api/v1/users/bob", token: f.admin}).want(t, 204, "")
	f.do(t, request{method: http.MethodGet, path: "/api/v1/users/bob", token: f.admin}).want(t, 404, "not_found")
	f.do(t, request{method: http.MethodDelete, path: "/api/v1/users/bob", token: f.admin}).want(t, 404, "not_found")
	if _, ok := f.accounts.User("bob"); ok {
		t.Error("bob is still stored")
	}
}

// TestAccountRoutesRefuse checks, route by route, that a caller who may not
// is refused: no token, a user without the admin claim acting on another
// user or on what only admins do, and anyone asking for another user's API
// token, which does not exist for them.
func TestAccountRoutesRefuse(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withAccounts())
	ctx := context.Background()
	rootToken, _, err := f.accounts.CreateAPIToken(ctx, accounts.NewAPIToken{Name: "root's", Owner: "root"})
	if err != nil {
		t.Fatal(err)
	}
	rootTok := "/api/v1/apitokens/" + rootToken.ID
	const user = `{"name":"eve","password":"a password long enough"}`
	const patch = "application/merge-patch+json"

	tests := []struct {
		name   string
		rq     request
		status int
		typ    string
	}{
		{"list users without a token", request{method: "GET", path: "/api/v1/users"}, 401, "unauthorized"},
		{"list users", request{method: "GET", path: "/api/v1/users", token: f.reader}, 403, "forbidden"},
		{"create a user", request{method: "POST", path: "/api/v1/users", token: f.reader, body: user}, 403, "forbidden"},
		{"read another user", request{method: "GET", path: "/api/v1/users/root", token: f.reader}, 403, "forbidden"},
		{"read a user who does not exist", request{method: "GET", path: "/api/v1/users/nobody", token: f.reader}, 403, "forbidden"},
		{"replace oneself", request{method: "PUT", path: "/api/v1/users/ann", token: f.reader, body: `{"admin":true}`}, 403, "forbidden"},
		{"patch another user", request{method: "PATCH", path: "/api/v1/users/root", token: f.reader, contentType: patch,
			body: `{"password":"a password long enough","currentPassword":"x"}`}, 403, "forbidden"},
		{"make oneself admin", request{method: "PATCH", path: "/api/v1/users/ann", token: f.reader, contentType: patch,
			body: `{"admin":true}`}, 403, "forbidden"},
		{"delete a user", request{method: "DELETE", path: "/api/v1/users/root", token: f.reader}, 403, "forbidden"},
		{"delete without a token", request{method: "DELETE", path: "/api/v1/users/ann"}, 401, "unauthorized"},
		{"an expired token", request{method: "GET", path: "/api/v1/users", token: f.expired}, 401, "invalid_token"},

		{"list API tokens without a token", request{method: "GET", path: "/api/v1/apitokens"}, 401, "unauthorized"},
		{"create an API token for another user", request{method: "POST", path: "/api/v1/apitokens", token: f.reader,
			body: `{"name":"mine now","owner":"root"}`}, 403, "forbidden"},
		{"read another user's API token", request{method: "GET", path: rootTok, token: f.reader}, 404, "not_found"},
		{"revoke another user's API token", request{method: "DELETE", path: rootTok, token: f.reader}, 404, "not_found"},
		{"revoke without a token", request{method: "DELETE", path: rootTok}, 401, "unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.do(t, tt.rq).want(t, tt.status, tt.typ)
		})
	}
	if _, ok := f.accounts.User("eve"); ok {
		t.Error("a refused create stored eve")
	}
	if _, ok := f.accounts.APIToken(rootToken.ID); !ok {
		t.Error("a refused revocation removed root's token")
	}
	if ts := f.accounts.APITokens(); len(ts) != 1 {
		t.Errorf("a refused create stored a token: %+v", ts)
	}
	// A user without the admin claim does not see other users' tokens.
	if l := f.do(t, request{method: "GET", path: "/api/v1/apitokens?owner=root", token: f.reader}).page(t); l.TotalElements != 0 {
		t.Errorf("ann lists root's tokens: %+v", l)
	}
}

// TestOwnPasswordChange is a user without the admin claim changing their
// password: the current one is required and checked (a wrong one is 403,
// not 401, so the client keeps its token), nothing else may change, and
// afterwards the old password no longer authenticates.
func TestOwnPasswordChange(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withAccounts())
	f.createBob(t)
	bob := f.tokenFor(t, "bob", false)
	const newPassword = "an even longer password for bob"
	send := func(body string) response {
		return f.do(t, request{method: http.MethodPatch, path: "/api/v1/users/bob", token: bob,
			contentType: "application/merge-patch+json", body: body})
	}

	wrong := send(`{"password":"` + newPassword + `","currentPassword":"not bob's password"}`)
	wrong.want(t, 403, "forbidden")
	if wrong.errorField("pointer") != "/currentPassword" {
		t.Errorf("wrong current password: %s", wrong.body)
	}
	missing := send(`{"password":"` + newPassword + `"}`)
	missing.want(t, 400, string(problem.ValidationFailed))
	if d := cmp.Diff([][2]string{{"/currentPassword", "is required to change one's own password"}}, missing.fields()); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	send(`{"password":"`+newPassword+`","currentPassword":"`+bobPassword+`","groups":["admins"]}`).want(t, 403, "forbidden")
	send(`{"password":"`+newPassword+`","currentPassword":"`+bobPassword+`","revision":1}`).want(t, 403, "forbidden")
	if a, _ := f.accounts.User("bob"); a.Revision != 1 {
		t.Fatalf("a refused change changed bob: %+v", a)
	}

	ok := send(`{"password":"` + newPassword + `","currentPassword":"` + bobPassword + `"}`)
	ok.want(t, 200, "")
	if ok.json["revision"] != 2.0 || cmp.Diff([]any{"analysts"}, ok.json["groups"]) != "" {
		t.Errorf("changed: %s", ok.body)
	}
	ctx := context.Background()
	if _, err := f.accounts.Authenticate(ctx, "bob", bobPassword); !errors.Is(err, tokens.ErrBadCredentials) {
		t.Errorf("the old password: %v, want ErrBadCredentials", err)
	}
	if _, err := f.accounts.Authenticate(ctx, "bob", newPassword); err != nil {
		t.Errorf("the new password: %v", err)
	}
}

// TestWrongCurrentPasswordsAreLimited: a holder of a user's idToken cannot
// guess the user's password through the password change: after five wrong
// current passwords the route answers 429, the right one included.
func TestWrongCurrentPasswordsAreLimited(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withAccounts())
	f.createBob(t)
	bob := f.tokenFor(t, "bob", false)
	send := func(current string) response {
		return f.do(t, request{method: http.MethodPatch, path: "/api/v1/users/bob", token: bob,
			contentType: "application/merge-patch+json", body: `{"password":"a new password for bob","currentPassword":"` + current + `"}`})
	}
	for i := range 5 {
		send(fmt.Sprintf("guess %d", i)).want(t, 403, "forbidden")
	}
	r := send(bobPassword)
	r.want(t, 429, "rate_limited")
	if r.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	if _, err := f.accounts.Authenticate(context.Background(), "bob", bobPassword); err != nil {
		t.Errorf("bob's password changed though the change was refused: %v", err)
	}
}

// TestAccountRulesAnswered checks the refusals that are about the account
// rather than the caller: users of the users file cannot be changed here,
// and an admin cannot remove themself or their own admin flag.
func TestAccountRulesAnswered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withAccounts())
	const patch = "application/merge-patch+json"
	tests := []struct {
		name string
		rq   request
	}{
		{"replace a file user", request{method: "PUT", path: "/api/v1/users/ann", token: f.admin, body: `{"groups":["quants"]}`}},
		{"patch a file user", request{method: "PATCH", path: "/api/v1/users/ann", token: f.admin, contentType: patch, body: `{"admin":true}`}},
		{"delete a file user", request{method: "DELETE", path: "/api/v1/users/ann", token: f.admin}},
		{"a file user's own password", request{method: "PATCH", path: "/api/v1/users/ann", token: f.reader, contentType: patch,
			body: `{"password":"a password long enough","currentPassword":"` + adminPassword + `"}`}},
		{"delete oneself", request{method: "DELETE", path: "/api/v1/users/root", token: f.admin}},
		{"put away one's own admin flag", request{method: "PUT", path: "/api/v1/users/root", token: f.admin, body: `{"admin":false}`}},
		{"patch away one's own admin flag", request{method: "PATCH", path: "/api/v1/users/root", token: f.admin, contentType: patch, body: `{"admin":null}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.do(t, tt.rq).want(t, 409, "conflict")
		})
	}
	// A user of the users file keeps their name.
	f.do(t, request{method: "POST", path: "/api/v1/users", token: f.admin, body: `{"name":"ann","password":"a password long enough"}`}).want(t, 409, "already_exists")
	if l := f.do(t, request{method: "GET", path: "/api/v1/users", token: f.admin}).page(t); l.TotalElements != 2 {
		t.Errorf("users after refusals: %+v", l)
	}
}

func TestUserBodies(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withAccounts())
	const patch = "application/merge-patch+json"
	long := strings.Repeat("é", 37) // 74 bytes
	tests := []struct {
		name   string
		rq     request
		status int
		typ    string
		fields [][2]string
	}{
		{"every field at fault", request{method: "POST", path: "/api/v1/users", token: f.admin,
			body: `{"name":"a:b","password":"` + long + `","groups":["x",""],"revision":2,"role":"admin","currentPassword":"x"}`},
			400, string(problem.ValidationFailed), [][2]string{
				{"/name", "must be a user name: at most 256 bytes, no colon and no control characters"},
				{"/password", "must be at most 72 bytes long: bcrypt reads no more"},
				{"/groups/1", "is required"},
				{"/role", "is not a member of this object"},
				{"/currentPassword", "is not a member of this object; it is sent in a PATCH"},
				{"/revision", "must be absent or 0 when creating"},
			}},
		{"no name, no password", request{method: "POST", path: "/api/v1/users", token: f.admin, body: `{"admin":true}`},
			400, string(problem.ValidationFailed), [][2]string{{"/name", "is required"}, {"/password", "is required"}}},
		{"a group twice", request{method: "POST", path: "/api/v1/users", token: f.admin, body: `{"name":"eve","password":"a password long enough","groups":["x","x"]}`},
			400, string(problem.ValidationFailed), [][2]string{{"/groups", "appears more than once"}}},
		{"a wrong type", request{method: "POST", path: "/api/v1/users", token: f.admin, body: `{"name":"eve","password":"a password long enough","admin":"yes"}`},
			400, string(problem.ValidationFailed), [][2]string{{"/admin", "must be true or false"}}},
		{"a short password", request{method: "POST", path: "/api/v1/users", token: f.admin, body: `{"name":"eve","password":"short"}`},
			400, string(problem.ValidationFailed), nil},
		{"not JSON", request{method: "POST", path: "/api/v1/users", token: f.admin, body: `{"name":`}, 400, string(problem.MalformedJSON), nil},
		{"not declared JSON", request{method: "POST", path: "/api/v1/users", token: f.admin, contentType: "text/plain", body: `{}`},
			415, string(problem.UnsupportedMediaType), nil},
		{"too large", request{method: "POST", path: "/api/v1/users", token: f.admin,
			body: `{"name":"eve","password":"` + strings.Repeat("x", management.DefaultMaxBodyBytes) + `"}`}, 413, "body_too_large", nil},
		{"a PUT renaming", request{method: "PUT", path: "/api/v1/users/root", token: f.admin, body: `{"name":"admin","admin":true}`},
			400, string(problem.ValidationFailed), [][2]string{{"/name", `must be the name in the URL, "root": a user cannot be renamed`}}},
		{"a patch as JSON", request{method: "PATCH", path: "/api/v1/users/root", token: f.admin, body: `{"admin":true}`},
			415, string(problem.UnsupportedMediaType), nil},
		{"a patch removing the password", request{method: "PATCH", path: "/api/v1/users/root", token: f.admin, contentType: patch,
			body: `{"password":null,"groups":[1]}`}, 400, string(problem.ValidationFailed), [][2]string{{"/groups/0", "must be a string"}}},
		{"a patch removing the password alone", request{method: "PATCH", path: "/api/v1/users/root", token: f.admin, contentType: patch,
			body: `{"password":null}`}, 400, string(problem.ValidationFailed), [][2]string{{"/password", "cannot be removed; send a new one"}}},
		{"a patch that is not an object", request{method: "PATCH", path: "/api/v1/users/root", token: f.admin, contentType: patch,
			body: `[]`}, 400, string(problem.ValidationFailed), nil},
		{"a bad If-Match", request{method: "DELETE", path: "/api/v1/users/nobody", token: f.admin, header: map[string]string{"If-Match": "3"}},
			400, string(problem.InvalidRequest), nil},
		{"a bad page", request{method: "GET", path: "/api/v1/users?size=0", token: f.admin}, 400, string(problem.InvalidParameter), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(t, tt.rq)
			r.want(t, tt.status, tt.typ)
			if tt.fields != nil {
				if d := cmp.Diff(tt.fields, r.fields()); d != "" {
					t.Errorf("fields (-want +got):\n%s", d)
				}
			}
		})
	}
	if l := f.do(t, request{method: "GET", path: "/api/v1/users", token: f.admin}).page(t); l.TotalElements != 2 {
		t.Errorf("a refused body stored a user: %+v", l)
	}
}

func TestAccountRoutesNeedAccounts(t *testing.T) {
	f := newFixture(t)
	for _, r := range f.handler.Routes() {
		if strings.Contains(r, "/api/v1/users") || strings.Contains(r, "/api/v1/apitokens") {
			t.Errorf("serves %s without Config.Accounts", r)
		}
	}
	f.do(t, request{method: http.MethodGet, path: "/api/v1/users", token: f.admin}).want(t, 404, "not_found")
	f.do(t, request{method: http.MethodPost, path: "/api/v1/apitokens", token: f.admin, body: `{"name":"x"}`}).want(t, 404, "not_found")
}
