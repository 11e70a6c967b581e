package registry

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/scorehub/scorehub/internal/image"
)

// Store keeps the records of a [Registry]: it loads them and commits one
// change at a time. It applies no rule of its own: the Registry checks every
// rule of a write (revisions, references, built-in records, records in use)
// on its current [State] before it asks the store to commit, so a store is
// only persistence, and one conformance suite (package registrytest, over
// the suite of every state image) proves any implementation.
//
// It is the store of every state image (records, accounts, signing keys:
// the protocol of package internal/image) for the records, with Close. A
// commit is conditional, so that a store several writers share (several
// server replicas on one database) stays consistent without trusting any
// writer's view: Commit names the Seq of the State the write's rules were
// checked on (base), and next, at base+1, knows the one record it changes
// ([State.Change]) with that record's revision before the change. A store
// that keeps one image of the state (as [MemStore] and [FileStore] do)
// compares base with the Seq it holds and keeps next; a database store can
// do the same in the transaction that writes the record (UPDATE of a
// sequence row WHERE seq = base), which also keeps rules that span records
// (a deployment's group exists, a queue in use is not deleted) true under
// concurrent writers, or, when the schema enforces those with constraints,
// make the record write alone conditional (UPDATE … WHERE revision =
// Change.Revision, INSERT when it is 0). Either way a commit whose
// condition no longer holds fails with [ErrStale] and changes nothing; the
// Registry then loads the store again and decides the write afresh.
//
// Implementations must be safe for concurrent use. Commit returns only once
// the change is committed (durable, for a durable store); a failed Commit
// leaves the stored state as it was, or, where a failure after the point of
// no return cannot be ruled out, as it would be after the commit.
type Store interface {
	// Load returns the state as last committed; Commit makes next the
	// stored state if the stored state's Seq is still base, and fails
	// with [ErrStale] otherwise.
	image.Store[State]

	// Close releases the store. Later calls fail with [ErrClosed].
	Close() error
}

// Notifier is a [Store] that other writers share. A [Registry] over a
// Notifier subscribes to it and publishes every newer state it is given, so
// that what other writers commit (another replica's management write)
// reaches this process's scoring without waiting for a write of its own.
// The Registry publishes its own writes itself, before they return, and
// needs no notification for them.
type Notifier interface {
	Store
	// Subscribe calls fn with the stored state after changes committed by
	// other writers. fn must be quick and must not call the store. A state
	// no newer than the last one published is ignored, so a store may also
	// report its own writers' commits, or report a change twice. cancel
	// stops the calls.
	Subscribe(fn func(*State)) (cancel func())
}

// Change is the one record the write that made a [State] stores or
// removes ([State.Change]). Exactly one of Group, Deployment, Queue and
// Model is set: the record as the commit stores it or, when Delete is set,
// as it was stored before its removal. A model's versions and aliases are
// part of its record: adding or deleting one stores the whole Model.
type Change struct {
	Group      *Group
	Deployment *Deployment
	Queue      *Queue
	Model      *Model
	// Delete reports that the record is removed.
	Delete bool
	// Revision is the record's stored revision before the commit; 0 when
	// the commit creates it.
	Revision uint64
}

// ArtifactStore is a [Store] that also keeps model artifacts, the files
// of model versions, by their SHA-256 in lower-case hex. A [Registry]
// needs one to take model versions.
//
// The Registry writes an artifact with PutArtifact before the commit that
// adds a version referencing it, reads it back to load a model this
// process has not loaded (after a restart, or one another replica
// uploaded), and deletes it with DeleteArtifact after the commit that
// dropped the last version referencing it. So that a commit never
// references an artifact another writer deleted, an implementation's
// Commit fails with [ErrStale] when the change adds a version whose
// artifact it does not hold (the Registry then writes it again), and
// DeleteArtifact keeps an artifact that a version in the stored state
// references.
//
// Implementations must be safe for concurrent use.
type ArtifactStore interface {
	// PutArtifact stores data as the artifact sum, durably for a durable
	// store, before it returns. It fails when sum is not data's SHA-256.
	// Storing an artifact already stored is not an error.
	PutArtifact(ctx context.Context, sum string, data []byte) error
	// Artifact returns the artifact sum; [ErrNotFound] when there is none.
	// The caller may modify the result.
	Artifact(ctx context.Context, sum string) ([]byte, error)
	// DeleteArtifact removes the artifact sum unless a version of the
	// stored state references it. Deleting an artifact not stored is not
	// an error.
	DeleteArtifact(ctx context.Context, sum string) error
}

// StoreOptions configure the stores of this package.
type StoreOptions struct {
	// Now returns the time stamped on records: the built-in records of a
	// new store, the records a [Registry] over the store writes, and the
	// jobs a jobs.Registry over a job store writes. Nil means time.Now.
	Now func() time.Time
}

