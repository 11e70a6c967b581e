package middleware

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/keyedlimit"
)

// DefaultMaxKeys is how many clients a [RateLimiter] tracks when
// [RateLimitConfig.MaxKeys] is zero.
const DefaultMaxKeys = 10000

// RateLimitConfig configures a [RateLimiter].
type RateLimitConfig struct {
	// Rate is how many requests per second each key may make on average.
	// Required: positive and finite.
	Rate rate.Limit
	// Burst is how many requests a key may make at once after being idle.
	// Required: at least 1.
	Burst int
	// Key names the bucket a request draws from; requests with the same
	// key share one (an empty key is a key like any other). Nil means the
	// client's address as ClientIP finds it with TrustedProxies, IPv6
	// addresses grouped by their /64 prefix (what one client is commonly
	// given), "" when the address is unknown (e.g. a Unix socket).
	Key func(*http.Request) string
	// TrustedProxies are the addresses of reverse proxies whose
	// X-Forwarded-For entries are believed, for the default Key. Empty
	// means none: X-Forwarded-For is ignored, as any client can send it.
	// Setting both Key and TrustedProxies is an error.
	TrustedProxies []netip.Prefix
	// MaxKeys bounds how many keys are tracked; past it the least recently
	// seen key is forgotten (its next request starts with a full bucket).
	// Zero means DefaultMaxKeys; negative is an error.
	MaxKeys int
	// Now tells the time. Nil means time.Now.
	Now func() time.Time
	// Logger receives refusals at debug level. Nil means slog.Default().
	Logger *slog.Logger
}

// RateLimiter is a token bucket (rate.Limiter) per key with bounded memory:
// the MaxKeys most recently seen keys are tracked, in LRU order.
// [RateLimiter.Allow] is the check; [RateLimiter.Middleware] answers
// requests over the limit with 429 rate_limited and Retry-After. It is safe
// for concurrent use.
type RateLimiter struct {
	limit  rate.Limit
	burst  int
	key    func(*http.Request) string
	max    int
	now    func() time.Time
	logger *slog.Logger

	buckets *keyedlimit.Limiter
}

// NewRateLimiter returns a RateLimiter for cfg. It fails on a missing or
// unlimited rate, a burst below 1, a negative MaxKeys, an invalid trusted
// proxy prefix, or both Key and TrustedProxies set.
func NewRateLimiter(cfg RateLimitConfig) (*RateLimiter, error) {
	if !(cfg.Rate > 0) || cfg.Rate == rate.Inf || math.IsInf(float64(cfg.Rate), 1) {
		return nil, fmt.Errorf("middleware: rate limit needs a positive, finite Rate, not %v", float64(cfg.Rate))
	}
	if cfg.Burst < 1 {
		return nil, fmt.Errorf("middleware: rate limit needs a Burst of at least 1, not %d", cfg.Burst)
	}
	if cfg.MaxKeys < 0 {
		return nil, fmt.Errorf("middleware: rate limit MaxKeys must not be negative, not %d", cfg.MaxKeys)
	}
	if cfg.Key != nil && len(cfg.TrustedProxies) > 0 {
		return nil, errors.New("middleware: rate limit takes a Key or TrustedProxies, not both")
	}
	for _, p := range cfg.TrustedProxies {
		if !p.IsValid() {
			return nil, fmt.Errorf("middleware: invalid trusted proxy prefix %v", p)
		}
	}
	l := &RateLimiter{
		limit:  cfg.Rate,
		burst:  cfg.Burst,
		key:    cfg.Key,
		max:    cfg.MaxKeys,
		now:    cfg.Now,
		logger: cfg.Logger,
	}
	if l.key == nil {
		trusted := append([]netip.Prefix(nil), cfg.TrustedProxies...)
		l.key = func(r *http.Request) string { return keyedlimit.AddrKey(ClientIP(r, trusted)) }
	}
	if l.max == 0 {
		l.max = DefaultMaxKeys
	}
	l.buckets = keyedlimit.New(l.limit, l.burst, l.max)
	if l.now == nil {
		l.now = time.Now
	}
	if l.logger == nil {
		l.logger = slog.Default()
	}
	return l, nil
}

// RateLimit returns middleware that refuses requests over the limit of
// cfg with 429 rate_limited and a Retry-After header. See [RateLimiter].
func RateLimit(cfg RateLimitConfig) (func(http.Handler) http.Handler, error) {
	l, err := NewRateLimiter(cfg)
	if err != nil {
		return nil, err
	}
	return l.Middleware, nil
}

// Middleware lets a request through to next if its key has a token left,
// and answers it 429 rate_limited with Retry-After (whole seconds, at
// least 1) if not.
func (l *RateLimiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait, ok := l.Allow(l.key(r))
		if !ok {
			secs := max(int(math.Ceil(wait.Seconds())), 1)
			httperr.Write(w, r, l.logger, httperr.Newf(httperr.TypeRateLimited,
				"too many requests; retry in %d seconds", secs).WithRetryAfter(secs))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Allow takes a token from key's bucket. If there is none, it takes
// nothing and reports how long until there will be one.
func (l *RateLimiter) Allow(key string) (wait time.Duration, ok bool) {
	return l.buckets.Take(key, l.now())
}

// Len returns how many keys are tracked.
func (l *RateLimiter) Len() int { return l.buckets.Len() }

// ClientIP returns the address of the client that sent r: the host of
// r.RemoteAddr, unless that is one of trustedProxies. Then X-Forwarded-For
// is read from its last entry backwards, skipping trusted proxies; the
// first other address is the client's. Entries further left were written
// by the client or by proxies nobody vouches for, and prove nothing. If
// every entry is a trusted proxy, the first one is returned; if an entry
// does not parse, the last trusted address before it. The zero Addr means
// r.RemoteAddr is not an IP address (a Unix socket, say). IPv4-mapped IPv6
// addresses are unmapped.
func ClientIP(r *http.Request, trustedProxies []netip.Prefix) netip.Addr {
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
