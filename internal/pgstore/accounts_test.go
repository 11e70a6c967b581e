package pgstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
	"github.com/scorehub/scorehub/tokens/accounts/accountstest"
	"github.com/scorehub/scorehub/tokens/tokenstest"
)

func TestAccountStoreConformance(t *testing.T) {
	accountstest.RunStore(t, func(t *testing.T) accounts.Store {
		s := open(t, pgstore.Config{URL: pgtest.DB(t)}).Accounts()
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestAccountsAcrossPools: two DBs, each with its own pool and listener,
// on one database, as two replicas have.
func TestAccountsAcrossPools(t *testing.T) {
	accountstest.RunNotifier(t, func(t *testing.T) (a, b accounts.Notifier) {
		url := pgtest.DB(t)
		return open(t, pgstore.Config{URL: url}).Accounts(), open(t, pgstore.Config{URL: url}).Accounts()
	})
}

func TestKeyStoreConformance(t *testing.T) {
	tokenstest.RunKeyStore(t, func(t *testing.T) tokens.KeyStore {
		return open(t, pgstore.Config{URL: pgtest.DB(t)}).Keys()
	})
}

// TestKeysAcrossPools: two DBs on one database share one key set.
func TestKeysAcrossPools(t *testing.T) {
	tokenstest.RunKeyNotifier(t, func(t *testing.T) (a, b tokens.KeyNotifier) {
		url := pgtest.DB(t)
		return open(t, pgstore.Config{URL: url}).Keys(), open(t, pgstore.Config{URL: url}).Keys()
	})
}

// TestAccountsAndKeysCatchUp cuts a replica's listening connection and
// checks that a user removed and a key rotated through another replica
// meanwhile, whose notifications it could not hear, reach it when it
// reconnects (the key published, to sign after its handover), with the periodic check out of the way.
func TestAccountsAndKeysCatchUp(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	// The reader names itself, so that only its listener is cut.
	reader := open(t, pgstore.Config{URL: url + "&application_name=catching-up", PollInterval: time.Hour, RetryMax: 200 * time.Millisecond})
	reconnected, resume := make(chan struct{}, 10), make(chan struct{})
	var sessions atomic.Int32
	pgstore.SetListenHook(reader, func() {
		if sessions.Add(1) > 1 {
			reconnected <- struct{}{}
			<-resume
		}
	})
	writer := open(t, pgstore.Config{URL: url})

	here := newAccounts(t, reader.Accounts())
	there := newAccounts(t, writer.Accounts())
	hereKeys, thereKeys := openKeys(t, reader.Keys()), openKeys(t, writer.Keys())
	if _, err := there.CreateUser(ctx, accounts.NewUser{Name: "alice", Password: "correct horse battery"}); err != nil {
		t.Fatal(err)
	}
	within(t, 10*time.Second, "the replica to see alice", func() bool { _, ok := here.User("alice"); return ok })

	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var n int
	err = admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'catching-up' AND query LIKE 'LISTEN %'`).Scan(&n)
	if err != nil || n != 1 {
		t.Fatalf("terminated %d listening backends (%v), want 1", n, err)
	}
	select {
	case <-reconnected:
	case <-time.After(30 * time.Second):
		t.Fatal("the listener did not reconnect within 30s")
	}
	if err := there.DeleteUser(ctx, "alice", 0); err != nil {
		t.Fatal(err)
	}
	k, err := thereKeys.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	close(resume)
	start := time.Now()
	within(t, tokenstest.Propagation, "the replica to see alice removed", func() bool { _, ok := here.User("alice"); return !ok })
	within(t, tokenstest.Propagation, "the replica to publish the rotated key", func() bool { return hereKeys.Keys()[0].ID == k.ID() })
	if got := hereKeys.Signing().ID(); got == k.ID() {
		t.Errorf("the replica signs with the rotated key %s before its handover ended", got)
	}
	t.Logf("after the reconnection the replica caught up in %v", time.Since(start))
}

func newAccounts(t *testing.T, s accounts.Store) *accounts.Book {
	t.Helper()
	a, err := accounts.Open(context.Background(), accounts.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func openKeys(t *testing.T, s tokens.KeyStore) *tokens.KeySet {
	t.Helper()
	keys, err := tokens.OpenKeySet(context.Background(), s, tokens.KeySetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keys.Close() })
	return keys
}

// within polls cond until it holds, failing after d.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, d, what, cond)
}
