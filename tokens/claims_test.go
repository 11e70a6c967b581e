package tokens_test

import (
	"testing"

	"github.com/scorehub/scorehub/tokens"
)

// TestClaimsRestrict: claims restricted to some web API groups may use
// those only and are never an administrator's; no groups restrict nothing.
func TestClaimsRestrict(t *testing.T) {
	c := tokens.Claims{Subject: "root", Admin: true}
	c.Restrict(nil)
	if !c.Admin || !c.MayUse("any") {
		t.Errorf("Restrict(nil) changed the claims: %+v", c)
	}
	groups := []string{"g1", "g2"}
	c.Restrict(groups)
	groups[0] = "changed"
	switch {
	case c.Admin:
		t.Error("restricted claims are still an administrator's")
	case !c.MayUse("g1") || !c.MayUse("g2"):
		t.Errorf("restricted to g1 and g2, the claims may not use them: %q", c.WebAPIGroups)
	case c.MayUse("g3"), c.MayUse(""):
		t.Error("restricted claims may use a group they do not name")
	}
}
