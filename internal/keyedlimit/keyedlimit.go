// Package keyedlimit is a token bucket per key (a client address, a user
// name) in bounded memory: only the most recently used keys are tracked, so
// a flood of new keys evicts old ones instead of growing without end. The
// token service and the rate-limit middleware share it.
package keyedlimit

import (
	"container/list"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter is a token bucket per key, holding at most maxKeys keys (LRU). It
// is safe for concurrent use.
type Limiter struct {
	limit   rate.Limit
	burst   int
	maxKeys int

	mu    sync.Mutex
	index map[string]*list.Element // of *bucket
	lru   list.List                // most recently used first
}

type bucket struct {
	key string
	lim *rate.Limiter
}

// New returns a limiter that lets each key take burst tokens at once and
// limit more a second. maxKeys must be at least 1.
func New(limit rate.Limit, burst, maxKeys int) *Limiter {
	return &Limiter{limit: limit, burst: burst, maxKeys: max(maxKeys, 1), index: make(map[string]*list.Element)}
}

// Take takes one token of key at now. If there is none, it takes nothing
// and reports how long until there will be one.
func (l *Limiter) Take(key string, now time.Time) (wait time.Duration, ok bool) {
	r := l.bucket(key).ReserveN(now, 1)
	if !r.OK() {
		return time.Duration(float64(time.Second) / float64(l.limit)), false
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// Len returns how many keys are tracked.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}

func (l *Limiter) bucket(key string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.index[key]; ok {
		l.lru.MoveToFront(e)
		return e.Value.(*bucket).lim
	}
	b := &bucket{key: key, lim: rate.NewLimiter(l.limit, l.burst)}
	l.index[key] = l.lru.PushFront(b)
	if l.lru.Len() > l.maxKeys {
		oldest := l.lru.Back()
		l.lru.Remove(oldest)
		delete(l.index, oldest.Value.(*bucket).key)
	}
	return b.lim
}

// AddrKey is the rate-limit key of a client address: the address itself, or
// for IPv6 its /64 prefix, since one client usually holds a whole /64. The
// invalid Addr gives "".
func AddrKey(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return ""
	case a.Is6() && !a.Is4In6():
		p, _ := a.WithZone("").Prefix(64) // cannot fail for an IPv6 address
		return p.String()
	default:
		return a.Unmap().String()
	}
}
