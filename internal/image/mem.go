package image

import (
	"context"
	"sync"
)

// MemConfig configures [NewMem], and the image of a [File].
type MemConfig[T any] struct {
	// Seq returns a state's sequence number. Required.
	Seq func(*T) uint64
	// Closed is what every call fails with once the store is closed.
	// Required.
	Closed error
	// Check, when set, runs under the commit lock before a commit that
	// passed the base check, with the stored state and the next one; an
	// error refuses the commit and changes nothing. It keeps what only the
	// store can know consistent, such as the registry's model artifacts.
	Check func(cur, next *T) error
}

// Mem is a [Store] that keeps the state as one value in memory: the
// commit condition, locking and closing. A [File] is a Mem that makes
// each state durable before it becomes the stored one. A Mem is safe for
// concurrent use; commits are serialised.
type Mem[T any] struct {
	cfg MemConfig[T]
	// persist, when set, makes a state durable before it becomes the
	// stored one; when it fails, nothing changes.
	persist func(*T) error

	mu     sync.Mutex // serialises commits; guards state and closed
	state  *T
	closed bool
}

var _ Store[struct{}] = (*Mem[struct{}])(nil)

// NewMem returns a store holding initial.
func NewMem[T any](initial *T, cfg MemConfig[T]) *Mem[T] {
	return &Mem[T]{cfg: cfg, state: initial}
}

// Load implements [Store].
func (m *Mem[T]) Load(ctx context.Context) (*T, error) {
	var st *T
	err := m.Locked(ctx, func(cur *T) error {
		st = cur
		return nil
	})
	return st, err
}

// Commit implements [Store].
func (m *Mem[T]) Commit(ctx context.Context, base uint64, next *T) error {
	return m.Locked(ctx, func(cur *T) error {
		if next == nil || base != m.cfg.Seq(cur) || m.cfg.Seq(next) != base+1 {
			return ErrStale
		}
		if m.cfg.Check != nil {
			if err := m.cfg.Check(cur, next); err != nil {
				return err
			}
		}
		if m.persist != nil {
			if err := m.persist(next); err != nil {
				return err
			}
		}
		m.state = next
		return nil
	})
}

// Locked calls fn with the stored state, holding the commit lock: no
// commit happens until fn returns. It fails without calling fn when ctx is
// done or the store is closed. It lets what a store keeps beside the state
// (the registry's artifacts) change in step with it.
func (m *Mem[T]) Locked(ctx context.Context, fn func(cur *T) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return m.cfg.Closed
	}
	return fn(m.state)
}

// Close implements io.Closer: later calls fail with MemConfig.Closed. It
// waits for a commit in progress. Closing a closed store does nothing.
func (m *Mem[T]) Close() error {
	m.close()
	return nil
}

// close marks the store closed; it returns false when it already was.
func (m *Mem[T]) close() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	was := m.closed
	m.closed = true
	return !was
}
