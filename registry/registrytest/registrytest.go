// Package registrytest holds the conformance suites of [registry.Store]
// and [registry.JobStore]: the contracts a [registry.Registry] and a
// [registry.JobRegistry] rely on, which every store, the ones of package
// registry and any other (a database store in a package of its own), must
// keep. A store's test calls [Run], a job store's [RunJobStore]:
//
//	func TestConformance(t *testing.T) {
//		registrytest.Run(t, registrytest.Opener{Open: open, Reopen: reopen})
//	}
//
//	func TestJobStoreConformance(t *testing.T) {
//		registrytest.RunJobStore(t, registrytest.JobOpener{Open: openJobs, Reopen: reopenJobs})
//	}
//
// The rules of a write are not the store's and are not checked here; the
// registry's own tests check them over every store of package registry.
package registrytest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/registry"
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

	t.Run("a new store holds the built-in records", func(t *testing.T) {
		s := open(t)
		want := registry.NewState(epoch)
		if got := load(t, s); dump(got) != dump(want) {
			t.Errorf("new store holds\n%s\nwant\n%s", dump(got), dump(want))
		}
	})

	t.Run("what a registry commits loads back", func(t *testing.T) {
		s := open(t)
		r := newRegistry(t, s)
		writeSome(t, r)
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
		r = newRegistry(t, re)
		g, err := r.PutGroup(ctx, registry.Group{Name: "after", Revision: 0})
		if err != nil {
			t.Fatal(err)
		}
		if got := load(t, re).Seq(); got != want.Seq()+1 || g.Revision != 1 {
			t.Errorf("after one more write: Seq %d, revision %d; want %d, 1", got, g.Revision, want.Seq()+1)
		}
	})

	t.Run("a commit on a stale base fails and changes nothing", func(t *testing.T) {
		s := open(t)
		r := newRegistry(t, s)
		if _, err := r.PutGroup(ctx, registry.Group{Name: "first"}); err != nil {
			t.Fatal(err)
		}
		before := load(t, s)
		// A commit decided on the state before "first", as another writer
		// that had not seen it would send.
		c := otherWriterCommit(t, registry.Group{Name: "second"})
		if err := s.Commit(ctx, c); !errors.Is(err, registry.ErrStale) {
			t.Fatalf("Commit on base %d of a store at %d: %v, want ErrStale", c.Base, before.Seq(), err)
		}
		if got := load(t, s); dump(got) != dump(before) {
			t.Errorf("a refused commit changed the store to\n%s", dump(got))
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

	t.Run("a cancelled context commits nothing", func(t *testing.T) {
		s := open(t)
		before := load(t, s)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Load(cctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Load with a cancelled context: %v, want context.Canceled", err)
		}
		if err := s.Commit(cctx, otherWriterCommit(t, registry.Group{Name: "g"})); !errors.Is(err, context.Canceled) {
			t.Errorf("Commit with a cancelled context: %v, want context.Canceled", err)
		}
		if got := load(t, s); dump(got) != dump(before) {
			t.Errorf("a cancelled commit changed the store to\n%s", dump(got))
		}
	})

	t.Run("a closed store refuses every call", func(t *testing.T) {
		s := open(t)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load(ctx); !errors.Is(err, registry.ErrClosed) {
			t.Errorf("Load after Close: %v, want ErrClosed", err)
		}
		if err := s.Commit(ctx, otherWriterCommit(t, registry.Group{Name: "g"})); !errors.Is(err, registry.ErrClosed) {
			t.Errorf("Commit after Close: %v, want ErrClosed", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

func load(t *testing.T, s registry.Store) *registry.State {
	t.Helper()
	st, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func newRegistry(t *testing.T, s registry.Store) *registry.Registry {
	t.Helper()
	r, err := registry.New(context.Background(), registry.NewCatalog(), s)
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

// otherWriterCommit returns the commit that creates g on a new store: what
// a writer that has seen nothing since the store began would send.
func otherWriterCommit(t *testing.T, g registry.Group) registry.Commit {
	t.Helper()
	c := &capture{Store: registry.NewMemStore(registry.StoreOptions{Now: func() time.Time { return epoch }})}
	r := newRegistry(t, c)
	if _, err := r.PutGroup(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	return c.last
}

// capture is a Store that keeps the last commit it was given.
type capture struct {
	registry.Store
	last registry.Commit
}

func (c *capture) Commit(ctx context.Context, cm registry.Commit) error {
	c.last = cm
	return c.Store.Commit(ctx, cm)
}

// dump is st's records and Seq as JSON, times in UTC to the nanosecond, so
// that two states compare by what they hold.
func dump(st *registry.State) string {
	b, err := json.MarshalIndent(struct {
		Seq         uint64
		Groups      []registry.Group
		Deployments []registry.Deployment
		Queues      []registry.Queue
	}{st.Seq(), st.Groups(), st.Deployments(), st.Queues()}, "", "  ")
	if err != nil {
		panic(err) // records hold nothing JSON cannot encode
	}
	return string(b)
}
