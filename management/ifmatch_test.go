package management_test

import (
	"context"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

// TestPreconditionOnTheCommittedState: If-Match is checked on the state the
// write commits on. Another writer's change lands between this write's
// decision and its commit; the write is decided again on what the store
// then holds, and If-Match is checked there.
func TestPreconditionOnTheCommittedState(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		ifMatch string
		status  int
		typ     string
		phrase  string
	}{
		{"any revision", "*", 200, "", ""},
		{"the revision read", `"1"`, 412, "precondition_failed", `web API group "g" is at revision 2, not one the request names`},
		{"either revision", `"1", "2"`, 200, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var il *interloper
			f := newFixture(t, func(o *fixtureOptions) {
				o.wrapStore = func(s registry.Store) registry.Store { il = &interloper{Store: s}; return il }
			})
			f.putGroup(t, registry.Group{Name: "g"})
			other, err := registry.New(ctx, process.NewCatalog(), f.store)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			il.before(func() {
				if _, err := other.PutGroup(ctx, registry.Group{Name: "g", Description: "another writer's", Revision: registry.AnyRevision}); err != nil {
					t.Error(err)
				}
			})
			r := f.do(t, request{method: "PUT", path: "/api/v1/webapigroups/g", token: f.admin,
				body: `{"description":"mine"}`, header: map[string]string{"If-Match": tc.ifMatch}})
			r.want(t, tc.status, tc.typ)
			g, _ := f.reg.Snapshot().State().Group("g")
			if tc.status == 200 && (g.Description != "mine" || g.Revision != 3) {
				t.Errorf("after the write the group is %+v, want mine at revision 3", g)
			}
			if msg, _ := r.errorField("message").(string); tc.phrase != "" && msg != tc.phrase {
				t.Errorf("message %q, want %q", msg, tc.phrase)
			}
		})
	}
}

// interloper is a Store that runs a function once, before the next
// commit: another writer's write landing in between.
type interloper struct {
	registry.Store
	mu   sync.Mutex
	next func()
}

func (s *interloper) before(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = fn
}

func (s *interloper) Commit(ctx context.Context, base uint64, next *registry.State) error {
	s.mu.Lock()
	fn := s.next
	s.next = nil
	s.mu.Unlock()
	if fn != nil {
		fn()
	}
	return s.Store.Commit(ctx, base, next)
}
