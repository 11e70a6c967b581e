package keyedlimit

import (
	"net/netip"
	"testing"
	"time"
)

func TestTakeSpendsBurstThenWaits(t *testing.T) {
	l, err := New(10*time.Second, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	for i := range 2 {
		if _, ok := l.Take("a", now); !ok {
			t.Fatalf("attempt %d within the burst refused", i+1)
		}
	}
	wait, ok := l.Take("a", now)
	if ok || wait.Round(time.Millisecond) != 10*time.Second {
		t.Errorf("third attempt: ok=%v wait=%v, want refused with a 10s wait", ok, wait)
	}
	// A refused attempt takes nothing: 4s later the wait is 6s, not 10s.
	if wait, ok := l.Take("a", now.Add(4*time.Second)); ok || wait.Round(time.Millisecond) != 6*time.Second {
		t.Errorf("4s later: ok=%v wait=%v, want refused with a 6s wait", ok, wait)
	}
	if _, ok := l.Take("a", now.Add(10*time.Second)); !ok {
		t.Error("attempt after the wait refused")
	}
	if _, ok := l.Take("b", now); !ok {
		t.Error("another key shares a's bucket")
	}
}

// TestCheckAndCharge: Check takes nothing; Charge takes whether or not
// there is a token, and what is owed delays the key's next chance.
func TestCheckAndCharge(t *testing.T) {
	l, err := New(10*time.Second, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	for i := range 3 {
		if _, ok := l.Check("a", now); !ok {
			t.Fatalf("check %d of a fresh key refused", i+1)
		}
	}
	if l.Len() != 0 {
		t.Errorf("Check tracks %d keys, want 0", l.Len())
	}
	// Four attempts checked at once, all charged after: two over the burst.
	for range 4 {
		l.Charge("a", now)
	}
	steps := []struct {
		after time.Duration
		ok    bool
		wait  time.Duration
	}{
		{0, false, 30 * time.Second},
		{20 * time.Second, false, 10 * time.Second},
		{30 * time.Second, true, 0},
	}
	for _, st := range steps {
		if wait, ok := l.Check("a", now.Add(st.after)); ok != st.ok || wait != st.wait {
			t.Errorf("after %v: ok=%v wait=%v, want ok=%v wait=%v", st.after, ok, wait, st.ok, st.wait)
		}
	}
	if _, ok := l.Check("b", now); !ok {
		t.Error("another key shares a's debt")
	}
}

func TestMemoryIsBoundedByEvictingLeastRecentlyUsed(t *testing.T) {
	l, err := New(time.Hour, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	l.Take("a", now)
	l.Take("b", now)
	l.Take("a", now) // a is now the most recent; b goes first
	l.Take("c", now)
	if l.Len() != 2 {
		t.Fatalf("Len = %d, want 2", l.Len())
	}
	if _, ok := l.Take("a", now); ok {
		t.Error("a was evicted though it was used more recently than b")
	}
	if _, ok := l.Take("b", now); !ok {
		t.Error("b was kept though it was the least recently used")
	}
}

func TestAddrKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7":            "192.0.2.7",
		"::ffff:192.0.2.7":     "192.0.2.7",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
		"fe80::1%eth0":         "fe80::/64",
		"2001:db8:1:3:0:0:0:1": "2001:db8:1:3::/64",
	} {
		if got := AddrKey(netip.MustParseAddr(in)); got != want {
			t.Errorf("AddrKey(%s) = %q, want %q", in, got, want)
		}
	}
	if got := AddrKey(netip.Addr{}); got != "" {
		t.Errorf("AddrKey(invalid) = %q, want empty", got)
	}
}
