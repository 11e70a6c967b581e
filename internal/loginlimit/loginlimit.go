package loginlimit

import (
	"container/list"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/scorehub/scorehub/internal/keyedlimit"
)

// Limit is a token bucket per key: Burst failures at once, one more every
// Every, for at most MaxKeys keys (zero: keyedlimit.DefaultMaxKeys), the
// one used least recently forgotten first.
type Limit struct {
	Every   time.Duration
	Burst   int
	MaxKeys int
}

// Config configures a [Guard]. A zero Every or Burst means the limit's
// default.
type Config struct {
	// Address limits failures per client address, whatever the names.
	// Zero fields mean DefaultAddressBurst and DefaultEvery.
	Address Limit
	// UserAddress limits failures per user name and client address. Zero
	// fields mean DefaultUserAddressBurst and DefaultEvery.
	UserAddress Limit
	// User limits failures per user name, across addresses. An address
	// the user has logged in from (one of the last GoodAddresses) is not
	// held by it. Zero fields mean DefaultUserBurst and DefaultUserEvery.
	User Limit
	// GoodAddresses is how many addresses a user's successful logins are
	// remembered from, for as many users as User.MaxKeys. Zero means
	// [DefaultGoodAddresses].
	GoodAddresses int
}

// Defaults of the limits.
const (
	DefaultEvery            = 6 * time.Second
	DefaultAddressBurst     = 20
	DefaultUserAddressBurst = 10
	DefaultUserEvery        = time.Minute
	DefaultUserBurst        = 20
)

// withDefaults returns l with a zero Every and a zero Burst replaced.
func (l Limit) withDefaults(every time.Duration, burst int) Limit {
	if l.Every == 0 {
		l.Every = every
	}
	if l.Burst == 0 {
		l.Burst = burst
	}
	return l
}

// DefaultGoodAddresses is how many addresses of each user's logins are
// remembered unless Config says otherwise: a home, an office, a phone, a
// build server.
const DefaultGoodAddresses = 8

// maxName bounds the part of a user name a key is made of.
const maxName = 256

// Guard applies the limits of its Config. A Guard is safe for concurrent
// use.
type Guard struct {
	addr, pair, user *keyedlimit.Limiter

	goodPerUser, maxUsers int
	mu                    sync.Mutex
	good                  map[string]*list.Element // of *goodAddrs
	lru                   list.List                // most recently used first
}

// goodAddrs are the addresses a user logged in from, the latest first.
type goodAddrs struct {
	user  string
	addrs []string
}

// New returns the Guard cfg describes.
func New(cfg Config) (*Guard, error) {
	g := &Guard{goodPerUser: cfg.GoodAddresses, maxUsers: cfg.User.MaxKeys, good: make(map[string]*list.Element)}
	if g.goodPerUser == 0 {
		g.goodPerUser = DefaultGoodAddresses
	}
	if g.goodPerUser < 0 {
		return nil, fmt.Errorf("login limit: GoodAddresses %d is negative", cfg.GoodAddresses)
	}
	if g.maxUsers == 0 {
		g.maxUsers = keyedlimit.DefaultMaxKeys
	}
	for _, l := range []struct {
		name string
		lim  **keyedlimit.Limiter
		cfg  Limit
	}{
		{"address", &g.addr, cfg.Address.withDefaults(DefaultEvery, DefaultAddressBurst)},
		{"user and address", &g.pair, cfg.UserAddress.withDefaults(DefaultEvery, DefaultUserAddressBurst)},
		{"user", &g.user, cfg.User.withDefaults(DefaultUserEvery, DefaultUserBurst)},
	} {
		lim, err := keyedlimit.New(l.cfg.Every, l.cfg.Burst, l.cfg.MaxKeys)
		if err != nil {
			return nil, fmt.Errorf("login limit per %s: %w", l.name, err)
		}
		*l.lim = lim
	}
	return g, nil
}

// UserKey is the key of a user name: case-folded, so that an authenticator
// that ignores case cannot be guessed against under many spellings, and
// bounded in length.
func UserKey(name string) string {
	if len(name) > maxName {
		name = name[:maxName]
	}
	return strings.ToLower(name)
}

// Check reports whether a password for name may be checked from client (a
// keyedlimit.ClientKey), and if not, how long until it may. It charges
// nothing: only [Guard.Failed] does.
func (g *Guard) Check(name, client string, now time.Time) (wait time.Duration, ok bool) {
	user := UserKey(name)
	if d, ok := g.addr.Check(client, now); !ok {
		return d, false
	}
	if d, ok := g.pair.Check(pairKey(user, client), now); !ok {
		return d, false
	}
	if d, ok := g.user.Check(user, now); !ok && !g.knows(user, client) {
		return d, false
	}
	return 0, true
}

// Failed charges a wrong password for name from client to every limit.
// It is called after the check, whatever others did meanwhile: a burst of
// guesses checked at once leaves the limits in debt.
func (g *Guard) Failed(name, client string, now time.Time) {
	user := UserKey(name)
	g.addr.Charge(client, now)
	g.pair.Charge(pairKey(user, client), now)
	g.user.Charge(user, now)
}

// Succeeded remembers client as an address name logged in from, which the
// limit per user does not hold from then on.
func (g *Guard) Succeeded(name, client string) {
	user := UserKey(name)
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.good[user]; ok {
		g.lru.MoveToFront(e)
		ga := e.Value.(*goodAddrs)
		for i, a := range ga.addrs {
			if a == client {
				copy(ga.addrs[1:i+1], ga.addrs[:i])
				ga.addrs[0] = client
				return
			}
		}
		if len(ga.addrs) < g.goodPerUser {
			ga.addrs = append(ga.addrs, "")
		}
		copy(ga.addrs[1:], ga.addrs)
		ga.addrs[0] = client
		return
	}
	g.good[user] = g.lru.PushFront(&goodAddrs{user: user, addrs: []string{client}})
	if g.lru.Len() > g.maxUsers {
		oldest := g.lru.Back()
		g.lru.Remove(oldest)
		delete(g.good, oldest.Value.(*goodAddrs).user)
	}
}

// knows reports whether user logged in from client lately.
func (g *Guard) knows(user, client string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	e, ok := g.good[user]
	if !ok {
		return false
	}
	for _, a := range e.Value.(*goodAddrs).addrs {
		if a == client {
			return true
		}
	}
	return false
}

// pairKey is the key of a user and an address: the address has no space,
// so it is unambiguous.
func pairKey(user, client string) string { return client + " " + user }
