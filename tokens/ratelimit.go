package tokens

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/scorehub/scorehub/internal/keyedlimit"
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

func (l RateLimit) limiter() *keyedlimit.Limiter {
	return keyedlimit.New(rate.Every(l.Every), l.Burst, l.MaxKeys)
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
	return keyedlimit.AddrKey(ip)
}
