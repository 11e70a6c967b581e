// Package keyedlimit is a token bucket per key (a client address, a user
// name) in bounded memory: only the most recently used keys are tracked, so
// a flood of new keys evicts old ones instead of growing without end. It
// also names the client of a request ([ClientAddr], [ClientKey]), trusting
// X-Forwarded-For only from the proxies a host names. The token service and
// the rate-limit middleware share both, so that a host configures trusted
// proxies and limits the same way for each.
package keyedlimit

import (
	"container/list"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
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

// DefaultMaxKeys is how many keys a Limiter tracks when asked for zero.
const DefaultMaxKeys = 10_000

// New returns a limiter that lets each key take burst tokens at once and
// one more every every, tracking at most maxKeys keys (zero means
// DefaultMaxKeys). It is the one check of a limit's shape for every
// limiter: every must be positive, burst at least 1, maxKeys not negative.
func New(every time.Duration, burst, maxKeys int) (*Limiter, error) {
	switch {
	case every <= 0:
		return nil, fmt.Errorf("rate limit needs a positive Every, not %v", every)
	case burst < 1:
		return nil, fmt.Errorf("rate limit needs a Burst of at least 1, not %d", burst)
	case maxKeys < 0:
		return nil, fmt.Errorf("rate limit MaxKeys must not be negative, not %d", maxKeys)
	case maxKeys == 0:
		maxKeys = DefaultMaxKeys
	}
	return &Limiter{limit: rate.Every(every), burst: burst, maxKeys: maxKeys, index: make(map[string]*list.Element)}, nil
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

// Check reports whether key has a token at now, without taking it, and if
// not, how long until it will. A key not tracked has its whole burst.
// With [Limiter.Charge] it limits attempts that count only once their
// outcome is known, such as failed logins.
func (l *Limiter) Check(key string, now time.Time) (wait time.Duration, ok bool) {
	l.mu.Lock()
	e, tracked := l.index[key]
	l.mu.Unlock()
	if !tracked {
		return 0, true
	}
	tokens := e.Value.(*bucket).lim.TokensAt(now)
	if tokens >= 1 {
		return 0, true
	}
	return time.Duration((1 - tokens) / float64(l.limit) * float64(time.Second)).Round(time.Millisecond), false
}

// Charge takes one token of key at now whether there is one or not: a key
// charged past its burst owes tokens, and [Limiter.Check] refuses it until
// they are repaid. So attempts checked at once, before any of them is
// charged, cannot escape the limit: they only delay the key's next chance.
func (l *Limiter) Charge(key string, now time.Time) {
	l.bucket(key).ReserveN(now, 1) // never refused: the wait for a debt is unbounded
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

// ClientKey is the rate-limit key of the client that sent r: [AddrKey] of
// [ClientAddr]. It is the one way scorehub's limiters name a client.
func ClientKey(r *http.Request, trustedProxies []netip.Prefix) string {
	return AddrKey(ClientAddr(r, trustedProxies))
}

// CheckProxies reports the first prefix of trustedProxies that is not
// valid.
func CheckProxies(trustedProxies []netip.Prefix) error {
	for _, p := range trustedProxies {
		if !p.IsValid() {
			return fmt.Errorf("invalid trusted proxy prefix %v", p)
		}
	}
	return nil
}

// ClientAddr returns the address of the client that sent r: the host of
// r.RemoteAddr, unless that is one of trustedProxies. Then X-Forwarded-For
// is read from its last entry backwards, skipping trusted proxies; the
// first other address is the client's. Entries further left were written
// by the client or by proxies nobody vouches for, and prove nothing. If
// every entry is a trusted proxy, the first one is returned; if an entry
// does not parse, the last trusted address before it. The zero Addr means
// r.RemoteAddr is not an IP address (a Unix socket, say). IPv4-mapped IPv6
// addresses are unmapped.
func ClientAddr(r *http.Request, trustedProxies []netip.Prefix) netip.Addr {
	addr := parseHop(r.RemoteAddr)
	if !addr.IsValid() || !inPrefixes(addr, trustedProxies) {
		return addr
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		list := hops[i]
		for list != "" {
			var hop string
			if j := strings.LastIndexByte(list, ','); j >= 0 {
				hop, list = list[j+1:], list[:j]
			} else {
				hop, list = list, ""
			}
			a := parseHop(strings.TrimSpace(hop))
			if !a.IsValid() {
				return addr
			}
			addr = a
			if !inPrefixes(a, trustedProxies) {
				return a
			}
		}
	}
	return addr
}

// parseHop parses an address as RemoteAddr and X-Forwarded-For give them:
// "host:port", "[v6]:port" or a bare address.
func parseHop(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return a.Unmap()
	}
	return netip.Addr{}
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
