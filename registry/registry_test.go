package registry_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/internal/image/imagetest"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

// echo is a process that returns no result columns.
var echo = process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
	return process.NewTable(in.Table.Rows())
})

func TestNewRegistryErrors(t *testing.T) {
	ctx := context.Background()
	store := registry.NewMemStore(registry.StoreOptions{})
	if _, err := registry.New(ctx, nil, store); err == nil {
		t.Error("New without a catalog succeeded")
	}
	if _, err := registry.New(ctx, process.NewCatalog(), nil); err == nil {
		t.Error("New without a store succeeded")
	}
	store.Close()
	if _, err := registry.New(ctx, process.NewCatalog(), store); !errors.Is(err, registry.ErrClosed) {
		t.Errorf("New over a closed store: %v, want ErrClosed", err)
	}
}

// newShared is a backend several stores share, as replicas share a
// database: each replica's handle commits only on the state it was decided
// on, and tells the replicas' subscribers about its commits unless it is
// quiet, as a replica whose notification was lost.
func newShared() *imagetest.Shared[registry.State] {
	return imagetest.NewShared(registry.NewState(time.Now()),
		image.MemConfig[registry.State]{Seq: (*registry.State).Seq, Closed: registry.ErrClosed})
}

func TestRegistryFollowsOtherWriters(t *testing.T) {
	ctx := context.Background()
	cat := process.NewCatalog()
	if err := cat.Register(process.ProcessInfo{Name: "gbm", Process: echo}); err != nil {
		t.Fatal(err)
	}
	b := newShared()
	one, two := b.Handle(), b.Handle()
	r1, err := registry.New(ctx, cat, one)
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := registry.New(ctx, cat, two)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Catalog() != cat {
		t.Error("Catalog is not the one given to New")
	}
	first := r2.Snapshot()

	// A write on one replica reaches the other's scoring.
	must[registry.Deployment](t)(r1.PutDeployment(ctx, deployment("DEFAULT", "cards", registry.Endpoint{Alias: "score", Process: "gbm"})))
	if _, err := r2.Snapshot().Resolve("DEFAULT", "cards", "score"); err != nil {
		t.Errorf("Resolve on the other replica after the write: %v", err)
	}
	if _, err := first.Resolve("DEFAULT", "cards", "score"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("an old snapshot changed: %v", err)
	}

	// A write decided on a stale state is decided again on the stored one:
	// nothing the other replica committed is lost, and a revision the
	// writer read before the other's change conflicts.
	one.Quiet(true)
	q := must[registry.Queue](t)(r1.PutQueue(ctx, registry.Queue{Name: "batch", MaxConcurrent: 1}))
	if _, ok := r2.Snapshot().State().Queue("batch"); ok {
		t.Fatal("the quiet replica's write reached the other replica")
	}
	must[registry.Group](t)(r2.PutGroup(ctx, registry.Group{Name: "fraud"}))
	st := r2.Snapshot().State()
	_, hasQueue := st.Queue("batch")
	_, hasGroup := st.Group("fraud")
	_, hasDeployment := st.Deployment("DEFAULT", "cards")
	if !hasQueue || !hasGroup || !hasDeployment {
		t.Errorf("after a write on a stale state: queue %v, group %v, deployment %v; want all", hasQueue, hasGroup, hasDeployment)
	}
	q.MaxConcurrent = 2
	must[registry.Queue](t)(r1.PutQueue(ctx, q))
	q.MaxConcurrent = 3
	_, err = r2.PutQueue(ctx, q) // at revision 1, which the store no longer holds
	wantConflict(t, err, registry.ConflictError{Kind: "queue", Name: "batch", Want: 1, Current: 2})

	// A write naming what the other replica committed, which this one has
	// not been told of, is decided on the stored state: a client that read
	// a record through one replica may write it through another.
	one.Quiet(true)
	q = must[registry.Queue](t)(r1.PutQueue(ctx, registry.Queue{Name: "batch", MaxConcurrent: 4, Revision: 2}))
	must[registry.Group](t)(r1.PutGroup(ctx, registry.Group{Name: "told-to-none"}))
	q.MaxConcurrent = 5
	if got, err := r2.PutQueue(ctx, q); err != nil || got.Revision != 4 {
		t.Errorf("writing revision %d, read from the other replica: revision %d, %v; want 4", q.Revision, got.Revision, err)
	}
	if _, err := r2.PutGroup(ctx, registry.Group{Name: "told-to-none", Description: "seen", Revision: 1}); err != nil {
		t.Errorf("updating a group only the other replica knew of: %v", err)
	}

	// A closed Registry no longer follows, and no longer writes.
	one.Quiet(false)
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	before := r2.Snapshot()
	must[registry.Deployment](t)(r1.PutDeployment(ctx, deployment("DEFAULT", "other")))
	if r2.Snapshot() != before {
		t.Error("a closed Registry still follows the store")
	}
	_, err = r2.PutGroup(ctx, registry.Group{Name: "late"})
	wantIs(t, err, registry.ErrClosed)
}

