package registry

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry/process"
)

// cacheKey names a loaded model: its artifact's SHA-256 and its metadata's
// digest, which together decide what loading gives.
type cacheKey struct{ sum, meta string }

// modelCache holds the loaded models of a Registry, so that each version
// is parsed once: by its upload, by New for what endpoints and aliases
// use, or on the first request that needs it. Loads of one key share one
// parse. Entries no version of the published state has are dropped at the
// next publish, except those an upload in progress holds.
type modelCache struct {
	catalog *process.Catalog
	store   ArtifactStore // nil when the Registry's store keeps no artifacts

	entries sync.Map // cacheKey → *cacheEntry

	mu   sync.Mutex // guards pins; held by prune
	pins map[cacheKey]int
}

// cacheEntry is one model, loaded or being loaded: done is closed once
// model and info, or err, are set.
type cacheEntry struct {
	done  chan struct{}
	model *process.LoadedModel
	info  process.ProcessInfo // model.ProcessInfo, its Name set per endpoint
	err   error
}

func newModelCache(catalog *process.Catalog, store Store) *modelCache {
	as, _ := store.(ArtifactStore)
	return &modelCache{catalog: catalog, store: as, pins: map[cacheKey]int{}}
}

// get returns the entry of key, calling load to fill it when no other
// caller has. A load that fails because of the model file (a format error,
// an invalid model, a limit) is kept, as loading again would fail again;
// any other failure (reading the artifact) is not, so the next caller
// tries again.
func (c *modelCache) get(key cacheKey, load func() (*process.LoadedModel, error)) (*cacheEntry, error) {
	if v, ok := c.entries.Load(key); ok {
		e := v.(*cacheEntry)
		<-e.done
		return e, e.err
	}
	e := &cacheEntry{done: make(chan struct{})}
	if v, loaded := c.entries.LoadOrStore(key, e); loaded {
		e = v.(*cacheEntry)
		<-e.done
		return e, e.err
	}
	e.model, e.err = load()
	if e.err == nil {
		e.info = e.model.ProcessInfo("")
	} else if !errors.Is(e.err, process.ErrModelFormat) && !errors.Is(e.err, process.ErrModelInvalid) && !errors.Is(e.err, process.ErrModelLimit) {
		c.entries.CompareAndDelete(key, e)
	}
	close(e.done)
	return e, e.err
}

// stored returns the entry of the version info names, loading it from the
// artifact store when it is not cached.
func (c *modelCache) stored(info versionInfo) (*cacheEntry, error) {
	if v, ok := c.entries.Load(info.key); ok {
		e := v.(*cacheEntry)
		<-e.done
		return e, e.err
	}
	return c.get(info.key, func() (*process.LoadedModel, error) {
		if c.store == nil {
			return nil, errNoArtifacts
		}
		// Not the caller's context: other callers may be waiting for the
		// same load.
		b, err := c.store.Artifact(context.Background(), info.sum)
		if err != nil {
			return nil, fmt.Errorf("registry: read the artifact of model %s: %w", info.process, err)
		}
		if got := sum256(b); got != info.sum {
			return nil, fmt.Errorf("registry: the artifact of model %s has SHA-256 %s, not %s", info.process, got, info.sum)
		}
		return c.catalog.LoadModel(b, info.meta)
	})
}

// pin keeps key's entry through prunes until unpin.
func (c *modelCache) pin(key cacheKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pins[key]++
}

// unpin releases a pin of key. The last one drops key's entry unless the
// state published now (current, read under the lock prune holds, so no
// publish is missed) has a version of it: an upload that was refused or
// failed holds nothing once it is answered, without waiting for the next
// publish to prune it.
func (c *modelCache) unpin(key cacheKey, current func() *State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pins[key]--; c.pins[key] > 0 {
		return
	}
	delete(c.pins, key)
	if !current().hasKey(key) {
		c.entries.Delete(key)
	}
}

// prune drops the entries no version of st has and no upload holds.
func (c *modelCache) prune(st *State) {
	keep := make(map[cacheKey]bool, len(st.keys))
	for _, info := range st.keys {
		keep[info.key] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Range(func(k, _ any) bool {
		key := k.(cacheKey)
		if c.pins[key] == 0 && !keep[key] {
			c.entries.Delete(key)
		}
		return true
	})
}

// hasKey reports whether a model version of st loads as key.
func (st *State) hasKey(key cacheKey) bool {
	for _, info := range st.keys {
		if info.key == key {
			return true
		}
	}
	return false
}

// errNoArtifacts is the failure of a model write over a store that keeps
// no artifacts.
var errNoArtifacts = errors.New("registry: the store keeps no model artifacts (it is not an ArtifactStore)")

// unavailable is a model that cannot be loaded: it matches [ErrUnavailable]
// and the cause, tells the client which model, and keeps the cause for the
// log.
func unavailable(msg string, cause error) error {
	return &problem.Error{Code: ErrUnavailable.Code, Message: msg,
		Text: "registry: " + msg + ": " + cause.Error(), Err: errors.Join(ErrUnavailable, cause)}
}
