package tokens

import (
	"container/list"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit configures a limit on attempts per key (a client address, a
// user name): a token bucket of Burst attempts, refilled by one every Every.
type RateLimit struct {
	// Every is the time to regain one attempt. Zero means the default of
	// the limit it configures.
	Every time.Duration
	// Burst is the number of attempts a fresh key may make at once. Zero
	// means the default of the limit it configures.
	Burst int
	// MaxKeys bounds how many keys are tracked at once, and so the memory
	// used. When full, the key used least recently is forgotten (an idle key
	// loses nothing by it). Zero means 10,000.
	MaxKeys int
}

const defaultMaxKeys = 10_000

func (l RateLimit) withDefaults(every time.Duration, burst int) (RateLimit, error) {
	if l.Every < 0 || l.Burst < 0 || l.MaxKeys < 0 {
		return l, fmt.Errorf("tokens: rate limit %+v has a negative field", l)
	}
	if l.Every == 0 {
		l.Every = every
	}
	if l.Burst == 0 {
		l.Burst = burst
	}
	if l.MaxKeys == 0 {
		l.MaxKeys = defaultMaxKeys
	}
	return l, nil
}

// keyedLimiter is a token bucket per key, in bounded memory (LRU).
type keyedLimiter struct {
	limit   rate.Limit
	burst   int
	maxKeys int

	mu      sync.Mutex
	entries map[string]*list.Element // of *limiterEntry
	lru     list.List                // front: used most recently
}

type limiterEntry struct {
	key string
	lim *rate.Limiter
}

func newKeyedLimiter(l RateLimit) *keyedLimiter {
	return &keyedLimiter{limit: rate.Every(l.Every), burst: l.Burst, maxKeys: l.MaxKeys,
		entries: make(map[string]*list.Element)}
}

// take spends one attempt of key at now. It returns 0 if the attempt may go
// ahead, or how long until it could.
func (k *keyedLimiter) take(key string, now time.Time) time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	var lim *rate.Limiter
	if el, ok := k.entries[key]; ok {
		k.lru.MoveToFront(el)
		lim = el.Value.(*limiterEntry).lim
	} else {
		if len(k.entries) >= k.maxKeys {
			oldest := k.lru.Back()
			k.lru.Remove(oldest)
			delete(k.entries, oldest.Value.(*limiterEntry).key)
		}
		lim = rate.NewLimiter(k.limit, k.burst)
		k.entries[key] = k.lru.PushFront(&limiterEntry{key: key, lim: lim})
	}
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d
	}
	return 0
}

// size is the number of keys tracked.
func (k *keyedLimiter) size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.entries)
}

// RemoteAddrKey is the default client key for rate limits: the host of
// r.RemoteAddr, with IPv6 addresses cut to their /64 prefix, since one
// client usually holds a whole /64. Behind a reverse proxy every request
// has the proxy's address; set [Config].ClientAddr to read the client's
// from a header the proxy sets.
func RemoteAddrKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64) // cannot fail for an IPv6 address
		return p.String()
	}
	return ip.String()
}
