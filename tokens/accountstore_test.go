package tokens_test

import (
	"testing"

	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/tokenstest"
)

func TestMemoryAccountStoreConformance(t *testing.T) {
	tokenstest.RunAccountStore(t, func(t *testing.T) tokens.AccountStore {
		s := tokens.NewMemoryAccountStore()
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestFileAccountStoreConformance(t *testing.T) {
	tokenstest.RunAccountStore(t, func(t *testing.T) tokens.AccountStore {
		s, err := tokens.OpenFileAccountStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
