package registry

import (
	"context"
	"sync"
	"time"
)

// Store keeps groups, deployments and queues. Implementations must be safe
// for concurrent use and apply the rules of [MemStore]:
//
//   - A write names the revision its writer read in the record's Revision
//     field: 0 creates (and conflicts when the record exists), AnyRevision
//     writes whatever is there, any other value must equal the stored
//     revision or the write fails with a [*ConflictError]. A successful write
//     returns the record as stored, its Revision one higher.
//   - A deployment's group and its endpoints' queues must exist
//     ([*InvalidError]); a group with deployments, a queue an endpoint uses,
//     and the built-in DEFAULT group and queue cannot be deleted ([ErrInUse]).
//   - A write is committed (durable, for a durable store) before it returns
//     nil, and every subscriber has then been called with the new [State].
type Store interface {
	// State returns the current state.
	State(ctx context.Context) (*State, error)

	PutGroup(ctx context.Context, g Group) (Group, error)
	DeleteGroup(ctx context.Context, name string, revision uint64) error
	PutDeployment(ctx context.Context, d Deployment) (Deployment, error)
	DeleteDeployment(ctx context.Context, group, path string, revision uint64) error
	PutQueue(ctx context.Context, q Queue) (Queue, error)
	DeleteQueue(ctx context.Context, name string, revision uint64) error

	// Subscribe calls fn with the new state after every committed write, in
	// commit order, before the write returns. fn must be quick and must not
	// call the store. cancel stops the calls.
	Subscribe(fn func(*State)) (cancel func())

	// Close releases the store. Later calls fail with [ErrClosed].
	Close() error
}

// StoreOptions configure the stores of this package.
type StoreOptions struct {
	// Now returns the time stamped on written records; nil means time.Now.
	Now func() time.Time
}

func (o StoreOptions) now() time.Time {
	if o.Now != nil {
		return o.Now().UTC()
	}
	return time.Now().UTC()
}

// core is the part of a store that does not depend on where state is kept:
// locking, the domain rules in State, and subscriptions. persist, when set,
// makes a new state durable before it is published; when it fails, nothing
// changes.
type core struct {
	opts    StoreOptions
	persist func(*State) error

	mu     sync.Mutex // serialises writes; guards state and closed
	state  *State
	closed bool
	subs   subscribers[*State]
}

func (c *core) State(ctx context.Context) (*State, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	return c.state, nil
}

// write runs fn on the current state and commits what it returns.
func (c *core) write(ctx context.Context, fn func(s *State, now time.Time) (*State, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	next, err := fn(c.state, c.opts.now())
	if err != nil {
		return err
	}
	if c.persist != nil {
		if err := c.persist(next); err != nil {
			return err
		}
	}
	c.state = next
	c.subs.notify(next)
	return nil
}

func (c *core) PutGroup(ctx context.Context, g Group) (out Group, err error) {
	err = c.write(ctx, func(s *State, now time.Time) (n *State, err error) {
		n, out, err = s.WithGroup(g, now)
		return n, err
	})
	return out, err
}

func (c *core) DeleteGroup(ctx context.Context, name string, revision uint64) error {
	return c.write(ctx, func(s *State, _ time.Time) (*State, error) { return s.WithoutGroup(name, revision) })
}

func (c *core) PutDeployment(ctx context.Context, d Deployment) (out Deployment, err error) {
	err = c.write(ctx, func(s *State, now time.Time) (n *State, err error) {
		n, out, err = s.WithDeployment(d, now)
		return n, err
	})
	return out, err
}

func (c *core) DeleteDeployment(ctx context.Context, group, path string, revision uint64) error {
	return c.write(ctx, func(s *State, _ time.Time) (*State, error) { return s.WithoutDeployment(group, path, revision) })
}

func (c *core) PutQueue(ctx context.Context, q Queue) (out Queue, err error) {
	err = c.write(ctx, func(s *State, now time.Time) (n *State, err error) {
		n, out, err = s.WithQueue(q, now)
		return n, err
	})
	return out, err
}

func (c *core) DeleteQueue(ctx context.Context, name string, revision uint64) error {
	return c.write(ctx, func(s *State, _ time.Time) (*State, error) { return s.WithoutQueue(name, revision) })
}

func (c *core) Subscribe(fn func(*State)) (cancel func()) { return c.subs.add(fn) }

// close marks the store closed; it returns false when it already was.
func (c *core) close() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	was := c.closed
	c.closed = true
	return !was
}

// MemStore is a [Store] that keeps records in memory only. It is safe for
// concurrent use.
type MemStore struct{ core }

var _ Store = (*MemStore)(nil)

// NewMemStore returns a store holding the built-in DEFAULT group and queue.
func NewMemStore(opts StoreOptions) *MemStore {
	s := &MemStore{}
	s.opts = opts
	s.state = NewState(opts.now())
	return s
}

// Close implements [Store].
func (s *MemStore) Close() error {
	s.close()
	return nil
}
