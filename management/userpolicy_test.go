package management_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/scorehub/scorehub/problem"
)

// TestTrivialPasswordsRefused is an admin, and a user changing their own
// password, setting one an attacker tries first: every route that sets a
// password answers 400 naming the rule, at /password, and stores nothing.
func TestTrivialPasswordsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withAccounts())
	f.createBob(t)
	bob := f.tokenFor(t, "bob", false)
	const patch = "application/merge-patch+json"
	for _, tc := range []struct {
		name, password, rule string
	}{
		{"one letter repeated", "aaaaaaaaaaaa", "the password is repetitive"},
		{"a common password", "password1234", "the password is one of the most common passwords"},
		{"digits in a row", "234567890123", "the password is a run of consecutive characters"},
		{"twelve spaces", strings.Repeat(" ", 12), "the password is only white space"},
	} {
		pw, err := json.Marshal(tc.password)
		if err != nil {
			t.Fatal(err)
		}
		for _, rq := range []request{
			{method: http.MethodPost, path: "/api/v1/users", token: f.admin, body: `{"name":"eve","password":` + string(pw) + `}`},
			{method: http.MethodPut, path: "/api/v1/users/bob", token: f.admin, body: `{"password":` + string(pw) + `,"groups":["analysts"]}`},
			{method: http.MethodPatch, path: "/api/v1/users/bob", token: f.admin, contentType: patch, body: `{"password":` + string(pw) + `}`},
			{method: http.MethodPatch, path: "/api/v1/users/bob", token: bob, contentType: patch,
				body: `{"password":` + string(pw) + `,"currentPassword":"` + bobPassword + `"}`},
		} {
			t.Run(tc.name+", "+rq.method, func(t *testing.T) {
				r := f.do(t, rq)
				r.want(t, 400, string(problem.ValidationFailed))
				m, _ := r.errorField("message").(string)
				if p := r.errorField("pointer"); p != "/password" || !strings.HasPrefix(m, tc.rule) {
					t.Errorf("answered at %v: %v; want at /password: %s", p, m, tc.rule)
				}
			})
		}
	}
	if _, ok := f.accounts.User("eve"); ok {
		t.Error("a user with a trivial password was stored")
	}
	if a, _ := f.accounts.User("bob"); a.Revision != 1 {
		t.Errorf("bob was changed to a trivial password: %+v", a)
	}
	if _, err := f.accounts.Authenticate(context.Background(), "bob", bobPassword); err != nil {
		t.Errorf("bob's password: %v", err)
	}
}

// TestLookalikeUserNamesRefused is an admin creating a user whose name
// passes for one of the users file's (ann, root): a name that reads as
// theirs is 409 already_exists naming them; one that mixes scripts or
// hides a character is 400 at /name naming the rule.
func TestLookalikeUserNamesRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withAccounts())
	for _, tc := range []struct {
		name, user string
		status     int
		typ, rule  string
	}{
		{"capitalised", "Ann", 409, "already_exists", `user name "Ann" is taken: it reads as the name of the existing user "ann"`},
		{"capitals", "ROOT", 409, "already_exists", `user name "ROOT" is taken: it reads as the name of the existing user "root"`},
		{"Cyrillic look-alikes", "апп", 409, "already_exists", `user name "апп" is taken: it reads as the name of the existing user "ann"`},
		{"a Cyrillic first letter", "\u0430nn", 400, "validation_failed", "the user name mixes the scripts Cyrillic and Latin"},
		{"a leading space", " ann", 400, "validation_failed", "the user name has white space or an invisible character (U+0020, character 1)"},
		{"a trailing space", "root ", 400, "validation_failed", "the user name has white space or an invisible character (U+0020, character 5)"},
		{"a zero-width space", "a\u200bnn", 400, "validation_failed", "the user name has white space or an invisible character (U+200B, character 2)"},
		{"a soft hyphen", "ro\u00adot", 400, "validation_failed", "the user name has white space or an invisible character (U+00AD, character 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, err := json.Marshal(tc.user)
			if err != nil {
				t.Fatal(err)
			}
			r := f.do(t, request{method: http.MethodPost, path: "/api/v1/users", token: f.admin,
				body: `{"name":` + string(name) + `,"password":"a password long enough"}`})
			r.want(t, tc.status, tc.typ)
			m, _ := r.errorField("message").(string)
			if !strings.HasPrefix(m, tc.rule) {
				t.Errorf("answered %q, want %q", m, tc.rule)
			}
			if p, _ := r.errorField("pointer").(string); tc.status == 400 && p != "/name" {
				t.Errorf("answered at %q, want /name", p)
			}
		})
	}
	if l := f.do(t, request{method: "GET", path: "/api/v1/users", token: f.admin}).page(t); l.TotalElements != 2 {
		t.Errorf("a look-alike name was stored: %+v", l)
	}
}
