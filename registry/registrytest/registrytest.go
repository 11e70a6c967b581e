// Package registrytest holds the conformance suites of [registry.Store]
// and [jobs.Store]: the contracts a [registry.Registry] and a
// [jobs.Registry] rely on, which every store, the ones of package
// registry and any other (a database store in a package of its own), must
// keep. [Run] is the suite every store of a state image passes (package
// internal/image/imagetest), given the records, and what a Registry makes
// of a store besides. A store's test calls [Run], a job store's
// [RunJobStore]:
//
//	func TestConformance(t *testing.T) {
//		registrytest.Run(t, registrytest.Opener{Open: open, Reopen: reopen})
//	}
//
//	func TestJobStoreConformance(t *testing.T) {
//		registrytest.RunJobStore(t, registrytest.JobOpener{Open: openJobs, Reopen: reopenJobs})
//	}
//
// A store that is also a [registry.ArtifactStore] keeps models; the suite
// then checks its artifacts too, and a store that is none must refuse
// model writes. The rules of a write are not the store's and are not
// checked here; the registry's own tests check them over every store of
// package registry.
//
// [LinearFormat] is a model format for tests of anything built on models.
package registrytest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/internal/image/imagetest"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

// Opener makes the stores the suite runs on.
type Opener struct {
	// Open returns a new store holding nothing yet but the built-in
	// records, stamped with opts.Now. Closing it at the end of the test
	// (t.Cleanup) is Open's to arrange.
	Open func(t *testing.T, opts registry.StoreOptions) registry.Store
	// Reopen, for a durable store, closes s and returns a store over what
	// s kept, as the next start of a process would open it. Nil for a
	// store that keeps nothing past Close.
	Reopen func(t *testing.T, s registry.Store) registry.Store
}

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)

