package middleware

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/redact"
	"github.com/scorehub/scorehub/problem"
)

// recoverPanics returns middleware that turns a panic in the handler into
// a JSON 500 internal_error saying only "internal error", and logs the
// panic value and stack to logger at error level (nil means
// slog.Default()). If the
// handler had already sent headers, the response cannot be replaced: the
// connection is aborted (by panicking with http.ErrAbortHandler) so the
// client sees a failure, not a truncated answer. A panic with
// http.ErrAbortHandler itself is passed on untouched, since it is how a
// handler asks net/http to abort quietly.
func recoverPanics(logger *slog.Logger) func(http.Handler) http.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rw := wrapWriter(w)
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(v)
				}
				attrs := []slog.Attr{
					slog.String("method", r.Method),
					slog.String("path", redact.Secrets(r.URL.Path)),
					slog.String("panic", fmt.Sprint(v)),
					slog.String("stack", string(debug.Stack())),
				}
				if id := requestIDOf(r.Context()); id != "" {
					attrs = append(attrs, slog.String("request_id", id))
				}
				logger.LogAttrs(r.Context(), slog.LevelError, "panic serving request", attrs...)
				if rw.status != 0 {
					panic(http.ErrAbortHandler)
				}
				httperr.Write(rw, r, discard, httperr.New(problem.Internal, "internal error")) // logged above, with the stack
			}()
			next.ServeHTTP(rw, r)
		})
	}
}

// discard is the logger of answers whose cause is logged already.
var discard = slog.New(slog.DiscardHandler)
