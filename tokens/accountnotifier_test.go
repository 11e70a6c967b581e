package tokens_test

import (
	"context"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/tokenstest"
)

// sharedAccounts is one memory store that several handles share, each
// telling its subscribers what any handle commits, as a database store
// does for the replicas on it.
type sharedAccounts struct {
	mu    sync.Mutex // serialises commits, so that notifications keep their order
	store *tokens.MemoryAccountStore
	next  int
	subs  map[int]func(*tokens.AccountState)
}

// accountHandle is one writer's handle on a sharedAccounts.
type accountHandle struct {
	*sharedAccounts
	closed bool
}

var _ tokens.AccountNotifier = (*accountHandle)(nil)

func newSharedAccounts() *sharedAccounts {
	return &sharedAccounts{store: tokens.NewMemoryAccountStore(), subs: map[int]func(*tokens.AccountState){}}
}

func (h *accountHandle) Load(ctx context.Context) (*tokens.AccountState, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, tokens.ErrAccountsClosed
	}
	return h.store.Load(ctx)
}

func (h *accountHandle) Commit(ctx context.Context, c tokens.AccountCommit) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return tokens.ErrAccountsClosed
	}
	if err := h.store.Commit(ctx, c); err != nil {
		return err
	}
	for _, fn := range h.subs {
		fn(c.State)
	}
	return nil
}

func (h *accountHandle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	return nil
}

func (h *accountHandle) Subscribe(fn func(*tokens.AccountState)) (cancel func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.next
	h.next++
	h.subs[id] = fn
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, id)
	}
}

func TestAccountNotifierConformance(t *testing.T) {
	tokenstest.RunAccountNotifier(t, func(t *testing.T) (a, b tokens.AccountNotifier) {
		s := newSharedAccounts()
		t.Cleanup(func() { s.store.Close() })
		return &accountHandle{sharedAccounts: s}, &accountHandle{sharedAccounts: s}
	})
}
