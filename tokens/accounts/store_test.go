package accounts_test

import (
	"testing"

	"github.com/scorehub/scorehub/tokens/accounts"
	"github.com/scorehub/scorehub/tokens/accounts/accountstest"
)

func TestMemoryStoreConformance(t *testing.T) {
	accountstest.RunStore(t, func(t *testing.T) accounts.Store {
		s := accounts.NewMemoryStore()
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestFileStoreConformance(t *testing.T) {
	accountstest.RunStore(t, func(t *testing.T) accounts.Store {
		s, err := accounts.OpenFileStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
