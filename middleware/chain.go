package middleware

import "net/http"

// Chain composes middleware so that the first runs first (outermost):
// Chain(a, b, c)(h) is a(b(c(h))). Chain() returns h unchanged.
func Chain(mw ...func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		for i := len(mw) - 1; i >= 0; i-- {
			h = mw[i](h)
		}
		return h
	}
}
