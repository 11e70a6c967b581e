package registry

import (
	"context"
	"errors"
	"github.com/scorehub/scorehub/registry/drift"
	"sync"
	"time"

	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/registry/process"
)

// Registry joins a [process.Catalog] and a [Store]. It is the one way to change the
// records: each write checks every rule of the records against the current
// [State], has the store commit the one change, and publishes the new
// immutable [Snapshot] before it returns, so the next [Registry.Snapshot]
// (the next scoring request) sees it. Over a [Notifier] store it also
// publishes what other writers commit.
//
// The rules of a write:
//
//   - A write names the revision its writer read in the record's Revision
//     field (or the revision argument of a delete): 0 creates (and
//     conflicts when the record exists), [AnyRevision] writes whatever is
//     there, any other value must equal the stored revision or the write
//     fails with a [*ConflictError]; a named revision of a record that does
//     not exist fails with [ErrNotFound]. A successful write returns the
//     record as stored, its Revision one higher, stamped with the time
//     (from the [StoreOptions] of a store of this package, else the wall
//     clock, in UTC).
//   - A record must be valid ([Group.Faults], [Deployment.Faults],
//     [Queue.Faults]), and a deployment's group and its endpoints' queues
//     must exist ([*InvalidError], every fault joined).
//   - A group with deployments, a queue an endpoint uses, and the built-in
//     DEFAULT group and queue cannot be deleted ([ErrInUse]).
//   - An endpoint names a catalog process or a model's alias or version
//     (see [ParseModelRef]), which must exist ([*InvalidError] at
//     "/endpoints/<i>/model"). A model an endpoint names, an alias it
//     names, and a version it or an alias names cannot be deleted
//     ([ErrInUse]). See [Registry.AddModelVersion] for the rules of model
//     versions.
//
// A Registry is safe for concurrent use: its writes are serialised, and
// Snapshot takes no lock.
type Registry struct {
	catalog *process.Catalog
	models  *modelCache
	now     func() time.Time
	w       *image.Writer[State, *Snapshot]
}

// New returns a Registry over catalog and store, holding what the store
// holds, with every model version an endpoint or alias uses loaded (one
// that cannot be loaded makes its endpoints fail with [ErrUnavailable]).
// Close it to stop it; closing the Registry does not close the store.
func New(ctx context.Context, catalog *process.Catalog, store Store) (*Registry, error) {
	if catalog == nil || store == nil {
		return nil, errors.New("registry: New needs a catalog and a store")
	}
	r := &Registry{catalog: catalog, models: newModelCache(catalog, store), now: time.Now}
	if c, ok := store.(interface{ now() time.Time }); ok {
		r.now = c.now // StoreOptions.Now of this package's stores
	}
	w, err := image.NewWriter(ctx, image.WriterConfig[State, *Snapshot]{
		Store: store,
		Seq:   (*State).Seq,
		View: func(st *State, _ *Snapshot) (*Snapshot, error) {
			return &Snapshot{state: st, catalog: r.catalog, models: r.models}, nil
		},
		Published: func(s *Snapshot) { r.models.prune(s.state) },
		Closed:    ErrClosed,
		// An upload identical to a version the view holds is answered
		// from the stored state too: another replica may have deleted it.
		RecheckUnchanged: true,
		ReadFailed:       "registry: read store",
	})
	if err != nil {
		return nil, err
	}
	r.w = w
	r.warm(w.State())
	return r, nil
}

// PutGroup writes g under the rules of [Registry] and returns it as stored.
// An empty Auth.Mode is stored as Public.
func (r *Registry) PutGroup(ctx context.Context, g Group) (Group, error) {
	return update(ctx, r, func(tx *Tx) (Group, error) { return tx.PutGroup(g) })
}

// DeleteGroup removes the group name, which must be at revision (or
// [AnyRevision]).
func (r *Registry) DeleteGroup(ctx context.Context, name string, revision uint64) error {
	return r.Update(ctx, func(tx *Tx) error { return tx.DeleteGroup(name, revision) })
}

// PutDeployment writes d under the rules of [Registry] and returns it as
// stored. Its endpoints' processes need not be in the catalog: a
// deployment may name processes another build registers, and resolves to
// [ErrUnavailable] here. The model versions its endpoints name are loaded
// before it is stored, so that its first requests do not wait for them; one
// that cannot be loaded is reported by the requests, as [Snapshot.Resolve]
// says.
func (r *Registry) PutDeployment(ctx context.Context, d Deployment) (Deployment, error) {
	r.LoadModels(d)
	return update(ctx, r, func(tx *Tx) (Deployment, error) { return tx.PutDeployment(d) })
}

// LoadModels loads the model versions d's endpoints name, as the current
// snapshot resolves them, so that a write of d through [Registry.Update]
// does not wait for them under its lock and d's first requests find them
// loaded. One that cannot be loaded is left for the requests to report.
func (r *Registry) LoadModels(d Deployment) {
	st := r.Snapshot().state
	for _, e := range d.Endpoints {
		if ref, err := ParseModelRef(e.Model); e.Model != "" && err == nil {
			if info, err := st.resolveRef(ref); err == nil {
				_, _ = r.models.stored(info)
			}
		}
	}
}

