package registry_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
)

func newClock() *testutil.Clock {
	return testutil.NewClock(time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC))
}

type storeKind struct {
	name string
	// open returns a new store and, for a durable one, its directory.
	open func(t *testing.T, opts registry.StoreOptions) (registry.Store, string)
}

func storeKinds() []storeKind {
	return []storeKind{
		{"MemStore", func(t *testing.T, opts registry.StoreOptions) (registry.Store, string) {
			s := registry.NewMemStore(opts)
			t.Cleanup(func() { s.Close() })
			return s, ""
		}},
		{"FileStore", func(t *testing.T, opts registry.StoreOptions) (registry.Store, string) {
			dir := t.TempDir()
			return openFileStore(t, dir, opts), dir
		}},
	}
}

func openFileStore(t *testing.T, dir string, opts registry.StoreOptions) *registry.FileStore {
	t.Helper()
	s, err := registry.OpenFileStore(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// writer is what the rules tests drive: a Registry, the one write API,
// over a store of one kind. Its State is what the store loads, which must
// be what the Registry published.
type writer struct {
	*registry.Registry
	store registry.Store
}

// newWriter returns a Registry over s, which stamps records with the clock
// of s's StoreOptions.
func newWriter(t testing.TB, s registry.Store) writer {
	t.Helper()
	r, err := registry.New(context.Background(), process.NewCatalog(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return writer{r, s}
}

// State loads the store's state.
func (w writer) State(ctx context.Context) (*registry.State, error) { return w.store.Load(ctx) }

// Close closes the store under the Registry.
func (w writer) Close() error { return w.store.Close() }

// forEachStore runs fn against a Registry over a new store of every kind.
// Afterwards a FileStore is reopened and must hold exactly what it held in
// memory: every acknowledged write is on disk.
func forEachStore(t *testing.T, fn func(t *testing.T, s writer, clk *testutil.Clock)) {
	for _, k := range storeKinds() {
		t.Run(k.name, func(t *testing.T) {
			clk := newClock()
			opts := registry.StoreOptions{Now: clk.Now}
			store, dir := k.open(t, opts)
			s := newWriter(t, store)
			fn(t, s, clk)
			if dir == "" || t.Failed() {
				return
			}
			st, err := s.State(context.Background())
			if errors.Is(err, registry.ErrClosed) {
				return
			}
			if err := store.Close(); err != nil {
				t.Fatal(err)
			}
			re := openFileStore(t, dir, opts)
			got, err := re.Load(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(dump(st), dump(got)); diff != "" {
				t.Errorf("reopened store differs from the one closed (-closed +reopened):\n%s", diff)
			}
		})
	}
}

type stateDump struct {
	Seq         uint64
	Groups      []registry.Group
	Deployments []registry.Deployment
	Queues      []registry.Queue
	Models      []registry.Model
}

func dump(st *registry.State) stateDump {
	return stateDump{st.Seq(), st.Groups(), st.Deployments(), st.Queues(), st.Models()}
}

// mustState returns the state s, a writer or a Store, holds.
func mustState(t *testing.T, s any) *registry.State {
	t.Helper()
	var (
		st  *registry.State
		err error
	)
	switch s := s.(type) {
	case writer:
		st, err = s.State(context.Background())
		if err == nil && s.Snapshot().State().Seq() != st.Seq() {
			t.Errorf("the registry published seq %d, the store holds %d", s.Snapshot().State().Seq(), st.Seq())
		}
	case registry.Store:
		st, err = s.Load(context.Background())
	default:
		t.Fatalf("mustState of a %T", s)
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func wantConflict(t *testing.T, err error, want registry.ConflictError) {
	t.Helper()
	var ce *registry.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, registry.ErrConflict) {
		t.Fatalf("error = %v, want a *ConflictError matching ErrConflict", err)
	}
	if diff := cmp.Diff(want, *ce); diff != "" {
		t.Errorf("conflict (-want +got):\n%s", diff)
	}
}

func wantInvalid(t *testing.T, err error, pointer string) {
	t.Helper()
	var ie *registry.InvalidError
	if !errors.As(err, &ie) || !errors.Is(err, registry.ErrInvalid) {
		t.Fatalf("error = %v, want an *InvalidError matching ErrInvalid", err)
	}
	if ie.Pointer != pointer {
		t.Errorf("pointer = %q, want %q (%v)", ie.Pointer, pointer, err)
	}
}

func wantIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

func deployment(group, path string, eps ...registry.Endpoint) registry.Deployment {
	return registry.Deployment{Group: group, Path: path, Enabled: true, Endpoints: eps}
}

func TestStoreRules(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, s writer, clk *testutil.Clock)
	}{
		{"a new store holds the built-in group and queue", func(t *testing.T, s writer, clk *testutil.Clock) {
			now := clk.Now()
			want := stateDump{
				Groups: []registry.Group{{
					Name: "DEFAULT", Description: "The default web API group", Auth: registry.AuthPolicy{Mode: registry.Public},
					Revision: 1, CreatedAt: now, UpdatedAt: now,
				}},
				Deployments: []registry.Deployment{},
				Queues: []registry.Queue{{
					Name: "DEFAULT", MaxConcurrent: registry.DefaultMaxConcurrent, MaxWaiting: registry.DefaultMaxWaiting,
					Revision: 1, CreatedAt: now, UpdatedAt: now,
				}},
				Models: []registry.Model{},
			}
			if diff := cmp.Diff(want, dump(mustState(t, s))); diff != "" {
				t.Errorf("new store (-want +got):\n%s", diff)
			}
		}},

		{"create stores revision 1 stamped now", func(t *testing.T, s writer, clk *testutil.Clock) {
			now := clk.Now()
			g := must[registry.Group](t)(s.PutGroup(ctx, registry.Group{Name: "fraud", Description: "Fraud models"}))
			q := must[registry.Queue](t)(s.PutQueue(ctx, registry.Queue{Name: "batch", MaxConcurrent: 2, MaxWaiting: 5}))
			d := must[registry.Deployment](t)(s.PutDeployment(ctx, deployment("fraud", "cards", registry.Endpoint{Alias: "score", Process: "p", Queue: "batch", Timeout: time.Second})))

			wantG := registry.Group{Name: "fraud", Description: "Fraud models", Auth: registry.AuthPolicy{Mode: registry.Public}, Revision: 1, CreatedAt: now, UpdatedAt: now}
			wantQ := registry.Queue{Name: "batch", MaxConcurrent: 2, MaxWaiting: 5, Revision: 1, CreatedAt: now, UpdatedAt: now}
			wantD := registry.Deployment{Group: "fraud", Path: "cards", Enabled: true,
				Endpoints: []registry.Endpoint{{Alias: "score", Process: "p", Queue: "batch", Timeout: time.Second}},
				Revision:  1, CreatedAt: now, UpdatedAt: now}
			if diff := cmp.Diff(wantG, g); diff != "" {
				t.Errorf("returned group (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantQ, q); diff != "" {
				t.Errorf("returned queue (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantD, d); diff != "" {
				t.Errorf("returned deployment (-want +got):\n%s", diff)
			}
			st := mustState(t, s)
			sg, _ := st.Group("fraud")
			sq, _ := st.Queue("batch")
			sd, _ := st.Deployment("fraud", "cards")
			if diff := cmp.Diff([]any{wantG, wantQ, wantD}, []any{sg, sq, sd}); diff != "" {
				t.Errorf("stored records (-want +got):\n%s", diff)
			}
			if st.Seq() != 3 {
				t.Errorf("Seq = %d after 3 writes", st.Seq())
			}
		}},

		{"a deployment without endpoints lists none", func(t *testing.T, s writer, clk *testutil.Clock) {
			d := must[registry.Deployment](t)(s.PutDeployment(ctx, registry.Deployment{Group: "DEFAULT", Path: "empty"}))
			if d.Endpoints == nil {
				t.Error("returned Endpoints is nil, want an empty list")
			}
			if d, _ := mustState(t, s).Deployment("DEFAULT", "empty"); d.Endpoints == nil {
				t.Error("stored Endpoints is nil, want an empty list")
			}
		}},

		{"update keeps CreatedAt and moves UpdatedAt", func(t *testing.T, s writer, clk *testutil.Clock) {
			created := clk.Now()
			g := must[registry.Group](t)(s.PutGroup(ctx, registry.Group{Name: "fraud"}))
			q := must[registry.Queue](t)(s.PutQueue(ctx, registry.Queue{Name: "batch", MaxConcurrent: 1}))
			d := must[registry.Deployment](t)(s.PutDeployment(ctx, deployment("fraud", "cards")))
			updated := clk.Advance(time.Hour)

			g.Description = "changed"
			g = must[registry.Group](t)(s.PutGroup(ctx, g))
			q.MaxConcurrent = 3
			q = must[registry.Queue](t)(s.PutQueue(ctx, q))
			d.Enabled = false
			d = must[registry.Deployment](t)(s.PutDeployment(ctx, d))

			type stamp struct {
				Revision           uint64
				Created, Updated   time.Time
				ChangeWasPersisted bool
			}
			got := []stamp{
				{g.Revision, g.CreatedAt, g.UpdatedAt, g.Description == "changed"},
				{q.Revision, q.CreatedAt, q.UpdatedAt, q.MaxConcurrent == 3},
				{d.Revision, d.CreatedAt, d.UpdatedAt, !d.Enabled},
			}
			want := stamp{2, created, updated, true}
			if diff := cmp.Diff([]stamp{want, want, want}, got); diff != "" {
				t.Errorf("group, queue, deployment after update (-want +got):\n%s", diff)
			}
		}},

		{"a stale revision conflicts", func(t *testing.T, s writer, clk *testutil.Clock) {
			g := must[registry.Group](t)(s.PutGroup(ctx, registry.Group{Name: "fraud"}))
			must[registry.Group](t)(s.PutGroup(ctx, g)) // now at 2
			_, err := s.PutGroup(ctx, g)
			wantConflict(t, err, registry.ConflictError{Kind: "group", Name: "fraud", Want: 1, Current: 2})
			wantConflict(t, s.DeleteGroup(ctx, "fraud", 1), registry.ConflictError{Kind: "group", Name: "fraud", Want: 1, Current: 2})

			q := must[registry.Queue](t)(s.PutQueue(ctx, registry.Queue{Name: "batch", MaxConcurrent: 1}))
			must[registry.Queue](t)(s.PutQueue(ctx, q))
			_, err = s.PutQueue(ctx, q)
			wantConflict(t, err, registry.ConflictError{Kind: "queue", Name: "batch", Want: 1, Current: 2})
			wantConflict(t, s.DeleteQueue(ctx, "batch", 7), registry.ConflictError{Kind: "queue", Name: "batch", Want: 7, Current: 2})

			d := must[registry.Deployment](t)(s.PutDeployment(ctx, deployment("fraud", "cards")))
			must[registry.Deployment](t)(s.PutDeployment(ctx, d))
			_, err = s.PutDeployment(ctx, d)
			wantConflict(t, err, registry.ConflictError{Kind: "deployment", Name: "fraud/cards", Want: 1, Current: 2})
			wantConflict(t, s.DeleteDeployment(ctx, "fraud", "cards", 1), registry.ConflictError{Kind: "deployment", Name: "fraud/cards", Want: 1, Current: 2})
		}},

		{"create of an existing record conflicts", func(t *testing.T, s writer, clk *testutil.Clock) {
			_, err := s.PutGroup(ctx, registry.Group{Name: "DEFAULT"})
			wantConflict(t, err, registry.ConflictError{Kind: "group", Name: "DEFAULT", Want: 0, Current: 1})
			_, err = s.PutQueue(ctx, registry.Queue{Name: "DEFAULT", MaxConcurrent: 1})
			wantConflict(t, err, registry.ConflictError{Kind: "queue", Name: "DEFAULT", Want: 0, Current: 1})
			must[registry.Deployment](t)(s.PutDeployment(ctx, deployment("DEFAULT", "x")))
			_, err = s.PutDeployment(ctx, deployment("DEFAULT", "x"))
			wantConflict(t, err, registry.ConflictError{Kind: "deployment", Name: "DEFAULT/x", Want: 0, Current: 1})
			if !strings.Contains(err.Error(), "already exists") {
				t.Errorf("message %q does not say the record exists", err)
			}
		}},

		{"AnyRevision writes whatever is stored", func(t *testing.T, s writer, clk *testutil.Clock) {
			for want := uint64(1); want <= 3; want++ {
				g := must[registry.Group](t)(s.PutGroup(ctx, registry.Group{Name: "fraud", Revision: registry.AnyRevision}))
				q := must[registry.Queue](t)(s.PutQueue(ctx, registry.Queue{Name: "batch", MaxConcurrent: 1, Revision: registry.AnyRevision}))
				d := must[registry.Deployment](t)(s.PutDeployment(ctx, registry.Deployment{Group: "fraud", Path: "cards", Revision: registry.AnyRevision}))
				if g.Revision != want || q.Revision != want || d.Revision != want {
					t.Fatalf("revisions %d, %d, %d, want %d", g.Revision, q.Revision, d.Revision, want)
				}
			}
			if err := s.DeleteDeployment(ctx, "fraud", "cards", registry.AnyRevision); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteGroup(ctx, "fraud", registry.AnyRevision); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteQueue(ctx, "batch", registry.AnyRevision); err != nil {
				t.Fatal(err)
			}
			st := mustState(t, s)
			if len(st.Groups()) != 1 || len(st.Queues()) != 1 || len(st.Deployments()) != 0 {
				t.Errorf("after deletes: %d groups, %d queues, %d deployments; want 1, 1, 0", len(st.Groups()), len(st.Queues()), len(st.Deployments()))
			}
		}},

		{"delete with the current revision removes the record", func(t *testing.T, s writer, clk *testutil.Clock) {
			g := must[registry.Group](t)(s.PutGroup(ctx, registry.Group{Name: "fraud"}))
			if err := s.DeleteGroup(ctx, "fraud", g.Revision); err != nil {
				t.Fatal(err)
			}
			if _, ok := mustState(t, s).Group("fraud"); ok {
				t.Error("deleted group still stored")
			}
		}},

		{"update or delete of a missing record is not found", func(t *testing.T, s writer, clk *testutil.Clock) {
			_, err := s.PutGroup(ctx, registry.Group{Name: "ghost", Revision: 3})
			wantIs(t, err, registry.ErrNotFound)
			_, err = s.PutQueue(ctx, registry.Queue{Name: "ghost", MaxConcurrent: 1, Revision: 3})
			wantIs(t, err, registry.ErrNotFound)
			_, err = s.PutDeployment(ctx, registry.Deployment{Group: "DEFAULT", Path: "ghost", Revision: 3})
			wantIs(t, err, registry.ErrNotFound)
			wantIs(t, s.DeleteGroup(ctx, "ghost", 1), registry.ErrNotFound)
			wantIs(t, s.DeleteGroup(ctx, "ghost", registry.AnyRevision), registry.ErrNotFound)
			wantIs(t, s.DeleteQueue(ctx, "ghost", 1), registry.ErrNotFound)
			wantIs(t, s.DeleteDeployment(ctx, "DEFAULT", "ghost", 1), registry.ErrNotFound)
			if errors.Is(err, registry.ErrConflict) {
				t.Errorf("a missing record reads as a conflict: %v", err)
			}
		}},

		{"a group with deployments cannot be deleted", func(t *testing.T, s writer, clk *testutil.Clock) {
			must[registry.Group](t)(s.PutGroup(ctx, registry.Group{Name: "fraud"}))
			d := must[registry.Deployment](t)(s.PutDeployment(ctx, deployment("fraud", "cards")))
			wantIs(t, s.DeleteGroup(ctx, "fraud", registry.AnyRevision), registry.ErrInUse)
			if err := s.DeleteDeployment(ctx, "fraud", "cards", d.Revision); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteGroup(ctx, "fraud", 1); err != nil {
				t.Errorf("delete of the emptied group: %v", err)
			}
		}},

		{"a queue an endpoint uses cannot be deleted", func(t *testing.T, s writer, clk *testutil.Clock) {
			must[registry.Queue](t)(s.PutQueue(ctx, registry.Queue{Name: "batch", MaxConcurrent: 1}))
			d := must[registry.Deployment](t)(s.PutDeployment(ctx, deployment("DEFAULT", "cards",
				registry.Endpoint{Alias: "a", Process: "p"}, registry.Endpoint{Alias: "b", Process: "p", Queue: "batch"})))
			err := s.DeleteQueue(ctx, "batch", 1)
			wantIs(t, err, registry.ErrInUse)
			if !strings.Contains(err.Error(), "DEFAULT/cards/b") {
				t.Errorf("message %q does not name the endpoint using the queue", err)
			}
			d.Endpoints = d.Endpoints[:1]
			must[registry.Deployment](t)(s.PutDeployment(ctx, d))
			if err := s.DeleteQueue(ctx, "batch", 1); err != nil {
				t.Errorf("delete of the unused queue: %v", err)
			}
		}},

		{"the built-in group and queue can change but not go", func(t *testing.T, s writer, clk *testutil.Clock) {
			wantIs(t, s.DeleteGroup(ctx, registry.DefaultGroup, registry.AnyRevision), registry.ErrInUse)
			wantIs(t, s.DeleteGroup(ctx, registry.DefaultGroup, 1), registry.ErrInUse)
			wantIs(t, s.DeleteQueue(ctx, registry.DefaultQueue, registry.AnyRevision), registry.ErrInUse)
			wantIs(t, s.DeleteQueue(ctx, registry.DefaultQueue, 1), registry.ErrInUse)
			q := must[registry.Queue](t)(s.PutQueue(ctx, registry.Queue{Name: registry.DefaultQueue, MaxConcurrent: 4, MaxWaiting: 0, Revision: 1}))
			if q.MaxConcurrent != 4 || q.Revision != 2 {
				t.Errorf("DEFAULT queue after update: %+v", q)
			}
		}},

		{"a deployment refers to an existing group and queues", func(t *testing.T, s writer, clk *testutil.Clock) {
			_, err := s.PutDeployment(ctx, deployment("nope", "cards"))
			wantInvalid(t, err, "/group")
			_, err = s.PutDeployment(ctx, deployment("DEFAULT", "cards",
				registry.Endpoint{Alias: "a", Process: "p"}, registry.Endpoint{Alias: "b", Process: "p", Queue: "nope"}))
			wantInvalid(t, err, "/endpoints/1/queue")
			if n := len(mustState(t, s).Deployments()); n != 0 {
				t.Errorf("%d deployments stored by refused writes", n)
			}
		}},

		{"invalid records are refused with a pointer", func(t *testing.T, s writer, clk *testutil.Clock) {
			before := mustState(t, s)
			long := strings.Repeat("a", 129)
			ep := func(e registry.Endpoint) registry.Deployment { return deployment("DEFAULT", "cards", e) }
			cases := []struct {
				name    string
				write   func() error
				pointer string
			}{
				{"group ..", func() error { _, err := s.PutGroup(ctx, registry.Group{Name: ".."}); return err }, "/name"},
				{"group a/b", func() error { _, err := s.PutGroup(ctx, registry.Group{Name: "a/b"}); return err }, "/name"},
				{"group %2F", func() error { _, err := s.PutGroup(ctx, registry.Group{Name: "%2F"}); return err }, "/name"},
				{"group empty", func() error { _, err := s.PutGroup(ctx, registry.Group{}); return err }, "/name"},
				{"group too long", func() error { _, err := s.PutGroup(ctx, registry.Group{Name: long}); return err }, "/name"},
				{"unknown auth mode", func() error {
					_, err := s.PutGroup(ctx, registry.Group{Name: "g", Auth: registry.AuthPolicy{Mode: "basic"}})
					return err
				}, "/auth/mode"},
				{"public group with user groups", func() error {
					_, err := s.PutGroup(ctx, registry.Group{Name: "g", Auth: registry.AuthPolicy{Groups: []string{"x"}}})
					return err
				}, "/auth/groups"},
				{"empty user group", func() error {
					_, err := s.PutGroup(ctx, registry.Group{Name: "g", Auth: registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"x", ""}}})
					return err
				}, "/auth/groups/1"},
				{"public group with credential kinds", func() error {
					_, err := s.PutGroup(ctx, registry.Group{Name: "g", Auth: registry.AuthPolicy{Schemes: []registry.Scheme{registry.SchemeBasic}}})
					return err
				}, "/auth/schemes"},
				{"unknown credential kind", func() error {
					_, err := s.PutGroup(ctx, registry.Group{Name: "g", Auth: registry.AuthPolicy{Mode: registry.TokenRequired, Schemes: []registry.Scheme{"bearer", "digest"}}})
					return err
				}, "/auth/schemes/1"},
				{"credential kind twice", func() error {
					_, err := s.PutGroup(ctx, registry.Group{Name: "g", Auth: registry.AuthPolicy{Mode: registry.TokenRequired, Schemes: []registry.Scheme{"basic", "apitoken", "basic"}}})
					return err
				}, "/auth/schemes"},
				{"queue -x", func() error { _, err := s.PutQueue(ctx, registry.Queue{Name: "-x", MaxConcurrent: 1}); return err }, "/name"},
				{"queue without slots", func() error { _, err := s.PutQueue(ctx, registry.Queue{Name: "q"}); return err }, "/maxConcurrent"},
				{"queue negative waiting", func() error {
					_, err := s.PutQueue(ctx, registry.Queue{Name: "q", MaxConcurrent: 1, MaxWaiting: -1})
					return err
				}, "/maxWaiting"},
				{"deployment group ..", func() error { _, err := s.PutDeployment(ctx, deployment("..", "cards")); return err }, "/group"},
				{"deployment path %2F", func() error { _, err := s.PutDeployment(ctx, deployment("DEFAULT", "%2F")); return err }, "/path"},
				{"alias a/b", func() error {
					_, err := s.PutDeployment(ctx, ep(registry.Endpoint{Alias: "a/b", Process: "p"}))
					return err
				}, "/endpoints/0/alias"},
				{"alias twice", func() error {
					_, err := s.PutDeployment(ctx, deployment("DEFAULT", "cards", registry.Endpoint{Alias: "a", Process: "p"}, registry.Endpoint{Alias: "a", Process: "q"}))
					return err
				}, "/endpoints/1/alias"},
				{"process ..", func() error {
					_, err := s.PutDeployment(ctx, ep(registry.Endpoint{Alias: "a", Process: ".."}))
					return err
				}, "/endpoints/0/process"},
				{"queue name a/b", func() error {
					_, err := s.PutDeployment(ctx, ep(registry.Endpoint{Alias: "a", Process: "p", Queue: "a/b"}))
					return err
				}, "/endpoints/0/queue"},
				{"negative timeout", func() error {
					_, err := s.PutDeployment(ctx, ep(registry.Endpoint{Alias: "a", Process: "p", Timeout: -time.Second}))
					return err
				}, "/endpoints/0/timeoutMs"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { wantInvalid(t, c.write(), c.pointer) })
			}
			if after := mustState(t, s); after.Seq() != before.Seq() {
				t.Errorf("Seq moved from %d to %d on refused writes", before.Seq(), after.Seq())
			}
		}},

		{"records handed out are copies", func(t *testing.T, s writer, clk *testutil.Clock) {
			in := deployment("DEFAULT", "cards", registry.Endpoint{Alias: "a", Process: "p"})
			out := must[registry.Deployment](t)(s.PutDeployment(ctx, in))
			in.Endpoints[0].Process = "changed-input"
			out.Endpoints[0].Process = "changed-output"
			st := mustState(t, s)
			read, _ := st.Deployment("DEFAULT", "cards")
			read.Endpoints[0].Process = "changed-read"
			st.Deployments()[0].Endpoints[0].Process = "changed-list"

			users := []string{"analysts"}
			g := must[registry.Group](t)(s.PutGroup(ctx, registry.Group{Name: "g", Auth: registry.AuthPolicy{Mode: registry.TokenRequired, Groups: users}}))
			users[0] = "changed-input"
			g.Auth.Groups[0] = "changed-output"
			st = mustState(t, s)
			rg, _ := st.Group("g")
			rg.Auth.Groups[0] = "changed-read"
			for _, lg := range st.Groups() {
				if lg.Name == "g" {
					lg.Auth.Groups[0] = "changed-list"
				}
			}

			st = mustState(t, s)
			d, _ := st.Deployment("DEFAULT", "cards")
			g, _ = st.Group("g")
			if got := []string{d.Endpoints[0].Process, g.Auth.Groups[0]}; !cmp.Equal(got, []string{"p", "analysts"}) {
				t.Errorf("stored process and user group are %q, changed through a copy", got)
			}
		}},

		{"seq counts committed writes", func(t *testing.T, s writer, clk *testutil.Clock) {
			start := mustState(t, s).Seq()
			must[registry.Group](t)(s.PutGroup(ctx, registry.Group{Name: "a"}))
			s.PutGroup(ctx, registry.Group{Name: "a"}) // conflict
			must[registry.Group](t)(s.PutGroup(ctx, registry.Group{Name: "b"}))
			s.DeleteGroup(ctx, "DEFAULT", registry.AnyRevision) // in use
			if err := s.DeleteGroup(ctx, "a", 1); err != nil {
				t.Fatal(err)
			}
			if got := mustState(t, s).Seq() - start; got != 3 {
				t.Errorf("Seq grew by %d over 3 committed and 2 refused writes", got)
			}
		}},

		{"a write is published before it returns", func(t *testing.T, s writer, clk *testutil.Clock) {
			before := s.Snapshot()
			must[registry.Group](t)(s.PutGroup(ctx, registry.Group{Name: "g1"}))
			after := s.Snapshot()
			if _, ok := after.State().Group("g1"); !ok || after == before {
				t.Error("the snapshot after the write does not hold it")
			}
			s.PutGroup(ctx, registry.Group{Name: "g1"}) // conflict: nothing published
			if s.Snapshot() != after {
				t.Error("a refused write published a snapshot")
			}
		}},

		{"a closed store refuses every call", func(t *testing.T, s writer, clk *testutil.Clock) {
			// Records that exist, so that every write gets as far as the store.
			must[registry.Group](t)(s.PutGroup(ctx, registry.Group{Name: "g"}))
			must[registry.Queue](t)(s.PutQueue(ctx, registry.Queue{Name: "q", MaxConcurrent: 1}))
			must[registry.Deployment](t)(s.PutDeployment(ctx, deployment("DEFAULT", "d")))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			_, err := s.State(ctx)
			wantIs(t, err, registry.ErrClosed)
			_, err = s.PutGroup(ctx, registry.Group{Name: "g2"})
			wantIs(t, err, registry.ErrClosed)
			_, err = s.PutQueue(ctx, registry.Queue{Name: "q2", MaxConcurrent: 1})
			wantIs(t, err, registry.ErrClosed)
			_, err = s.PutDeployment(ctx, deployment("DEFAULT", "d2"))
			wantIs(t, err, registry.ErrClosed)
			wantIs(t, s.DeleteGroup(ctx, "g", 1), registry.ErrClosed)
			wantIs(t, s.DeleteQueue(ctx, "q", 1), registry.ErrClosed)
			wantIs(t, s.DeleteDeployment(ctx, "DEFAULT", "d", 1), registry.ErrClosed)
			if err := s.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		}},

		{"a cancelled context writes nothing", func(t *testing.T, s writer, clk *testutil.Clock) {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := s.PutGroup(cctx, registry.Group{Name: "g"})
			wantIs(t, err, context.Canceled)
			_, err = s.State(cctx)
			wantIs(t, err, context.Canceled)
			if _, ok := mustState(t, s).Group("g"); ok {
				t.Error("write with a cancelled context was stored")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { forEachStore(t, tt.run) })
	}
}

func TestStoreConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	const writers = 8

	t.Run("AnyRevision loses no write", func(t *testing.T) {
		forEachStore(t, func(t *testing.T, s writer, clk *testutil.Clock) {
			const each = 10
			var wg sync.WaitGroup
			revs := make(chan uint64, writers*each)
			for w := range writers {
				wg.Go(func() {
					for range each {
						q, err := s.PutQueue(ctx, registry.Queue{Name: "shared", MaxConcurrent: w + 1, Revision: registry.AnyRevision})
						if err != nil {
							t.Error(err)
							return
						}
						revs <- q.Revision
					}
				})
			}
			wg.Wait()
			close(revs)
			seen := map[uint64]bool{}
			for r := range revs {
				if seen[r] {
					t.Errorf("revision %d handed out twice", r)
				}
				seen[r] = true
			}
			q, _ := mustState(t, s).Queue("shared")
			if q.Revision != writers*each || len(seen) != writers*each {
				t.Errorf("final revision %d, %d distinct; want %d", q.Revision, len(seen), writers*each)
			}
		})
	})

	t.Run("one of many writers of the same revision wins", func(t *testing.T) {
		forEachStore(t, func(t *testing.T, s writer, clk *testutil.Clock) {
			base := must[registry.Queue](t)(s.PutQueue(ctx, registry.Queue{Name: "shared", MaxConcurrent: 1}))
			var (
				wg               sync.WaitGroup
				mu               sync.Mutex
				wins, conflicts  int
				start            = make(chan struct{})
				unexpectedErrors []error
			)
			for w := range writers {
				wg.Go(func() {
					q := base
					q.MaxConcurrent = w + 1
					<-start
					_, err := s.PutQueue(ctx, q)
					mu.Lock()
					defer mu.Unlock()
					var ce *registry.ConflictError
					switch {
					case err == nil:
						wins++
					case errors.As(err, &ce) && ce.Want == 1 && ce.Current == 2:
						conflicts++
					default:
						unexpectedErrors = append(unexpectedErrors, err)
					}
				})
			}
			close(start)
			wg.Wait()
			if wins != 1 || conflicts != writers-1 || len(unexpectedErrors) > 0 {
				t.Errorf("%d wins, %d conflicts, other errors %v; want 1, %d, none", wins, conflicts, unexpectedErrors, writers-1)
			}
			if q, _ := mustState(t, s).Queue("shared"); q.Revision != 2 {
				t.Errorf("final revision %d, want 2", q.Revision)
			}
		})
	})

	t.Run("read-modify-write with revisions loses no update", func(t *testing.T) {
		forEachStore(t, func(t *testing.T, s writer, clk *testutil.Clock) {
			const each = 5
			must[registry.Queue](t)(s.PutQueue(ctx, registry.Queue{Name: "counter", MaxConcurrent: 1}))
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					for done := 0; done < each; {
						st, err := s.State(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						q, _ := st.Queue("counter")
						q.MaxWaiting++
						_, err = s.PutQueue(ctx, q)
						switch {
						case err == nil:
							done++
						case !errors.Is(err, registry.ErrConflict):
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			q, _ := mustState(t, s).Queue("counter")
			if q.MaxWaiting != writers*each || q.Revision != 1+writers*each {
				t.Errorf("counter %d at revision %d, want %d at %d", q.MaxWaiting, q.Revision, writers*each, 1+writers*each)
			}
		})
	})
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&registry.ConflictError{Kind: "group", Name: "fraud", Want: 1, Current: 2}, `registry: group "fraud" is at revision 2, not 1`},
		{&registry.ConflictError{Kind: "queue", Name: "batch", Want: 0, Current: 3}, `registry: queue "batch" already exists at revision 3`},
		{&registry.ConflictError{Kind: "deployment", Name: "a/b", Want: 4}, `registry: deployment "a/b" does not exist (revision 4 named)`},
		{&registry.InvalidError{Pointer: "/name", Message: "bad"}, "registry: /name: bad"},
		{&registry.InvalidError{Message: "bad"}, "registry: bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestStoreConformance(t *testing.T) {
	t.Run("MemStore", func(t *testing.T) {
		registrytest.Run(t, registrytest.Opener{Open: func(t *testing.T, opts registry.StoreOptions) registry.Store {
			s := registry.NewMemStore(opts)
			t.Cleanup(func() { s.Close() })
			return s
		}})
	})
	t.Run("FileStore", func(t *testing.T) {
		dirs := map[registry.Store]string{}
		registrytest.Run(t, registrytest.Opener{
			Open: func(t *testing.T, opts registry.StoreOptions) registry.Store {
				dir := t.TempDir()
				s := openFileStore(t, dir, opts)
				dirs[s] = dir
				return s
			},
			Reopen: func(t *testing.T, s registry.Store) registry.Store {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				return openFileStore(t, dirs[s], registry.StoreOptions{})
			},
		})
	})
}
