package tokens

import (
	"fmt"
	"time"

	"github.com/scorehub/scorehub/internal/keyedlimit"
	"github.com/scorehub/scorehub/internal/loginlimit"
)

// RateLimit configures a limit on attempts per key (a client address, a
// user name): a token bucket of Burst attempts, refilled by one every Every.
// It is the one shape of a limit in scorehub: the token service's
// AddressLimit, AddressFailureLimit, UserAddressLimit and UserFailureLimit
// and the failure limits of middleware.CredentialsConfig take it.
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

// Defaults of the limits on failed logins: the token service's
// ([ServiceConfig].AddressFailureLimit, UserAddressLimit and
// UserFailureLimit), which middleware.Credentials applies to wrong Basic
// passwords too.
const (
	DefaultFailureEvery            = loginlimit.DefaultEvery            // 6 s
	DefaultAddressFailureBurst     = loginlimit.DefaultAddressBurst     // 20
	DefaultUserAddressFailureBurst = loginlimit.DefaultUserAddressBurst // 10
	// A user's failures from every address together: 20 at once, then
	// one a minute, 1,440 a day however many addresses guess.
	DefaultUserFailureEvery = loginlimit.DefaultUserEvery // 1 min
	DefaultUserFailureBurst = loginlimit.DefaultUserBurst // 20
)

// WithDefaults returns l with a zero Every and a zero Burst replaced by
// every and burst.
func (l RateLimit) WithDefaults(every time.Duration, burst int) RateLimit {
	if l.Every == 0 {
		l.Every = every
	}
	if l.Burst == 0 {
		l.Burst = burst
	}
	return l
}

// limiter returns the limiter l describes, its zero Every and Burst taken
// from every and burst.
func (l RateLimit) limiter(every time.Duration, burst int) (*keyedlimit.Limiter, error) {
	l = l.WithDefaults(every, burst)
	lim, err := keyedlimit.New(l.Every, l.Burst, l.MaxKeys)
	if err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	return lim, nil
}