// DeleteDeployment removes the deployment group/path, which must be at
// revision (or [AnyRevision]). Its endpoints resolve to [ErrNotFound] from
// then on.
func (r *Registry) DeleteDeployment(ctx context.Context, group, path string, revision uint64) error {
	return r.Update(ctx, func(tx *Tx) error { return tx.DeleteDeployment(group, path, revision) })
}

// PutQueue writes q under the rules of [Registry] and returns it as stored.
func (r *Registry) PutQueue(ctx context.Context, q Queue) (Queue, error) {
	return update(ctx, r, func(tx *Tx) (Queue, error) { return tx.PutQueue(q) })
}

// DeleteQueue removes the queue name, which must be at revision (or
// [AnyRevision]).
func (r *Registry) DeleteQueue(ctx context.Context, name string, revision uint64) error {
	return r.Update(ctx, func(tx *Tx) error { return tx.DeleteQueue(name, revision) })
}

// Snapshot returns the current snapshot.
func (r *Registry) Snapshot() *Snapshot { return r.w.View() }

// Catalog returns the registry's catalog.
func (r *Registry) Catalog() *process.Catalog { return r.catalog }

// Ping reports whether the store can be read, as a readiness check would
// ask; it publishes what it reads when that is newer.
func (r *Registry) Ping(ctx context.Context) error { return r.w.Refresh(ctx) }

// Close stops the registry: later writes fail with [ErrClosed], and it no
// longer follows a [Notifier] store. Snapshot keeps returning the last
// state. Closing a closed registry does nothing.
func (r *Registry) Close() error {
	r.w.Close()
	return nil
}

// Snapshot is the registry as of one committed state. It is immutable and
// safe for concurrent use.
type Snapshot struct {
	state   *State
	catalog *process.Catalog
	models  *modelCache

	// targets holds the Target of each endpoint that Resolve has found
	// whole, so that resolving it again is a single lookup: the records
	// are the snapshot's and never change, a process, once in the catalog,
	// is never replaced, and a model version, once loaded, is the same
	// model for as long as the snapshot lives (the cache drops it only
	// once a later state has no such version). An endpoint whose model or
	// a challenger's could not be had is resolved again each time, as some
	// causes pass (an artifact that could not be read); the others cost
	// that resolving. Only endpoints that exist are kept, so they are as
	// many as the snapshot has.
	targets sync.Map // endpointKey → *Target
}

// endpointKey names an endpoint.
type endpointKey struct{ group, path, alias string }

// State returns the store state the snapshot was built from.
func (s *Snapshot) State() *State { return s.state }

// Target is what a scoring request resolves to.
type Target struct {
	Group      Group
	Deployment Deployment
	Endpoint   Endpoint
	Queue      Queue
	Process    process.ProcessInfo
	// Challengers are the endpoint's challengers, in its order, each
	// resolved as Process is.
	Challengers []ChallengerTarget
	// Reference is what the drift of the model's inputs and predictions
	// is measured against, and its rows are flagged outliers by: the
	// version's reference; nil for a process, or a version without one.
	Reference *drift.Profile
}

// Resolve finds the endpoint group/path/alias. It fails with [ErrNotFound]
// when a name is invalid or nothing is stored under it, with [ErrDisabled]
// when the deployment is disabled, and with [ErrUnavailable] when the
// endpoint's process is not in the catalog or its model cannot be had (see
// [Snapshot.EndpointProcess]). A model endpoint's Target.Process is the
// model version's, so that scoring treats it as any other process.
//
// The returned records share memory with the snapshot and must not be
// modified.
func (s *Snapshot) Resolve(group, path, alias string) (Target, error) {
	key := endpointKey{group, path, alias}
	if t, ok := s.targets.Load(key); ok {
		return *t.(*Target), nil
	}
	t, err := s.resolve(group, path, alias)
	if err == nil && t.whole() {
		kept := new(Target) // a copy, so that t stays off the heap when not kept
		*kept = t
		s.targets.Store(key, kept)
	}
	return t, err
}

// whole reports whether every challenger of t could be had.
func (t *Target) whole() bool {
	for _, c := range t.Challengers {
		if c.Err != nil {
			return false
		}
	}
	return true
}

// resolve is Resolve without the snapshot's Targets.
func (s *Snapshot) resolve(group, path, alias string) (Target, error) {
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
	p, schema, err := s.endpointProcess(e)
	if err != nil {
		return Target{}, err
	}
	q, ok := s.state.queues[e.QueueName()]
	if !ok { // the Registry's rules prevent it; a store written by another build might not
		return Target{}, errorf(ErrUnavailable, "the endpoint's process is not available in this server")
	}
	return Target{Group: g, Deployment: d, Endpoint: e, Queue: q, Process: endpointColumns(p, e), Challengers: s.challengers(e, schema, p),
		Reference: s.reference(e)}, nil
}
