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
