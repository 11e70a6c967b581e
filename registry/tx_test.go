package registry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/scorehub/scorehub/registry"
)

// TestUpdate: a write decided with Update is decided on the state it
// commits on, again after another writer's commit, so that a condition of
// the caller's (an If-Match of any revision the record has) holds there.
func TestUpdate(t *testing.T) {
	ctx := context.Background()
	b := newShared()
	one, two := b.Handle(), b.Handle()
	r1, r2 := newWriter(t, one), newWriter(t, two)

	// A write that names whatever revision the queue has now.
	bump := func(r *registry.Registry, n int, calls *int) error {
		return r.Update(ctx, func(tx *registry.Tx) error {
			*calls++
			q, ok := tx.State().Queue("counter")
			if !ok {
				return errors.New("no counter")
			}
			q.MaxConcurrent = n
			_, err := tx.PutQueue(q)
			return err
		})
	}
	// Neither replica is told of the other's writes. r2 is not told of
	// the counter r1 creates: its first decision finds none, and is
	// decided again on what the store holds.
	one.Quiet(true)
	two.Quiet(true)
	must[registry.Queue](t)(r1.PutQueue(ctx, registry.Queue{Name: "counter", MaxConcurrent: 1}))
	calls := 0
	if err := bump(r2.Registry, 3, &calls); err != nil {
		t.Fatalf("a write r2 decides on a state it was not told of: %v", err)
	}
	if q, _ := r2.Snapshot().State().Queue("counter"); q.MaxConcurrent != 3 || q.Revision != 2 || calls != 2 {
		t.Errorf("after the write: %+v decided %d times, want revision 2 holding 3, decided twice", q, calls)
	}

	// r1's next write, decided on revision 1, is refused by the store as
	// stale, and decided again on revision 2.
	calls = 0
	if err := bump(r1.Registry, 4, &calls); err != nil {
		t.Fatalf("a write on a stale base: %v", err)
	}
	if q, _ := r1.Snapshot().State().Queue("counter"); q.MaxConcurrent != 4 || q.Revision != 3 || calls != 2 {
		t.Errorf("after the write: %+v decided %d times, want revision 3 holding 4, decided twice", q, calls)
	}

	t.Run("one write", func(t *testing.T) {
		err := r1.Update(ctx, func(tx *registry.Tx) error {
			if _, err := tx.PutGroup(registry.Group{Name: "a"}); err != nil {
				return err
			}
			_, err := tx.PutGroup(registry.Group{Name: "b"})
			return err
		})
		if err == nil {
			t.Error("two writes in one Update succeeded")
		}
		if _, ok := r1.Snapshot().State().Group("a"); ok {
			t.Error("the first of two writes was committed")
		}
	})

	t.Run("nothing written", func(t *testing.T) {
		before := r1.Snapshot()
		if err := r1.Update(ctx, func(tx *registry.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		refused := errors.New("refused")
		if err := r1.Update(ctx, func(tx *registry.Tx) error { tx.DeleteQueue("counter", 0); return refused }); !errors.Is(err, refused) {
			t.Errorf("a refusal: %v, want it", err)
		}
		if r1.Snapshot() != before {
			t.Error("an Update that wrote nothing published a snapshot")
		}
	})
}
