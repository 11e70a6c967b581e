package middleware

import (
	"net/http"
	"time"

	"github.com/scorehub/scorehub/tokens"
)

// RateLimiter gives the external tests the limiter behind RateLimit.
type RateLimiter struct{ l *rateLimiter }

// NewRateLimiter is newRateLimiter for the external tests.
func NewRateLimiter(cfg RateLimitConfig) (*RateLimiter, error) {
	l, err := newRateLimiter(cfg)
	if err != nil {
		return nil, err
	}
	return &RateLimiter{l}, nil
}

func (l *RateLimiter) Allow(key string) (time.Duration, bool) { return l.l.allow(key) }

func (l *RateLimiter) Len() int { return l.l.buckets.Len() }

func (l *RateLimiter) Middleware(next http.Handler) http.Handler { return l.l.middleware(next) }

// Authenticator gives the external tests the check behind Bearer and the
// bearer tokens of Credentials.
type Authenticator struct{ a *authenticator }

// NewAuthenticator is newAuthenticator for the external tests.
func NewAuthenticator(cfg BearerConfig) (*Authenticator, error) {
	a, err := newAuthenticator(cfg)
	if err != nil {
		return nil, err
	}
	return &Authenticator{a}, nil
}

func (a *Authenticator) Authenticate(r *http.Request) (*tokens.Claims, error) {
	return a.a.authenticate(r)
}

func (a *Authenticator) Middleware(next http.Handler) http.Handler { return a.a.middleware(next) }
