package middleware

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"slices"
	"time"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/keyedlimit"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/tokens"
)

// rateLimitConfig configures rateLimit.
type rateLimitConfig struct {
	// Limit is the bucket each key draws from: one request regained every
	// Limit.Every, Limit.Burst at once after being idle, Limit.MaxKeys keys
	// tracked (zero means keyedlimit.DefaultMaxKeys, as in the token
	// service). It is the shape the token service's limits have. Every and
	// Burst are required here: a zero Every or Burst is an error, not a
	// default.
	Limit tokens.RateLimit
	// Key names the bucket a request draws from; requests with the same
	// key share one (an empty key is a key like any other). Nil means the
	// client's address, found with TrustedProxies as the token service
	// finds it, IPv6 addresses grouped by their /64 prefix (what one client
	// is commonly given), "" when the address is unknown (e.g. a Unix
	// socket).
	Key func(*http.Request) string
	// TrustedProxies are the addresses of reverse proxies whose
	// X-Forwarded-For entries are believed, for the default Key: the
	// client is the last address before them. Empty means none:
	// X-Forwarded-For is ignored, as any client can send it. Setting both
	// Key and TrustedProxies is an error.
	TrustedProxies []netip.Prefix
	// Now tells the time. Nil means time.Now.
	Now func() time.Time
	// Logger receives refusals at debug level. Nil means slog.Default().
	Logger *slog.Logger
}

// rateLimiter is a token bucket per key with bounded memory: the MaxKeys
// most recently seen keys are tracked, in LRU order. It is safe for
// concurrent use.
type rateLimiter struct {
	key    func(*http.Request) string
	now    func() time.Time
	logger *slog.Logger

	buckets *keyedlimit.Limiter
}

// newRateLimiter returns a rateLimiter for cfg. It fails on a missing
// Every or Burst, a negative field, an invalid trusted proxy prefix, or
// both Key and TrustedProxies set.
func newRateLimiter(cfg rateLimitConfig) (*rateLimiter, error) {
	if cfg.Key != nil && len(cfg.TrustedProxies) > 0 {
		return nil, errors.New("middleware: rate limit takes a Key or TrustedProxies, not both")
	}
	if err := keyedlimit.CheckProxies(cfg.TrustedProxies); err != nil {
		return nil, fmt.Errorf("middleware: %w", err)
	}
	buckets, err := keyedlimit.New(cfg.Limit.Every, cfg.Limit.Burst, cfg.Limit.MaxKeys)
	if err != nil {
		return nil, fmt.Errorf("middleware: %w", err)
	}
	l := &rateLimiter{key: cfg.Key, now: cfg.Now, logger: cfg.Logger, buckets: buckets}
	if l.key == nil {
		trusted := slices.Clone(cfg.TrustedProxies)
		l.key = func(r *http.Request) string { return keyedlimit.ClientKey(r, trusted) }
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.logger == nil {
		l.logger = slog.Default()
	}
	return l, nil
}

// rateLimit returns middleware that lets a request through if its key has
// a request left in its bucket, and refuses it with 429 rate_limited and
// Retry-After (whole seconds, at least 1) if not. The buckets are a token
// bucket (rate.Limiter) per key in bounded memory: the MaxKeys most
// recently seen keys are tracked, in LRU order. The middleware is safe for
// concurrent use.
func rateLimit(cfg rateLimitConfig) (func(http.Handler) http.Handler, error) {
	l, err := newRateLimiter(cfg)
	if err != nil {
		return nil, err
	}
	return l.middleware, nil
}

// middleware lets a request through to next if its key has a token left,
// and answers it 429 rate_limited with Retry-After if not.
func (l *rateLimiter) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait, ok := l.allow(l.key(r))
		if !ok {
			secs := max(int(math.Ceil(wait.Seconds())), 1)
			httperr.Write(w, r, l.logger, httperr.Newf(problem.RateLimited,
				"too many requests; retry in %d seconds", secs).WithRetryAfter(secs))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// allow takes a token from key's bucket. If there is none, it takes
// nothing and reports how long until there will be one.
func (l *rateLimiter) allow(key string) (wait time.Duration, ok bool) {
	return l.buckets.Take(key, l.now())
}
