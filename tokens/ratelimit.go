package tokens

import (
	"fmt"
	"time"

	"github.com/scorehub/scorehub/internal/keyedlimit"
	"golang.org/x/time/rate"
)

// RateLimit configures a limit on attempts per key (a client address, a
// user name): a token bucket of Burst attempts, refilled by one every Every.
// It is the one shape of a limit in scorehub: the token service's
// AddressLimit and UserLimit and the rate-limit middleware
// (middleware.RateLimitConfig.Limit) take it.
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

func (l RateLimit) limiter() *keyedlimit.Limiter {
	return keyedlimit.New(rate.Every(l.Every), l.Burst, l.MaxKeys)
}
