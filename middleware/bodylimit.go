package middleware

import (
	"fmt"
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
)

// BodyLimit returns middleware that bounds request bodies to limit bytes.
// A request whose Content-Length already says more is answered 413
// body_too_large at once, without reading the body or calling the handler.
// Other bodies (chunked ones, or ones that lie about their length) are read
// through http.MaxBytesReader: reading past the limit fails with an
// *http.MaxBytesError, which httperr.From, and so every scorehub handler,
// answers with the same 413. limit must be positive.
func BodyLimit(limit int64) (func(http.Handler) http.Handler, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("middleware: body limit must be positive, not %d", limit)
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > limit {
				// Reading none of it, the server will close the connection
				// rather than drain a large body.
				httperr.Write(w, r, nil, &http.MaxBytesError{Limit: limit})
				return
			}
			if r.Body != nil && r.Body != http.NoBody {
				r2 := *r
				r2.Body = http.MaxBytesReader(w, r.Body, limit)
				r = &r2
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}