// Run runs the suite on stores o opens.
func Run(t *testing.T, o Opener) {
	ctx := context.Background()
	open := func(t *testing.T) registry.Store {
		return o.Open(t, registry.StoreOptions{Now: func() time.Time { return epoch }})
	}
	k := kit(open)
	if o.Reopen != nil {
		k.Reopen = func(t *testing.T, s image.Store[registry.State]) image.Store[registry.State] {
			return o.Reopen(t, s.(registry.Store))
		}
	}
	imagetest.Run(t, k)

	t.Run("what a registry commits loads back", func(t *testing.T) {
		s := open(t)
		r := newRegistry(t, s)
		writeSome(t, r)
		if _, ok := s.(registry.ArtifactStore); ok {
			writeModels(t, r)
		}
		want := r.Snapshot().State()
		if got := load(t, s); dump(got) != dump(want) {
			t.Errorf("store holds\n%s\nthe registry published\n%s", dump(got), dump(want))
		}
		if o.Reopen == nil {
			return
		}
		r.Close()
		re := o.Reopen(t, s)
		if got := load(t, re); dump(got) != dump(want) {
			t.Errorf("reopened store holds\n%s\nwant\n%s", dump(got), dump(want))
		}
		// Seq and revisions carry on from where they were.
		checkArtifacts(t, re, want)
		r = newRegistry(t, re)
		if _, ok := re.(registry.ArtifactStore); ok {
			// The reopened store's models load and score.
			if _, err := r.Snapshot().Resolve("fraud", "churn", "prod"); err != nil {
				t.Errorf("a model endpoint after reopening: %v", err)
			}
		}
		g, err := r.PutGroup(ctx, registry.Group{Name: "after", Revision: 0})
		if err != nil {
			t.Fatal(err)
		}
		if got := load(t, re).Seq(); got != want.Seq()+1 || g.Revision != 1 {
			t.Errorf("after one more write: Seq %d, revision %d; want %d, 1", got, g.Revision, want.Seq()+1)
		}
	})

	t.Run("registries sharing a store lose no write", func(t *testing.T) {
		s := open(t)
		const writers, each = 4, 8
		regs := make([]*registry.Registry, writers)
		for i := range regs {
			regs[i] = newRegistry(t, s)
		}
		var wg sync.WaitGroup
		for i, r := range regs {
			wg.Go(func() {
				for n := range each {
					q := registry.Queue{Name: fmt.Sprintf("q%d-%d", i, n), MaxConcurrent: 1}
					if _, err := r.PutQueue(ctx, q); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		st := load(t, s)
		if got := len(st.Queues()); got != 1+writers*each || st.Seq() != writers*each {
			t.Errorf("%d queues at Seq %d after %d writes; want %d at %d", got, st.Seq(), writers*each, 1+writers*each, writers*each)
		}
	})

	t.Run("artifacts are kept by their SHA-256", func(t *testing.T) {
		as := artifactStore(t, open(t))
		a, b := []byte("artifact a"), []byte("artifact b")
		for _, art := range [][]byte{a, a, b} {
			if err := as.PutArtifact(ctx, sum(art), art); err != nil {
				t.Fatalf("PutArtifact: %v", err)
			}
		}
		got, err := as.Artifact(ctx, sum(a))
		if err != nil || string(got) != string(a) {
			t.Fatalf("Artifact = %q, %v; want %q", got, err, a)
		}
		got[0] = 'X' // the caller's to change
		if again, _ := as.Artifact(ctx, sum(a)); string(again) != string(a) {
			t.Errorf("changing a read artifact changed the stored one to %q", again)
		}
		if err := as.PutArtifact(ctx, sum(a), b); err == nil {
			t.Error("PutArtifact of content under another content's SHA-256 succeeded")
		}
		if err := as.DeleteArtifact(ctx, sum(b)); err != nil {
			t.Fatal(err)
		}
		if _, err := as.Artifact(ctx, sum(b)); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("Artifact after DeleteArtifact: %v, want ErrNotFound", err)
		}
		if err := as.DeleteArtifact(ctx, sum(b)); err != nil {
			t.Errorf("deleting a deleted artifact: %v", err)
		}
		if _, err := as.Artifact(ctx, sum([]byte("never stored"))); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("Artifact never stored: %v, want ErrNotFound", err)
		}
	})

	t.Run("an artifact a version uses is not deleted", func(t *testing.T) {
		s := open(t)
		as := artifactStore(t, s)
		r := newRegistry(t, s)
		if _, _, err := r.AddModelVersion(ctx, "churn", churn, process.ModelMetadata{}, nil); err != nil {
			t.Fatal(err)
		}
		if err := as.DeleteArtifact(ctx, sum(churn)); err != nil {
			t.Fatal(err)
		}
		if got, err := as.Artifact(ctx, sum(churn)); err != nil || string(got) != string(churn) {
			t.Errorf("artifact of a stored version after DeleteArtifact: %q, %v", got, err)
		}
	})

	t.Run("a commit adding a version without its artifact is stale", func(t *testing.T) {
		s := open(t)
		artifactStore(t, s)
		before := load(t, s)
		// The commit of an upload as another writer decided it, whose
		// artifact this store never received (or another writer deleted).
		mem := registry.NewMemStore(registry.StoreOptions{Now: func() time.Time { return epoch }})
		c := &capture{Store: mem}
		if _, _, err := newRegistry(t, withArtifacts{c, mem}).AddModelVersion(ctx, "churn", churn, process.ModelMetadata{}, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(ctx, before.Seq(), c.last); !errors.Is(err, registry.ErrStale) {
			t.Fatalf("Commit of a version without its artifact: %v, want ErrStale", err)
		}
		if got := load(t, s); dump(got) != dump(before) {
			t.Errorf("a refused commit changed the store to\n%s", dump(got))
		}
	})

	t.Run("a closed store refuses artifact calls", func(t *testing.T) {
		s := open(t)
		as := artifactStore(t, s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := as.PutArtifact(ctx, sum(churn), churn); !errors.Is(err, registry.ErrClosed) {
			t.Errorf("PutArtifact after Close: %v, want ErrClosed", err)
		}
		if _, err := as.Artifact(ctx, sum(churn)); !errors.Is(err, registry.ErrClosed) {
			t.Errorf("Artifact after Close: %v, want ErrClosed", err)
		}
		if err := as.DeleteArtifact(ctx, sum(churn)); !errors.Is(err, registry.ErrClosed) {
			t.Errorf("DeleteArtifact after Close: %v, want ErrClosed", err)
		}
	})
}

// RunShared runs the suite of a store that several replicas share, a
// [registry.Notifier], on two handles of one new store that open returns
// (two connection pools, as two replicas have), and arranges the closing
// of: what one commits reaches the other's subscribers, in order, within
// imagetest.Propagation, and makes the other's commit on the same base
// stale.
func RunShared(t *testing.T, open func(t *testing.T) (a, b registry.Notifier)) {
	k := kit(func(t *testing.T) registry.Store { a, _ := open(t); return a })
	imagetest.RunShared(t, k, func(t *testing.T) (a, b image.Notifier[registry.State]) { return open(t) })
}

// kit is the records' part of the suite of every state image, on the
// stores open returns.
func kit(open func(t *testing.T) registry.Store) imagetest.Kit[registry.State] {
	return imagetest.Kit[registry.State]{
		Open: func(t *testing.T) image.Store[registry.State] { return open(t) },
		New:  func() *registry.State { return registry.NewState(epoch) },
		Seq:  (*registry.State).Seq,
		Next: func(t *testing.T, base *registry.State, i int) *registry.State {
			return decided(t, base, func(r *registry.Registry) error {
				_, err := r.PutGroup(context.Background(), registry.Group{Name: fmt.Sprintf("g%d", i)})
				return err
			})
		},
		Dump:   records,
		Closed: registry.ErrClosed,
	}
}

func load(t *testing.T, s registry.Store) *registry.State {
	t.Helper()
	st, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// artifactStore returns s as an ArtifactStore, skipping the test for a
// store that keeps no models.
func artifactStore(t *testing.T, s registry.Store) registry.ArtifactStore {
	t.Helper()
	as, ok := s.(registry.ArtifactStore)
	if !ok {
		t.Skipf("%T keeps no model artifacts", s)
	}
	return as
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

var (
	churn      = LinearArtifact(0.5, []string{"age", "income"}, []float64{0.25, -1})
	churnOther = LinearArtifact(-0.5, []string{"age"}, []float64{2})
)

// newRegistry returns a Registry over s whose catalog reads [LinearFormat].
func newRegistry(t *testing.T, s registry.Store) *registry.Registry {
	t.Helper()
	cat := process.NewCatalog()
	if err := cat.RegisterFormat(&LinearFormat{}); err != nil {
		t.Fatal(err)
	}
	r, err := registry.New(context.Background(), cat, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// writeSome commits a write of every kind through r.
func writeSome(t *testing.T, r *registry.Registry) {
	t.Helper()
	ctx := context.Background()
	steps := []func() error{
		func() error {
			_, err := r.PutGroup(ctx, registry.Group{Name: "fraud", Description: "Card fraud",
				Auth: registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"analysts"}}})
			return err
		},
		func() error {
			_, err := r.PutQueue(ctx, registry.Queue{Name: "batch", MaxConcurrent: 2, MaxWaiting: 5})
			return err
		},
		func() error {
			_, err := r.PutDeployment(ctx, registry.Deployment{Group: "fraud", Path: "cards", Enabled: true,
				Endpoints: []registry.Endpoint{
					{Alias: "score", Process: "gbm", Queue: "batch", Timeout: 1500 * time.Millisecond, Description: "GBM"},
					{Alias: "plain", Process: "gbm"},
				}})
			return err
		},
		func() error {
			_, err := r.PutDeployment(ctx, registry.Deployment{Group: "fraud", Path: "cards", Revision: registry.AnyRevision})
			return err
		},
		func() error { _, err := r.PutQueue(ctx, registry.Queue{Name: "tmp", MaxConcurrent: 1}); return err },
		func() error { return r.DeleteQueue(ctx, "tmp", 1) },
		func() error { _, err := r.PutGroup(ctx, registry.Group{Name: "gone"}); return err },
		func() error { return r.DeleteGroup(ctx, "gone", registry.AnyRevision) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
}

// writeModels commits a model write of every kind through r, after
// writeSome.
func writeModels(t *testing.T, r *registry.Registry) {
	t.Helper()
	ctx := context.Background()
	steps := []func() error{
		func() error {
			_, _, err := r.AddModelVersion(ctx, "churn", churn, process.ModelMetadata{Label: "churn", Classes: []string{"no", "yes"}}, nil)
			return err
		},
		func() error {
			_, _, err := r.AddModelVersion(ctx, "churn", churnOther, process.ModelMetadata{Description: "gone soon"}, nil)
			return err
		},
		func() error {
			_, _, err := r.AddModelVersion(ctx, "churn", churnOther, process.ModelMetadata{Features: []string{"tenure"}}, nil)
			return err
		},
		func() error {
			_, err := r.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "production", Version: 1})
			return err
		},
		func() error {
			_, err := r.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "staging", Version: 3})
			return err
		},
		func() error { return r.DeleteModelAlias(ctx, "churn", "staging", 1) },
		func() error { return r.DeleteModelVersion(ctx, "churn", 2) },
		func() error {
			_, _, err := r.AddModelVersion(ctx, "dropped", churn, process.ModelMetadata{}, nil)
			return err
		},
		func() error { return r.DeleteModel(ctx, "dropped", registry.AnyRevision) },
		func() error {
			_, err := r.PutDeployment(ctx, registry.Deployment{Group: "fraud", Path: "churn", Enabled: true,
				Endpoints: []registry.Endpoint{{Alias: "prod", Model: "churn@production"}, {Alias: "v3", Model: "churn@3", Queue: "batch"}}})
			return err
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("model write %d: %v", i, err)
		}
	}
}

// checkArtifacts checks s holds the artifact of every version of st,
// intact.
func checkArtifacts(t *testing.T, s registry.Store, st *registry.State) {
	t.Helper()
	as, ok := s.(registry.ArtifactStore)
	if !ok {
		return
	}
	for _, m := range st.Models() {
		for _, v := range m.Versions {
			b, err := as.Artifact(context.Background(), v.SHA256)
			if err != nil || sum(b) != v.SHA256 {
				t.Errorf("artifact of %s version %d: %v", m.Name, v.Version, err)
			}
		}
	}
}

// decided returns the state write, through a Registry, makes of base:
// what another writer that holds base would commit.
func decided(t *testing.T, base *registry.State, write func(r *registry.Registry) error) *registry.State {
	t.Helper()
	c := &capture{Store: &fixed{base}}
	if err := write(newRegistry(t, c)); err != nil {
		t.Fatal(err)
	}
	return c.last
}

// fixed is a Store that holds one state and takes every commit on it
// without keeping it.
type fixed struct{ st *registry.State }

func (f *fixed) Load(context.Context) (*registry.State, error)         { return f.st, nil }
func (f *fixed) Commit(context.Context, uint64, *registry.State) error { return nil }
func (f *fixed) Close() error                                          { return nil }

// capture is a Store that keeps the last state it was given to commit.
type capture struct {
	registry.Store
	last *registry.State
}

func (c *capture) Commit(ctx context.Context, base uint64, next *registry.State) error {
	c.last = next
	return c.Store.Commit(ctx, base, next)
}

// withArtifacts is a capture that keeps artifacts.
type withArtifacts struct {
	*capture
	registry.ArtifactStore
}

// dump is st's records and Seq as JSON, times in UTC to the nanosecond, so
// that two states compare by what they hold.
func dump(st *registry.State) string {
	return fmt.Sprintf("seq %d: %s", st.Seq(), records(st))
}

// records is st's records as JSON, without its Seq.
func records(st *registry.State) string {
	b, err := json.MarshalIndent(struct {
		Groups      []registry.Group
		Deployments []registry.Deployment
		Queues      []registry.Queue
		Models      []registry.Model
	}{st.Groups(), st.Deployments(), st.Queues(), st.Models()}, "", "  ")
	if err != nil {
		panic(err) // records hold nothing JSON cannot encode
	}
	return string(b)
}
