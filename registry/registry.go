package registry

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// Registry joins a [Catalog] and a [Store] and keeps an immutable [Snapshot]
// of both current: every write committed to the store publishes a new one
// before the write returns. It is safe for concurrent use; Snapshot takes no
// lock.
type Registry struct {
	catalog *Catalog
	store   Store
	snap    atomic.Pointer[Snapshot]
	cancel  func()
}

// New returns a Registry over catalog and store. Close it to stop following
// the store; closing the Registry does not close the store.
func New(ctx context.Context, catalog *Catalog, store Store) (*Registry, error) {
	if catalog == nil || store == nil {
		return nil, errors.New("registry: New needs a catalog and a store")
	}
	r := &Registry{catalog: catalog, store: store}
	// Subscribe first so that no write between the read and the
	// subscription is missed; a newer state always wins.
	r.cancel = store.Subscribe(r.publish)
	st, err := store.State(ctx)
	if err != nil {
		r.cancel()
		return nil, fmt.Errorf("registry: read store: %w", err)
	}
	r.publish(st)
	return r, nil
}

func (r *Registry) publish(st *State) {
	next := &Snapshot{state: st, catalog: r.catalog}
	for {
		old := r.snap.Load()
		if old != nil && old.state.seq >= st.seq {
			return
		}
		if r.snap.CompareAndSwap(old, next) {
			return
		}
	}
}

// Snapshot returns the current snapshot.
func (r *Registry) Snapshot() *Snapshot { return r.snap.Load() }

// Catalog returns the registry's catalog.
func (r *Registry) Catalog() *Catalog { return r.catalog }

// Store returns the registry's store.
func (r *Registry) Store() Store { return r.store }

// Close stops following the store.
func (r *Registry) Close() error {
	r.cancel()
	return nil
}

// Snapshot is the registry as of one committed state. It is immutable and
// safe for concurrent use.
type Snapshot struct {
	state   *State
	catalog *Catalog
}

// State returns the store state the snapshot was built from.
func (s *Snapshot) State() *State { return s.state }

// Target is what a scoring request resolves to.
type Target struct {
	Group      Group
	Deployment Deployment
	Endpoint   Endpoint
	Queue      Queue
	Process    ProcessInfo
}

// Resolve finds the endpoint group/path/alias. It fails with [ErrNotFound]
// when a name is invalid or nothing is stored under it, with [ErrDisabled]
// when the deployment is disabled, and with [ErrUnavailable] when the
// endpoint's process is not in the catalog.
//
// The returned records share memory with the snapshot and must not be
// modified.
func (s *Snapshot) Resolve(group, path, alias string) (Target, error) {
	if !ValidName(group) || !ValidName(path) || !ValidName(alias) {
		return Target{}, errorf(ErrNotFound, "no endpoint has this address")
	}
	g, ok := s.state.groups[group]
	if !ok {
		return Target{}, errorf(ErrNotFound, "web API group %q does not exist", group)
	}
	d, ok := s.state.deployments[deploymentKey{group, path}]
	if !ok {
		return Target{}, errorf(ErrNotFound, "deployment %q does not exist", group+"/"+path)
	}
	e, ok := d.Endpoint(alias)
	if !ok {
		return Target{}, errorf(ErrNotFound, "endpoint %q does not exist", group+"/"+path+"/"+alias)
	}
	if !d.Enabled {
		return Target{}, errorf(ErrDisabled, "the endpoint's deployment is disabled")
	}
	p, ok := s.catalog.Lookup(e.Process)
	if !ok {
		return Target{}, errorf(ErrUnavailable, "the endpoint's process is not available in this server")
	}
	q, ok := s.state.queues[e.QueueName()]
	if !ok { // the store's rules prevent it; a foreign Store might not
		return Target{}, errorf(ErrUnavailable, "the endpoint's process is not available in this server")
	}
	return Target{Group: g, Deployment: d, Endpoint: e, Queue: q, Process: p}, nil
}
