package middleware

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// AccessLogConfig configures [AccessLog].
type AccessLogConfig struct {
	// Logger receives one record per request. Nil means slog.Default().
	Logger *slog.Logger
	// Level of the records. The zero value is slog.LevelInfo.
	Level slog.Level
	// Now tells the time, to measure durations. Nil means time.Now.
	Now func() time.Time
}

// AccessLog returns middleware that logs one "http request" record per
// request once the handler is done, with the attributes method, path (never
// the query, which may carry secrets), status, bytes (of the body sent),
// duration, and, when known, request_id ([RequestID]) and subject (the
// token's holder, from [Bearer] or [ScoringAuth]). Both are picked up
// whether those pieces run outside or inside AccessLog. A handler that
// panics before sending headers is logged with status 500, the answer
// [Recover] gives it. When the logger is not enabled at the level, requests
// pass through untouched.
func AccessLog(cfg AccessLogConfig) func(http.Handler) http.Handler {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	level := cfg.Level
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			if !logger.Enabled(ctx, level) {
				next.ServeHTTP(w, r)
				return
			}
			start := now()
			li := &logInfo{requestID: RequestIDFrom(ctx)}
			if c, ok := ClaimsFrom(ctx); ok {
				li.subject = c.Subject
			}
			rw := wrapWriter(w)
			done := false
			defer func() {
				status := rw.status
				if status == 0 {
					status = http.StatusOK
					if !done {
						status = http.StatusInternalServerError
					}
				}
				attrs := make([]slog.Attr, 0, 8)
				attrs = append(attrs,
					slog.String("method", r.Method),
					slog.String("path", r.URL.Path),
					slog.Int("status", status),
					slog.Int64("bytes", rw.written),
					slog.Duration("duration", now().Sub(start)),
				)
				if li.requestID != "" {
					attrs = append(attrs, slog.String("request_id", li.requestID))
				}
				if li.subject != "" {
					attrs = append(attrs, slog.String("subject", li.subject))
				}
				logger.LogAttrs(ctx, level, "http request", attrs...)
			}()
			next.ServeHTTP(rw, r.WithContext(context.WithValue(ctx, logInfoKey{}, li)))
			done = true
		})
	}
}

type logInfoKey struct{}

// logInfo is where pieces running inside AccessLog leave what it logs.
// Handlers write it before AccessLog reads it, on the request's goroutine.
type logInfo struct {
	requestID string
	subject   string
}

func logInfoFrom(ctx context.Context) *logInfo {
	li, _ := ctx.Value(logInfoKey{}).(*logInfo)
	return li
}
