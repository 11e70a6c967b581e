package pgstore_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/registry"
)

// syncBuffer is a log destination safe for the listener's goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestListenerCatchesUp cuts a subscribed DB's listening connection and
// checks that what another DB committed meanwhile, whose notification it
// could not hear, reaches the subscriber when it reconnects, with the
// periodic check out of the way: the reload after a reconnect alone
// delivers it.
func TestListenerCatchesUp(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t)
	url := srv.NewDB(t)
	logs := &syncBuffer{}
	reader, err := pgstore.Open(ctx, pgstore.Config{URL: url, PollInterval: time.Hour, RetryMax: 200 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	// Once armed, the listener reports the next connection it makes and
	// waits for the test before it listens.
	var armed atomic.Bool
	connected := make(chan struct{}, 10)
	resume, done := make(chan struct{}), make(chan struct{})
	pgstore.SetListenHook(reader, func() {
		if armed.Swap(false) {
			connected <- struct{}{}
			select {
			case <-resume:
			case <-done:
			}
		}
	})
	t.Cleanup(func() { reader.Close() })
	t.Cleanup(func() { close(done) }) // first: a held listener lets Close end
	seen := make(chan uint64, 100)
	defer reader.Subscribe(func(st *registry.State) { seen <- st.Seq() })()
	waitSeq(t, seen, 0)

	// cut takes the listening connection away; writeWhileCut commits
	// through another DB while the listener is reconnecting, then lets it
	// listen, and checks the commit arrives, then that the next one does
	// too, by notification.
	check := func(t *testing.T, cut func(t *testing.T)) {
		armed.Store(true)
		cut(t)
		select {
		case <-connected:
		case <-time.After(30 * time.Second):
			t.Fatal("the listener did not reconnect within 30s")
		}
		writer := newRegistry(t, open(t, pgstore.Config{URL: url}))
		if _, err := writer.PutGroup(ctx, registry.Group{Name: strings.ReplaceAll(t.Name(), "/", "-")}); err != nil {
			t.Fatal(err)
		}
		missed := writer.Snapshot().State().Seq()
		resume <- struct{}{}
		waitSeq(t, seen, missed)
		if _, err := writer.PutGroup(ctx, registry.Group{Name: strings.ReplaceAll(t.Name(), "/", "-") + "-after"}); err != nil {
			t.Fatal(err)
		}
		waitSeq(t, seen, missed+1)
	}

	t.Run("after the server restarts", func(t *testing.T) {
		check(t, func(t *testing.T) { srv.Restart(t) })
	})
	t.Run("after its backend is terminated", func(t *testing.T) {
		check(t, func(t *testing.T) {
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			var n int
			err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND query LIKE 'LISTEN %'`).Scan(&n)
			if err != nil || n != 1 {
				t.Fatalf("terminated %d listening backends (%v), want 1", n, err)
			}
		})
	})
	if strings.Contains(logs.String(), srv.Password()) {
		t.Errorf("the listener's log holds the password:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "reconnecting") {
		t.Errorf("the listener logged no lost connection:\n%s", logs.String())
	}
}

// TestLateSubscriberStartsFromStored: a subscriber added after the
// listener has delivered the stored state gets that state too, without
// waiting for the next commit, with the periodic check out of the way.
func TestLateSubscriberStartsFromStored(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	writer := newRegistry(t, open(t, pgstore.Config{URL: url}))
	if _, err := writer.PutGroup(ctx, registry.Group{Name: "g"}); err != nil {
		t.Fatal(err)
	}
	stored := writer.Snapshot().State().Seq()
	reader := open(t, pgstore.Config{URL: url, PollInterval: time.Hour})
	first := make(chan uint64, 10)
	defer reader.Subscribe(func(st *registry.State) { first <- st.Seq() })()
	waitSeq(t, first, stored)
	late := make(chan uint64, 10)
	defer reader.Subscribe(func(st *registry.State) { late <- st.Seq() })()
	waitSeq(t, late, stored)
	select {
	case seq := <-first:
		t.Errorf("the first subscriber was given seq %d again", seq)
	default:
	}
}

// TestSubscribersStopOnCancel checks that a cancelled subscription is not
// called again, while others still are.
func TestSubscribersStopOnCancel(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	reader := open(t, pgstore.Config{URL: url})
	writer := newRegistry(t, open(t, pgstore.Config{URL: url}))
	var mu sync.Mutex
	var cancelledCalls int
	cancel := reader.Subscribe(func(*registry.State) {
		mu.Lock()
		defer mu.Unlock()
		cancelledCalls++
	})
	seen := make(chan uint64, 100)
	defer reader.Subscribe(func(st *registry.State) { seen <- st.Seq() })()
	waitSeq(t, seen, 0)
	cancel()
	mu.Lock()
	before := cancelledCalls
	mu.Unlock()
	if _, err := writer.PutGroup(ctx, registry.Group{Name: "g"}); err != nil {
		t.Fatal(err)
	}
	waitSeq(t, seen, 1)
	mu.Lock()
	defer mu.Unlock()
	if cancelledCalls != before {
		t.Errorf("a cancelled subscriber was called %d more times", cancelledCalls-before)
	}
}
