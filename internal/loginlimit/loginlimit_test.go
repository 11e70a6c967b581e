package loginlimit

import (
	"fmt"
	"testing"
	"time"
)

func newGuard(t *testing.T, good int) *Guard {
	t.Helper()
	g, err := New(Config{
		Address:       Limit{Every: 6 * time.Second, Burst: 20},
		UserAddress:   Limit{Every: 6 * time.Second, Burst: 10},
		User:          Limit{Every: time.Minute, Burst: 20, MaxKeys: 2},
		GoodAddresses: good,
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGuessesFromManyAddressesAreSlowed(t *testing.T) {
	g := newGuard(t, 2)
	now := time.Unix(1000, 0)
	g.Succeeded("Alice", "192.0.2.1")
	refused := 0
	for i := range 40 {
		addr := fmt.Sprintf("198.51.100.%d", i)
		if _, ok := g.Check("alice", addr, now); !ok {
			refused++
			continue
		}
		g.Failed("alice", addr, now)
	}
	if refused != 20 {
		t.Errorf("%d of 40 guesses from 40 addresses refused, want 20 (past the burst)", refused)
	}
	if d, ok := g.Check("alice", "203.0.113.7", now); ok || d <= 0 {
		t.Errorf("a new address during the throttle: %v %v, want refused with a wait", d, ok)
	}
	if _, ok := g.Check("ALICE", "192.0.2.1", now); !ok {
		t.Error("the user's own address is held by the guesses of others")
	}
	if _, ok := g.Check("bob", "203.0.113.7", now); !ok {
		t.Error("another user is held by the guesses against alice")
	}
	if _, ok := g.Check("alice", "203.0.113.7", now.Add(time.Minute)); !ok {
		t.Error("a minute later, a new address is still refused")
	}
}

func TestGoodAddressesAreBounded(t *testing.T) {
	g := newGuard(t, 2)
	now := time.Unix(1000, 0)
	for _, a := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
		g.Succeeded("alice", a)
	}
	g.Succeeded("bob", "192.0.2.9")
	g.Succeeded("carol", "192.0.2.9") // alice, the least recent, is forgotten
	for i := range 25 {
		g.Failed("alice", fmt.Sprintf("198.51.100.%d", i), now)
		g.Failed("bob", fmt.Sprintf("198.51.100.%d", i), now)
	}
	if _, ok := g.Check("bob", "192.0.2.9", now); !ok {
		t.Error("bob's remembered address is refused")
	}
	if _, ok := g.Check("alice", "192.0.2.3", now); ok {
		t.Error("a forgotten user's address is let through the throttle")
	}
	if n := len(g.good); n != 2 {
		t.Errorf("%d users remembered, want at most 2", n)
	}
	g.Succeeded("bob", "192.0.2.1")
	g.Succeeded("bob", "192.0.2.2")
	if _, ok := g.Check("bob", "192.0.2.9", now); ok {
		t.Error("the third most recent of 2 good addresses is still remembered")
	}
}
