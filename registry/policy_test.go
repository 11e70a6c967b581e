package registry_test

import (
	"slices"
	"testing"

	"github.com/scorehub/scorehub/registry"
)

func TestAuthPolicyAccepts(t *testing.T) {
	all := registry.AllSchemes()
	cases := []struct {
		name   string
		policy registry.AuthPolicy
		want   []registry.Scheme
	}{
		{"public", registry.AuthPolicy{Mode: registry.Public}, all},
		{"empty mode", registry.AuthPolicy{}, all},
		{"protected, no kinds listed", registry.AuthPolicy{Mode: registry.TokenRequired}, all},
		{"protected, Basic only", registry.AuthPolicy{Mode: registry.TokenRequired, Schemes: []registry.Scheme{registry.SchemeBasic}},
			[]registry.Scheme{registry.SchemeBasic}},
		{"protected, listed out of order", registry.AuthPolicy{Mode: registry.TokenRequired,
			Schemes: []registry.Scheme{registry.SchemeBearer, registry.SchemeAPIToken}},
			[]registry.Scheme{registry.SchemeAPIToken, registry.SchemeBearer}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.policy.Accepted(); !slices.Equal(got, c.want) {
				t.Errorf("Accepted() = %q, want %q", got, c.want)
			}
			for _, s := range all {
				if got, want := c.policy.Accepts(s), slices.Contains(c.want, s); got != want {
					t.Errorf("Accepts(%q) = %v, want %v", s, got, want)
				}
			}
		})
	}
	if got := registry.AllSchemes(); !slices.Equal(got, []registry.Scheme{"basic", "apitoken", "bearer"}) {
		t.Errorf("AllSchemes() = %q", got)
	}
}
