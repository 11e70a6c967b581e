package middleware_test

import (
	"net/http/httptest"
	"testing"

	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens"
)

// TestMaySee: who sees a web API group's resources, for every kind of
// caller and policy.
func TestMaySee(t *testing.T) {
	public := registry.AuthPolicy{Mode: registry.Public}
	anyToken := registry.AuthPolicy{Mode: registry.TokenRequired}
	staff := registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"staff"}}
	admin := &tokens.Claims{Subject: "root", Admin: true}
	member := &tokens.Claims{Subject: "sam", Groups: []string{"staff"}}
	user := &tokens.Claims{Subject: "bob"}
	restricted := &tokens.Claims{Subject: "root", Admin: true}
	restricted.Restrict([]string{"g1"})
	for _, c := range []struct {
		name   string
		claims *tokens.Claims
		group  string
		policy registry.AuthPolicy
		want   bool
	}{
		{"anonymous, public", nil, "g", public, true},
		{"anonymous, protected", nil, "g", anyToken, false},
		{"a user, public", user, "g", public, true},
		{"a user, any token", user, "g", anyToken, true},
		{"a user, members only", user, "g", staff, false},
		{"a member, members only", member, "g", staff, true},
		{"an admin, members only", admin, "g", staff, true},
		{"a restricted token, its group", restricted, "g1", anyToken, true},
		{"a restricted token, another public group", restricted, "g2", public, false},
		{"a restricted admin's token, members only", restricted, "g1", staff, false},
	} {
		if got := middleware.MaySee(c.claims, c.group, c.policy); got != c.want {
			t.Errorf("%s: MaySee = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestHasCredentials: an Authorization header or an access_token in the
// query, however spelt, are credentials; other queries are not.
func TestHasCredentials(t *testing.T) {
	for _, c := range []struct {
		target, auth string
		want         bool
	}{
		{"/x", "", false},
		{"/x?size=0&page=1", "", false},
		{"/x", "Bearer t", true},
		{"/x?access_token=t", "", true},
		{"/x?a=1&access%5Ftoken=t", "", true},
	} {
		r := httptest.NewRequest("GET", c.target, nil)
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		if got := middleware.HasCredentials(r); got != c.want {
			t.Errorf("%s with %q: %v, want %v", c.target, c.auth, got, c.want)
		}
	}
}
