package tokens

import (
	"context"
	"sync"
)

// memoryImage keeps an AccountState as one value in memory: locking, the
// commit condition and closing. persist, when set, makes a state durable
// before it becomes the stored one; when it fails, nothing changes.
type memoryImage struct {
	persist func(*AccountState) error

	mu     sync.Mutex // serialises commits; guards state and closed
	state  *AccountState
	closed bool
}

// MemoryAccountStore is an [AccountStore] that keeps users and API tokens
// in memory only. It is safe for concurrent use.
type MemoryAccountStore struct{ memoryImage }

var _ AccountStore = (*MemoryAccountStore)(nil)

// NewMemoryAccountStore returns an empty store.
func NewMemoryAccountStore() *MemoryAccountStore {
	return &MemoryAccountStore{memoryImage{state: &AccountState{}}}
}

// Load implements [AccountStore].
func (m *memoryImage) Load(ctx context.Context) (*AccountState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrAccountsClosed
	}
	return m.state, nil
}

// Commit implements [AccountStore].
func (m *memoryImage) Commit(ctx context.Context, c AccountCommit) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrAccountsClosed
	}
	if c.State == nil || c.Base != m.state.Seq || c.State.Seq != c.Base+1 {
		return ErrAccountsStale
	}
	if m.persist != nil {
		if err := m.persist(c.State); err != nil {
			return err
		}
	}
	m.state = c.State
	return nil
}

// close marks the store closed; it returns false when it already was.
func (m *memoryImage) close() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	was := m.closed
	m.closed = true
	return !was
}

// Close implements [AccountStore].
func (m *MemoryAccountStore) Close() error {
	m.close()
	return nil
}
