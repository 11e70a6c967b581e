package registry_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/registrytest"
)

// rowStore is a Store and ArtifactStore of another kind than this
// package's: it keeps records as rows and applies each commit's Change, as
// a database store would, instead of the whole State.
type rowStore struct {
	mu          sync.Mutex
	seq         uint64
	groups      map[string]registry.Group
	deployments map[string]registry.Deployment
	queues      map[string]registry.Queue
	models      map[string]registry.Model
	artifacts   map[string][]byte
	closed      bool
}

var (
	_ registry.Store         = (*rowStore)(nil)
	_ registry.ArtifactStore = (*rowStore)(nil)
)

func newRowStore(opts registry.StoreOptions) *rowStore {
	st := registry.NewState(opts.Now())
	s := &rowStore{groups: map[string]registry.Group{}, deployments: map[string]registry.Deployment{},
		queues: map[string]registry.Queue{}, models: map[string]registry.Model{}, artifacts: map[string][]byte{}}
	for _, g := range st.Groups() {
		s.groups[g.Name] = g
	}
	for _, q := range st.Queues() {
		s.queues[q.Name] = q
	}
	return s
}

func (s *rowStore) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed {
		return registry.ErrClosed
	}
	return nil
}

func (s *rowStore) Load(ctx context.Context) (*registry.State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	return registry.BuildStateWithModels(s.seq, values(s.groups), values(s.deployments), values(s.queues), values(s.models))
}

func (s *rowStore) Commit(ctx context.Context, base uint64, next *registry.State) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	if base != s.seq || next.Seq() != base+1 {
		return registry.ErrStale
	}
	ch, _ := next.Change()
	switch {
	case ch.Group != nil:
		apply(s.groups, ch.Group.Name, *ch.Group, ch.Delete)
	case ch.Deployment != nil:
		apply(s.deployments, ch.Deployment.Group+"/"+ch.Deployment.Path, *ch.Deployment, ch.Delete)
	case ch.Queue != nil:
		apply(s.queues, ch.Queue.Name, *ch.Queue, ch.Delete)
	case ch.Model != nil:
		if !ch.Delete {
			for _, v := range ch.Model.Versions {
				if _, ok := s.artifacts[v.SHA256]; !ok {
					return registry.ErrStale
				}
			}
		}
		apply(s.models, ch.Model.Name, *ch.Model, ch.Delete)
	default:
		return fmt.Errorf("rowStore: a change of nothing")
	}
	s.seq++
	return nil
}

func apply[V any](m map[string]V, key string, v V, del bool) {
	if del {
		delete(m, key)
	} else {
		m[key] = v
	}
}

func values[V any](m map[string]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func (s *rowStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

func (s *rowStore) PutArtifact(ctx context.Context, sum string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	h := sha256.Sum256(data)
	if hex.EncodeToString(h[:]) != sum {
		return fmt.Errorf("rowStore: %s is not the artifact's SHA-256", sum)
	}
	s.artifacts[sum] = bytes.Clone(data)
	return nil
}

func (s *rowStore) Artifact(ctx context.Context, sum string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	b, ok := s.artifacts[sum]
	if !ok {
		return nil, fmt.Errorf("rowStore: artifact %s: %w", sum, registry.ErrNotFound)
	}
	return bytes.Clone(b), nil
}

func (s *rowStore) DeleteArtifact(ctx context.Context, sum string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	for _, m := range s.models {
		for _, v := range m.Versions {
			if v.SHA256 == sum {
				return nil
			}
		}
	}
	delete(s.artifacts, sum)
	return nil
}

// TestRowStoreConformance runs the suite on a store of another design
// than this package's, which only Change tells what to write: the suite
// asks of a store only what the Store and ArtifactStore interfaces say.
func TestRowStoreConformance(t *testing.T) {
	registrytest.Run(t, registrytest.Opener{Open: func(t *testing.T, opts registry.StoreOptions) registry.Store {
		s := newRowStore(opts)
		t.Cleanup(func() { s.Close() })
		return s
	}})
}
