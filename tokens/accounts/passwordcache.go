package accounts

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/scorehub/scorehub/tokens"
	"hash"
	"runtime"
	"sync"
	"time"
)

// Defaults of [PasswordCacheConfig].
const (
	DefaultPasswordCacheTTL        = time.Minute
	DefaultPasswordCacheMaxEntries = 10_000
)

// PasswordCacheConfig configures a [PasswordCache].
type PasswordCacheConfig struct {
	// Users checks the user names and passwords the cache has not seen.
	// Required.
	Users tokens.Authenticator
	// Credentials tells the current credential version of each user. A
	// remembered check counts only while the user's version is still the
	// one the check found, so a user removed, or whose password or groups
	// changed, is checked afresh at once. Required; the principals Users
	// returns must carry a CredentialVersion (as [StaticUsers] and
	// [Book] set it), or nothing is remembered.
	Credentials tokens.CredentialSource
	// TTL is how long a check is remembered. Zero means
	// [DefaultPasswordCacheTTL].
	TTL time.Duration
	// MaxEntries bounds how many checks are remembered at once; past it,
	// the oldest are forgotten first. Zero means
	// [DefaultPasswordCacheMaxEntries].
	MaxEntries int
	// MaxConcurrentChecks caps how many checks Users runs at once (each
	// one a bcrypt comparison, tens of milliseconds of a core); more wait
	// their turn, so that a burst of new or wrong passwords cannot take
	// every core from the requests the cache answers. Zero means
	// GOMAXPROCS.
	MaxConcurrentChecks int
	// Now is the cache's clock; nil means time.Now.
	Now func() time.Time
}

// PasswordCache is an [tokens.Authenticator] that remembers, for a short time, the
// user names and passwords its Users accepted, so that a service taking
// HTTP Basic credentials on every request pays for a bcrypt comparison once
// per user and TTL rather than on every request. It remembers them under a
// keyed hash of the name and password (HMAC-SHA-256 with a key drawn when
// the cache is made, never stored), not the password itself, and never
// remembers a refusal: limiting wrong guesses is the caller's part. A
// remembered check is dropped at once when its user's credential version
// changes. A PasswordCache is safe for concurrent use.
type PasswordCache struct {
	users   tokens.Authenticator
	creds   tokens.CredentialSource
	ttl     time.Duration
	max     int
	now     func() time.Time
	checks  chan struct{}
	hashers sync.Pool // of *keyHasher

	mu      sync.RWMutex
	entries map[[sha256.Size]byte]cachedCheck
	order   [][sha256.Size]byte // keys in the order they were added, for eviction
}

// cachedCheck is one remembered check.
type cachedCheck struct {
	principal tokens.Principal
	expires   time.Time
}

var _ tokens.Authenticator = (*PasswordCache)(nil)

// NewPasswordCache checks cfg and returns a PasswordCache.
func NewPasswordCache(cfg PasswordCacheConfig) (*PasswordCache, error) {
	switch {
	case cfg.Users == nil:
		return nil, errors.New("tokens: PasswordCacheConfig.Users is required")
	case cfg.Credentials == nil:
		return nil, errors.New("tokens: PasswordCacheConfig.Credentials is required")
	case cfg.TTL < 0, cfg.MaxEntries < 0, cfg.MaxConcurrentChecks < 0:
		return nil, fmt.Errorf("tokens: PasswordCacheConfig TTL %v, MaxEntries %d and MaxConcurrentChecks %d may not be negative",
			cfg.TTL, cfg.MaxEntries, cfg.MaxConcurrentChecks)
	}
	c := &PasswordCache{users: cfg.Users, creds: cfg.Credentials, ttl: cfg.TTL, max: cfg.MaxEntries, now: cfg.Now,
		entries: make(map[[sha256.Size]byte]cachedCheck)}
	if c.ttl == 0 {
		c.ttl = DefaultPasswordCacheTTL
	}
	if c.max == 0 {
		c.max = DefaultPasswordCacheMaxEntries
	}
	if c.now == nil {
		c.now = time.Now
	}
	n := cfg.MaxConcurrentChecks
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	c.checks = make(chan struct{}, n)
	key := make([]byte, 32)
	rand.Read(key) // never fails: crypto/rand panics rather than return an error
	c.hashers.New = func() any { return &keyHasher{mac: hmac.New(sha256.New, key)} }
	return c, nil
}

