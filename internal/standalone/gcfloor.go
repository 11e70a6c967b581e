package standalone

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// goMinHeap is the heap goal below which Go's collector does not go at
// GOGC=100; at percent p the least goal is goMinHeap × p/100.
const goMinHeap = 4 << 20

// gcFloorSize is the heap floor the server keeps (gcFloor): cfg's, or
// none when GOGC is set, which is the operator's choice of collector
// settings.
func gcFloorSize(cfg config, getenv func(string) string) int64 {
	if getenv("GOGC") != "" {
		return 0
	}
	return cfg.GCMinHeap
}

// gcPercent is the GC percent that puts the heap goal at floor bytes
// while the live heap is below half of it, and Go's default, 100 (a goal
// of twice the live heap), from there on. It never goes below 100, and
// never above the percent at which Go's own least goal, which grows with
// the percent, is the floor.
func gcPercent(live, floor int64) int {
	floor = min(floor, 1<<50) // a pebibyte, so that the products below cannot overflow
	hi := int(100 * floor / goMinHeap)
	if hi <= 100 || live >= floor/2 {
		return 100
	}
	if live <= 0 {
		return hi
	}
	return min(max(int(100*(floor-live)/live), 100), hi)
}

// gcFloor keeps the collector from running before the heap reaches a
// floor, by setting the GC percent after every collection from the heap
// it left live (gcPercent). Go's least heap goal is 4 MiB, tiny for a
// server whose live heap is a few MiB: the reference server's is about
// one, so that under one-row load it collected every few hundred requests
// and spent more CPU on that than on anything of its own (BENCHMARKS.md).
// With a floor it holds up to that much more memory, and nothing changes
// once its live heap passes half the floor.
//
// The percent is set on the goroutine that runs cleanups. When that runs
// late, past the start of the next collection, the percent set is the
// previous collection's, and the next collection sets it right.
type gcFloor struct {
	floor int64

	mu      sync.Mutex
	prev    int              // the percent before start, which stop restores
	stopped bool             // no more adjusting
	sample  []metrics.Sample // the percent and the live heap
}

// startGCFloor starts keeping the heap goal at floor bytes or more and
// returns what stops it and restores the GC percent it found.
func startGCFloor(floor int64) (stop func()) {
	g := &gcFloor{floor: floor, sample: []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/heap/live:bytes"}}}
	metrics.Read(g.sample) // g is not shared before adjust
	g.prev = int(g.sample[0].Value.Uint64())
	g.adjust()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.stopped {
			g.stopped = true
			debug.SetGCPercent(g.prev)
		}
	}
}

// adjust sets the percent for the heap the last collection left live,
// and arranges to be called again after the next one.
func (g *gcFloor) adjust() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	metrics.Read(g.sample)
	if p := gcPercent(int64(g.sample[1].Value.Uint64()), g.floor); p != int(g.sample[0].Value.Uint64()) {
		debug.SetGCPercent(p)
	}
	// A fresh object nothing refers to, whose cleanup runs once a
	// collection has found it unreachable: after the next one. It is of a
	// pointer type, never one of the tiny pointer-free objects that Go
	// packs together and frees late.
	runtime.AddCleanup(new(*gcFloor), (*gcFloor).adjust, g)
}
