package standalone

import (
	"io"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestGCPercent(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		live, floor int64
		want        int
	}{
		{1 * mib, 32 * mib, 800},  // Go's least goal, 4 MiB × 8, is the floor; 9 MiB the live heap's
		{0, 32 * mib, 800},        // nothing live yet
		{4 * mib, 32 * mib, 700},  // 4 MiB × 8 = 32 MiB
		{8 * mib, 32 * mib, 300},  // 8 MiB × 4 = 32 MiB
		{15 * mib, 32 * mib, 113}, // just below half the floor
		{16 * mib, 32 * mib, 100}, // half the floor and more: Go's default
		{500 * mib, 32 * mib, 100},
		{1 * mib, 4 * mib, 100}, // a floor at Go's own least goal changes nothing
		{1 * mib, 2 * mib, 100}, // nor one below it
		{1 * mib, 64 * mib, 1600},
		{1 * mib, 1 << 62, 26_843_545_600}, // a floor past a pebibyte counts as one, with no overflow
	}
	for _, tt := range tests {
		if got := gcPercent(tt.live, tt.floor); got != tt.want {
			t.Errorf("gcPercent(%d MiB live, %d MiB floor) = %d, want %d", tt.live/mib, tt.floor/mib, got, tt.want)
		}
	}
}

func TestGCFloorConfig(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	c, err := parseConfig(nil, getenv, io.Discard)
	if err != nil || c.GCMinHeap != 32<<20 || gcFloorSize(c, getenv) != 32<<20 {
		t.Errorf("default: GCMinHeap %d, floor %d, %v; want 32 MiB", c.GCMinHeap, gcFloorSize(c, getenv), err)
	}
	env["GOGC"] = "200"
	if got := gcFloorSize(c, getenv); got != 0 {
		t.Errorf("with GOGC set the floor is %d, want none", got)
	}
	delete(env, "GOGC")
	env["SCOREHUB_GC_MIN_HEAP"] = "0"
	if c, err := parseConfig(nil, getenv, io.Discard); err != nil || gcFloorSize(c, getenv) != 0 {
		t.Errorf("SCOREHUB_GC_MIN_HEAP=0: floor %d, %v; want none", gcFloorSize(c, getenv), err)
	}
	if _, err := parseConfig([]string{"-gc-min-heap", "-1"}, getenv, io.Discard); err == nil {
		t.Error("-gc-min-heap -1 accepted")
	}
}

// gcState reads the collector's percent and heap goal.
func gcState() (percent int, goal int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}

// waitGC collects until the percent becomes want, and returns the heap
// goal then. The floor adjusts the percent after a collection, on the
// goroutine that runs cleanups; a loaded machine may run it late, or only
// after the collection after that, so it collects again every 100 ms, for
// at most 10 s.
func waitGC(t *testing.T, want int) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		for next := time.Now().Add(100 * time.Millisecond); time.Now().Before(next); time.Sleep(time.Millisecond) {
			if p, goal := gcState(); p == want {
				return goal
			}
		}
		if time.Now().After(deadline) {
			p, _ := gcState()
			t.Fatalf("the GC percent is %d after collections for 10 s, want %d", p, want)
		}
	}
}

// TestGCFloor keeps a 64 MiB floor in this test process: the heap goal is
// the floor while little is live, twice the live heap once half the floor
// is live, the floor again once that is freed, and Go's own after stop.
func TestGCFloor(t *testing.T) {
	const floor = 64 << 20
	before, _ := gcState()
	stop := startGCFloor(floor)
	defer stop()
	if goal := waitGC(t, 1600); goal < floor {
		t.Errorf("with little live, the heap goal is %d, want the floor %d", goal, floor)
	}
	if goal := waitGC(t, 1600); goal < floor {
		t.Errorf("after another collection the heap goal is %d, want the floor %d", goal, floor)
	}
	held := make([]byte, 40<<20) // its pages are never touched
	if goal := waitGC(t, 100); goal < 80<<20 || goal > 100<<20 {
		t.Errorf("with 40 MiB live, the heap goal is %d MiB, want Go's own, about twice that", goal>>20)
	}
	runtime.KeepAlive(held)
	if goal := waitGC(t, 1600); goal < floor {
		t.Errorf("once the 40 MiB are freed, the heap goal is %d, want the floor %d", goal, floor)
	}
	stop()
	if p, _ := gcState(); p != before {
		t.Errorf("after stop the GC percent is %d, want %d as before", p, before)
	}
	runtime.GC()
	if p, _ := gcState(); p != before {
		t.Errorf("a collection after stop set the GC percent to %d, want it left at %d", p, before)
	}
}