func (o StoreOptions) now() time.Time {
	if o.Now != nil {
		return o.Now().UTC()
	}
	return time.Now().UTC()
}

// imageConfig is what the stores of this package keep the state with:
// when check is set (the store keeps artifacts), a commit adding a
// version whose artifact is not stored is refused with ErrStale, as
// another writer may have deleted the artifact between this writer's
// PutArtifact and the commit.
func imageConfig(hasArtifact func(sum string) bool) image.MemConfig[State] {
	return image.MemConfig[State]{Seq: (*State).Seq, Closed: ErrClosed,
		Check: func(cur, next *State) error {
			c, _ := next.Change()
			if c.Model == nil || c.Delete {
				return nil
			}
			for _, v := range c.Model.Versions {
				if !cur.referenced(v.SHA256) && !hasArtifact(v.SHA256) {
					return ErrStale
				}
			}
			return nil
		}}
}

// records is what MemStore and FileStore share: the image of the State,
// and the clock of their StoreOptions.
type records struct {
	img interface {
		image.Store[State]
		Locked(ctx context.Context, fn func(cur *State) error) error
		Close() error
	}
	opts StoreOptions
}

// Load implements [Store].
func (r *records) Load(ctx context.Context) (*State, error) { return r.img.Load(ctx) }

// Commit implements [Store].
func (r *records) Commit(ctx context.Context, base uint64, next *State) error {
	return r.img.Commit(ctx, base, next)
}

// Close implements [Store]. It waits for a commit in progress; a
// FileStore then releases its directory for the next [OpenFileStore].
// Closing a closed store does nothing.
func (r *records) Close() error { return r.img.Close() }

// now is the store's clock, which a Registry over it stamps records with.
func (r *records) now() time.Time { return r.opts.now() }

// artifactCall fails an artifact call with a cancelled context or on a
// closed store.
func (r *records) artifactCall(ctx context.Context) error {
	return r.img.Locked(ctx, func(*State) error { return nil })
}

// MemStore is a [Store] and an [ArtifactStore] that keeps records and
// artifacts in memory only. It is safe for concurrent use.
type MemStore struct {
	records
	amu       sync.Mutex // guards artifacts
	artifacts map[string][]byte
}

var (
	_ Store         = (*MemStore)(nil)
	_ ArtifactStore = (*MemStore)(nil)
)

// NewMemStore returns a store holding the built-in DEFAULT group and queue.
func NewMemStore(opts StoreOptions) *MemStore {
	s := &MemStore{records: records{opts: opts}, artifacts: map[string][]byte{}}
	s.img = image.NewMem(NewState(opts.now()), imageConfig(s.hasArtifact))
	return s
}

func (s *MemStore) hasArtifact(sum string) bool {
	s.amu.Lock()
	defer s.amu.Unlock()
	_, ok := s.artifacts[sum]
	return ok
}

// PutArtifact implements [ArtifactStore]; the store keeps its own copy.
func (s *MemStore) PutArtifact(ctx context.Context, sum string, data []byte) error {
	if err := s.artifactCall(ctx); err != nil {
		return err
	}
	if err := checkArtifactSum(sum, data); err != nil {
		return err
	}
	s.amu.Lock()
	defer s.amu.Unlock()
	if _, ok := s.artifacts[sum]; !ok {
		s.artifacts[sum] = bytes.Clone(data)
	}
	return nil
}

// Artifact implements [ArtifactStore].
func (s *MemStore) Artifact(ctx context.Context, sum string) ([]byte, error) {
	if err := s.artifactCall(ctx); err != nil {
		return nil, err
	}
	s.amu.Lock()
	defer s.amu.Unlock()
	b, ok := s.artifacts[sum]
	if !ok {
		return nil, errorf(ErrNotFound, "no model artifact has SHA-256 %s", sum)
	}
	return bytes.Clone(b), nil
}

// DeleteArtifact implements [ArtifactStore].
func (s *MemStore) DeleteArtifact(ctx context.Context, sum string) error {
	// Under the commit lock, which the commit's check of artifacts takes
	// too: no commit can add a reference between the check and the
	// removal.
	return s.img.Locked(ctx, func(cur *State) error {
		if !cur.referenced(sum) {
			s.amu.Lock()
			defer s.amu.Unlock()
			delete(s.artifacts, sum)
		}
		return nil
	})
}

// checkArtifactSum fails when sum is not data's SHA-256.
func checkArtifactSum(sum string, data []byte) error {
	if got := sum256(data); got != sum {
		return fmt.Errorf("registry: artifact named %q has SHA-256 %s", sum, got)
	}
	return nil
}