// resolveFixture is a registry holding every case Resolve tells apart.
func resolveFixture(t testing.TB) *registry.Registry {
	t.Helper()
	ctx := context.Background()
	cat := process.NewCatalog()
	if err := cat.Register(process.ProcessInfo{Name: "gbm", Description: "gradient boosting", Process: echo}); err != nil {
		t.Fatal(err)
	}
	s, err := registry.New(ctx, cat, registry.NewMemStore(registry.StoreOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	steps := []error{
		func() error { _, err := s.PutGroup(ctx, registry.Group{Name: "fraud"}); return err }(),
		func() error { _, err := s.PutQueue(ctx, registry.Queue{Name: "batch", MaxConcurrent: 1}); return err }(),
		func() error {
			_, err := s.PutDeployment(ctx, deployment("fraud", "cards",
				registry.Endpoint{Alias: "score", Process: "gbm", Queue: "batch"},
				registry.Endpoint{Alias: "plain", Process: "gbm"},
				registry.Endpoint{Alias: "legacy", Process: "retired"}))
			return err
		}(),
		func() error {
			d := deployment("fraud", "off", registry.Endpoint{Alias: "score", Process: "gbm"})
			d.Enabled = false
			_, err := s.PutDeployment(ctx, d)
			return err
		}(),
	}
	if err := errors.Join(steps...); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSnapshotResolve(t *testing.T) {
	snap := resolveFixture(t).Snapshot()
	type target struct{ Group, Path, Alias, Queue, Process string }
	tests := []struct {
		name               string
		group, path, alias string
		want               target
		err                error
	}{
		{"endpoint on its own queue", "fraud", "cards", "score", target{"fraud", "cards", "score", "batch", "gbm"}, nil},
		{"endpoint on the default queue", "fraud", "cards", "plain", target{"fraud", "cards", "plain", "DEFAULT", "gbm"}, nil},
		{"unknown group", "risk", "cards", "score", target{}, registry.ErrNotFound},
		{"unknown path", "fraud", "loans", "score", target{}, registry.ErrNotFound},
		{"unknown alias", "fraud", "cards", "nope", target{}, registry.ErrNotFound},
		{"group in another case", "FRAUD", "cards", "score", target{}, registry.ErrNotFound},
		{"dot dot group", "..", "cards", "score", target{}, registry.ErrNotFound},
		{"dot path", "fraud", ".", "score", target{}, registry.ErrNotFound},
		{"slash in path", "fraud", "a/b", "score", target{}, registry.ErrNotFound},
		{"escaped slash", "fraud", "cards", "%2F", target{}, registry.ErrNotFound},
		{"empty alias", "fraud", "cards", "", target{}, registry.ErrNotFound},
		{"disabled deployment", "fraud", "off", "score", target{}, registry.ErrDisabled},
		{"unknown alias of a disabled deployment", "fraud", "off", "nope", target{}, registry.ErrNotFound},
		{"process not in the catalog", "fraud", "cards", "legacy", target{}, registry.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := snap.Resolve(tt.group, tt.path, tt.alias)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Resolve(%q, %q, %q) error = %v, want %v", tt.group, tt.path, tt.alias, err, tt.err)
			}
			if err != nil {
				return
			}
			tg := target{got.Group.Name, got.Deployment.Path, got.Endpoint.Alias, got.Queue.Name, got.Process.Name}
			if diff := cmp.Diff(tt.want, tg); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
			if got.Process.Process == nil {
				t.Error("target has no process to run")
			}
		})
	}
}

// gbmRegistry returns a registry over a memory store, closed when tb ends,
// and its catalog, which holds the process "gbm".
func gbmRegistry(tb testing.TB) (*registry.Registry, *process.Catalog) {
	tb.Helper()
	cat := process.NewCatalog()
	if err := cat.Register(process.ProcessInfo{Name: "gbm", Process: echo}); err != nil {
		tb.Fatal(err)
	}
	r, err := registry.New(context.Background(), cat, registry.NewMemStore(registry.StoreOptions{}))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r, cat
}

// TestResolveProcessRegisteredLater: an endpoint whose process joins the
// catalog after a snapshot was taken resolves in that snapshot once it has
// joined, and a snapshot gives the same Target however often it is asked.
func TestResolveProcessRegisteredLater(t *testing.T) {
	ctx := context.Background()
	r, cat := gbmRegistry(t)
	if _, err := r.PutDeployment(ctx, deployment(registry.DefaultGroup, "claims",
		registry.Endpoint{Alias: "now", Process: "gbm"}, registry.Endpoint{Alias: "later", Process: "late"})); err != nil {
		t.Fatal(err)
	}
	snap := r.Snapshot()
	if _, err := snap.Resolve(registry.DefaultGroup, "claims", "later"); !errors.Is(err, registry.ErrUnavailable) {
		t.Fatalf("before its process is registered: %v, want ErrUnavailable", err)
	}
	first, err := snap.Resolve(registry.DefaultGroup, "claims", "now")
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Register(process.ProcessInfo{Name: "late", Process: echo}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		tg, err := snap.Resolve(registry.DefaultGroup, "claims", "later")
		if err != nil || tg.Process.Name != "late" || tg.Endpoint.Alias != "later" {
			t.Fatalf("once its process is registered: %q/%q, %v", tg.Endpoint.Alias, tg.Process.Name, err)
		}
		again, err := snap.Resolve(registry.DefaultGroup, "claims", "now")
		if err != nil || again.Deployment.Revision != first.Deployment.Revision || again.Process.Name != "gbm" || again.Queue.Name != first.Queue.Name {
			t.Fatalf("asked again: %+v, %v; want %+v", again, err, first)
		}
	}
}

// TestResolveDuringWrites reads while a writer flips a deployment and
// changes its endpoints: every read sees one whole committed state.
func TestResolveDuringWrites(t *testing.T) {
	ctx := context.Background()
	r := resolveFixture(t)
	const writes = 201 // odd: the deployment ends enabled

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			var lastSeq uint64
			for {
				select {
				case <-stop:
					return
				default:
				}
				snap := r.Snapshot()
				seq := snap.State().Seq()
				if seq < lastSeq {
					t.Errorf("snapshot went back from seq %d to %d", lastSeq, seq)
					return
				}
				lastSeq = seq
				tg, err := snap.Resolve("fraud", "off", "score")
				switch {
				case err == nil:
					if !tg.Deployment.Enabled || tg.Endpoint.Process != "gbm" || tg.Deployment.Description != fmt.Sprint(tg.Deployment.Revision) {
						t.Errorf("inconsistent target: %+v", tg.Deployment)
						return
					}
				case !errors.Is(err, registry.ErrDisabled):
					t.Errorf("Resolve: %v", err)
					return
				}
			}
		})
	}
	for range writes {
		d, _ := r.Snapshot().State().Deployment("fraud", "off")
		d.Enabled = !d.Enabled
		// Description carries the revision the write will store, so readers
		// can tell a torn record from a whole one.
		d.Description = fmt.Sprint(d.Revision + 1)
		if _, err := r.PutDeployment(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if tg, err := r.Snapshot().Resolve("fraud", "off", "score"); err != nil || tg.Deployment.Revision != 1+writes {
		t.Errorf("after the writes: revision %d, %v; want %d", tg.Deployment.Revision, err, 1+writes)
	}
}

// BenchmarkSnapshotResolve measures the lookup every scoring request does,
// in a registry of 1,000 deployments.
func BenchmarkSnapshotResolve(b *testing.B) {
	ctx := context.Background()
	r, _ := gbmRegistry(b)
	for g := range 10 {
		group := fmt.Sprintf("group-%d", g)
		if _, err := r.PutGroup(ctx, registry.Group{Name: group}); err != nil {
			b.Fatal(err)
		}
		for d := range 100 {
			eps := make([]registry.Endpoint, 5)
			for e := range eps {
				eps[e] = registry.Endpoint{Alias: fmt.Sprintf("alias-%d", e), Process: "gbm"}
			}
			if _, err := r.PutDeployment(ctx, deployment(group, fmt.Sprintf("path-%d", d), eps...)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Snapshot().Resolve("group-7", "path-42", "alias-3"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := r.Snapshot().Resolve("group-7", "path-42", "alias-3"); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
