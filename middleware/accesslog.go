package middleware

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/scorehub/scorehub/internal/keyedlimit"
	"github.com/scorehub/scorehub/internal/redact"
)

// AccessLogConfig configures [AccessLog].
type AccessLogConfig struct {
	// Logger receives one record per request. Nil means slog.Default().
	Logger *slog.Logger
	// Output, when not nil, receives the records instead of Logger, each
	// in one Write as one line of the text slog.NewTextHandler writes
	// with default options: what a server logging text to its standard
	// error would get through Logger, for about a third of the cost per
	// request. The line is put together by AccessLog itself, so Logger,
	// its handler's options and level and the attributes it was made With
	// do not apply: every record is written. Attrs are rendered once, when
	// AccessLog is called. Output must be safe for concurrent use, as
	// os.Stderr and a [LogWriter] are.
	Output io.Writer
	// Level of the records. The zero value is slog.LevelInfo.
	Level slog.Level
	// Message is the message of every record. Empty means "http request".
	Message string
	// Attrs are added to every record after the request's own, such as the
	// route of the one handler an AccessLog wraps.
	Attrs []slog.Attr
	// Audit makes every record name its subject, "" when no token was
	// accepted, and logs answers with a 5xx status at error level when
	// Level is lower: a trail of who did what, as the management API keeps
	// of its writes.
	Audit bool
	// Client adds the client's address to every record, after the
	// subject: who sent a request matters to an access log as much as what
	// it was.
	Client bool
	// TrustedProxies are the reverse proxies whose X-Forwarded-For entries
	// are believed when Client names the client: it is the last address
	// before them. None by default: the client is the request's
	// RemoteAddr, as any client can send X-Forwarded-For. A prefix that is
	// not valid matches no address.
	TrustedProxies []netip.Prefix
	// Now tells the time, to measure durations and to stamp records with
	// the time the answer was done. Nil means time.Now.
	Now func() time.Time
}

// AccessLog returns middleware that logs one record per request once the
// handler is done, with the attributes method, path (never the query, which
// may carry secrets, and with any secret the path holds replaced by
// redact.Secrets), status, bytes (of the body sent), duration, and, when
// known, subject (the token's holder, from [Bearer] or [Credentials]),
// client with cfg.Client, then cfg.Attrs. The subject is picked up whether
// Bearer runs outside or inside AccessLog. A handler that panics before
// sending headers is logged with status 500. When the logger is not enabled
// at the level, requests pass through untouched. The middleware is safe for
// concurrent use.
//
// Records are handed straight to the logger's [slog.Handler] and carry no
// source position (their PC is zero): every one would name the same line
// of this package, and finding it costs a stack walk per request. Their
// time is the one the duration ends at. With cfg.Output, AccessLog writes
// the same records as text lines itself.
func AccessLog(cfg AccessLogConfig) func(http.Handler) http.Handler {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	// A Logger's handler never changes, and one made with Logger.With
	// keeps its attributes there.
	handler := logger.Handler()
	now, began := cfg.Now, cfg.Now
	if now == nil {
		// A request's start is only subtracted from its end, never
		// logged: it is read off the monotonic clock alone, as an offset
		// from when the middleware was made, which costs one clock read
		// where time.Now costs two.
		epoch := time.Now()
		now = time.Now
		began = func() time.Time { return epoch.Add(time.Since(epoch)) }
	}
	level := cfg.Level
	msg := cfg.Message
	if msg == "" {
		msg = "http request"
	}
	extra := slices.Clone(cfg.Attrs)
	logClient, trusted := cfg.Client, slices.Clone(cfg.TrustedProxies)
	audit := cfg.Audit
	faultLevel := level
	if audit {
		faultLevel = max(level, slog.LevelError)
	}
	enabled := handler.Enabled
	var lines *lineWriter
	if cfg.Output != nil {
		lines = newLineWriter(cfg.Output, level, faultLevel, msg, extra)
		enabled = func(context.Context, slog.Level) bool { return true }
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			if !enabled(ctx, level) && (faultLevel == level || !enabled(ctx, faultLevel)) {
				next.ServeHTTP(w, r)
				return
			}
			start := began()
			// One allocation carries what the request needs: the context
			// that hands the log's fields to the pieces inside, those
			// fields, and the writer that counts the answer.
			st := &logState{Context: ctx}
			st.li.requestID = requestIDFrom(ctx)
			if c, ok := ClaimsFrom(ctx); ok {
				st.li.subject = c.Subject
			}
			var rw *responseWriter
			if prev, ok := w.(*responseWriter); ok {
				rw = prev
			} else {
				st.rw.ResponseWriter = w
				rw = &st.rw
			}
			li := &st.li
			done := false
			defer func() {
				status := rw.status
				if status == 0 {
					status = http.StatusOK
					if !done {
						status = http.StatusInternalServerError
					}
				}
				lvl := level
				if status >= 500 {
					lvl = faultLevel
				}
				if !enabled(ctx, lvl) {
					return
				}
				end := now()
				rec := accessRecord{end: end, fault: lvl != level,
					method: r.Method, path: redact.Secrets(r.URL.Path), status: status, bytes: rw.written, duration: end.Sub(start),
					requestID: li.requestID, subject: li.subject, withSubject: li.subject != "" || audit}
				if logClient {
					rec.client, rec.withClient = clientText(r, trusted), true
				}
				if lines != nil {
					lines.write(&rec)
					return
				}
				var buf [9]slog.Attr // the most the request's own take: no allocation
				sr := slog.NewRecord(end, lvl, msg, 0)
				sr.AddAttrs(append(rec.attrs(buf[:0]), extra...)...)
				_ = handler.Handle(ctx, sr) // as Logger.LogAttrs, which has nowhere to report it either
			}()
			next.ServeHTTP(rw, r.WithContext(st))
			done = true
		})
	}
}

// logState is the context AccessLog hands on, with the fields it logs and
// the writer that counts the answer, so that a request costs one
// allocation for all three.
type logState struct {
	context.Context
	li logInfo
	rw responseWriter
}

func (s *logState) Value(key any) any {
	if key == (logInfoKey{}) {
		return &s.li
	}
	return s.Context.Value(key)
}

// clientText is the client's address as netip.Addr.String writes it. In
// the common case, RemoteAddr's host already is that text, and is used
// as it is rather than formatted again.
func clientText(r *http.Request, trusted []netip.Prefix) string {
	if len(trusted) == 0 {
		// The client is the connection's: most often "IPv4:port", whose
		// host netip reads only when it is written as netip writes it
		// (it refuses leading zeros), so that it is the text as it is.
		ra := r.RemoteAddr
		if ap, err := netip.ParseAddrPort(ra); err == nil && ap.Addr().Is4() {
			return ra[:strings.LastIndexByte(ra, ':')]
		}
	}
	a := keyedlimit.ClientAddr(r, trusted)
	if !a.IsValid() {
		return r.RemoteAddr
	}
	var buf [64]byte
	text := a.AppendTo(buf[:0])
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil && host == string(text) {
		return host
	}
	return string(text)
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