// keyHasher computes keys: an HMAC and a buffer for its input and output,
// reused so that a lookup allocates nothing.
type keyHasher struct {
	mac hash.Hash
	buf []byte
}

// key is the keyed hash a check of name and password is remembered under.
// The name's length comes first, so that no two pairs share an input.
func (c *PasswordCache) key(name, password string) [sha256.Size]byte {
	h := c.hashers.Get().(*keyHasher)
	h.mac.Reset()
	h.buf = binary.BigEndian.AppendUint32(h.buf[:0], uint32(len(name)))
	h.buf = append(append(h.buf, name...), password...)
	h.mac.Write(h.buf)
	clear(h.buf) // the password does not outlive the call in the pool
	var k [sha256.Size]byte
	copy(k[:], h.mac.Sum(h.buf[:0]))
	c.hashers.Put(h)
	return k
}

// Authenticate returns the principal of name if password is theirs: from
// memory when the same name and password were accepted within the TTL and
// the user's credential version has not changed since, else from Users.
// Errors are those of Users (an error matching [tokens.ErrBadCredentials] for a
// wrong name or password), and of Credentials when it cannot answer.
// The principal's Groups must not be modified.
func (c *PasswordCache) Authenticate(ctx context.Context, name, password string) (tokens.Principal, error) {
	k := c.key(name, password)
	p, ok, err := c.remembered(ctx, k)
	if ok || err != nil {
		return p, err
	}

	select {
	case c.checks <- struct{}{}:
	case <-ctx.Done():
		return tokens.Principal{}, ctx.Err()
	}
	p, err = c.users.Authenticate(ctx, name, password)
	<-c.checks
	if err != nil || p.CredentialVersion == "" {
		return p, err
	}
	c.remember(k, p, c.now().Add(c.ttl))
	return p, nil
}

// Remembered returns the principal of name if the same name and password
// were accepted within the TTL and the user's credential version has not
// changed since, without asking Users: ok is false when no such check is
// remembered. A caller that limits failed attempts can let a remembered
// check through before it looks at its limits, since it proves the
// password right. The principal's Groups must not be modified.
func (c *PasswordCache) Remembered(ctx context.Context, name, password string) (p tokens.Principal, ok bool, err error) {
	return c.remembered(ctx, c.key(name, password))
}

// remembered looks up the check under k, forgetting it if it is stale.
func (c *PasswordCache) remembered(ctx context.Context, k [sha256.Size]byte) (tokens.Principal, bool, error) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	if !ok {
		return tokens.Principal{}, false, nil
	}
	if c.now().Before(e.expires) {
		v, known, err := c.creds.CredentialVersion(ctx, e.principal.Subject)
		if err != nil {
			return tokens.Principal{}, false, err
		}
		if known && v == e.principal.CredentialVersion {
			return e.principal, true, nil
		}
	}
	c.forget(k)
	return tokens.Principal{}, false, nil
}

// remember adds a check, forgetting the oldest ones when full.
func (c *PasswordCache) remember(k [sha256.Size]byte, p tokens.Principal, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.entries[k]; !dup {
		for len(c.entries) >= c.max && len(c.order) > 0 {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
		c.order = append(c.order, k)
	}
	c.entries[k] = cachedCheck{principal: p, expires: expires}
	// Keys forgotten by forget stay in order until their turn; compact
	// when they outnumber the live ones, so order stays bounded.
	if len(c.order) > 2*c.max {
		live := c.order[:0:0]
		for _, o := range c.order {
			if _, ok := c.entries[o]; ok {
				live = append(live, o)
			}
		}
		c.order = live
	}
}

// forget drops a check that expired or whose user changed.
func (c *PasswordCache) forget(k [sha256.Size]byte) {
	c.mu.Lock()
	delete(c.entries, k)
	c.mu.Unlock()
}

// Len returns how many checks are remembered now, expired ones included
// until they are next looked up or evicted.
func (c *PasswordCache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
