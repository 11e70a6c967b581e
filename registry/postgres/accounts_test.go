package postgres_test

import (
	"testing"

	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/registry/postgres"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/tokenstest"
)

func TestAccountStoreConformance(t *testing.T) {
	tokenstest.RunAccountStore(t, func(t *testing.T) tokens.AccountStore {
		s := open(t, postgres.Config{URL: pgtest.DB(t)}).Accounts()
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestAccountsAcrossPools: two DBs, each with its own pool and listener,
// on one database, as two replicas have.
func TestAccountsAcrossPools(t *testing.T) {
	tokenstest.RunAccountNotifier(t, func(t *testing.T) (a, b tokens.AccountNotifier) {
		url := pgtest.DB(t)
		return open(t, postgres.Config{URL: url}).Accounts(), open(t, postgres.Config{URL: url}).Accounts()
	})
}

func TestKeyStoreConformance(t *testing.T) {
	tokenstest.RunKeyStore(t, func(t *testing.T) tokens.KeyStore {
		return open(t, postgres.Config{URL: pgtest.DB(t)}).Keys()
	})
}

// TestKeysAcrossPools: two DBs on one database share one key set.
func TestKeysAcrossPools(t *testing.T) {
	tokenstest.RunKeyNotifier(t, func(t *testing.T) (a, b tokens.KeyNotifier) {
		url := pgtest.DB(t)
		return open(t, postgres.Config{URL: url}).Keys(), open(t, postgres.Config{URL: url}).Keys()
	})
}
