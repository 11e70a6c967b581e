package middleware

import (
	"context"
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

// The pieces nothing outside the package uses, under the names the
// external tests know them by.
var (
	RateLimit     = rateLimit
	Recover       = recoverPanics
	RequestID     = requestID
	RequestIDFrom = requestIDFrom
	RequireGroup  = requireGroup
)

// Chain composes middleware so that the first runs first (outermost):
// Chain(a, b, c)(h) is a(b(c(h))).
func Chain(mw ...func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		for i := len(mw) - 1; i >= 0; i-- {
			h = mw[i](h)
		}
		return h
	}
}

// WithClaims returns a copy of ctx that carries c, as Bearer does for the
// requests it lets through.
func WithClaims(ctx context.Context, c *tokens.Claims) context.Context {
	return withAuth(ctx, c, nil)
}

type (
	RateLimitConfig = rateLimitConfig
	RequestIDConfig = requestIDConfig
)

const DefaultRequestIDHeader = defaultRequestIDHeader
