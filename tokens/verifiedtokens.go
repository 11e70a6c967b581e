package tokens

import (
	"crypto/sha256"
	"slices"
	"sync"
)

// verifiedToken is a token a [Verifier] checked in full: its claims, and
// the key and algorithm its signature was checked with.
type verifiedToken struct {
	claims   *Claims
	kid, alg string
}

// verifiedTokens remembers verified tokens by their SHA-256, at most max
// of them: when full, an arbitrary one is forgotten for each added, which
// costs a client at most one more signature check. It is safe for
// concurrent use.
type verifiedTokens struct {
	max     int
	mu      sync.RWMutex
	entries map[[sha256.Size]byte]verifiedToken
}

func newVerifiedTokens(max int) *verifiedTokens {
	return &verifiedTokens{max: max, entries: make(map[[sha256.Size]byte]verifiedToken)}
}

func (m *verifiedTokens) get(sum [sha256.Size]byte) (verifiedToken, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.entries[sum]
	return e, ok
}

func (m *verifiedTokens) put(sum [sha256.Size]byte, e verifiedToken) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.entries[sum]; !ok && len(m.entries) >= m.max {
		for k := range m.entries { // map order: an arbitrary one
			delete(m.entries, k)
			break
		}
	}
	m.entries[sum] = e
}

func (m *verifiedTokens) forget(sum [sha256.Size]byte) {
	m.mu.Lock()
	delete(m.entries, sum)
	m.mu.Unlock()
}

// len is how many tokens are remembered.
func (m *verifiedTokens) len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.entries)
}

// clone returns a copy of c that shares no memory with it, so that what a
// caller does to its claims does not reach the ones remembered.
func (c *Claims) clone() *Claims {
	d := *c
	d.Groups = slices.Clone(c.Groups)
	d.Audience = slices.Clone(c.Audience)
	return &d
}
