package middleware_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/tokens"
)

// lineCase is one request logged both ways by sameLines.
type lineCase struct {
	cfg      middleware.AccessLogConfig // Logger, Output and Now are set by sameLines
	method   string
	path     string
	remote   string
	id       string // the X-Request-Id sent, if any
	subject  string // the accepted token's holder, if any
	status   int
	start    time.Time
	duration time.Duration
}

// sameLines logs c's request through a slog.TextHandler (Logger) and
// through Output, and fails unless both wrote the same bytes.
func sameLines(t *testing.T, c lineCase) {
	t.Helper()
	write := func(cfg middleware.AccessLogConfig) {
		calls := 0
		cfg.Now = func() time.Time {
			calls++
			if calls == 1 {
				return c.start
			}
			return c.start.Add(c.duration)
		}
		h := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
			w.Write([]byte("answer"))
		}))
		h = middleware.AccessLog(cfg)(h)
		if c.subject != "" {
			inner := h
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				inner.ServeHTTP(w, r.WithContext(middleware.WithClaims(r.Context(), &tokens.Claims{Subject: c.subject})))
			})
		}
		if c.id != "" {
			rid, err := middleware.RequestID(middleware.RequestIDConfig{})
			if err != nil {
				t.Fatal(err)
			}
			h = rid(h)
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Method, r.URL.Path = c.method, c.path
		if c.remote != "" {
			r.RemoteAddr = c.remote
		}
		if c.id != "" {
			r.Header.Set(middleware.DefaultRequestIDHeader, c.id)
		}
		serve(h, r)
	}
	var viaSlog, direct bytes.Buffer
	cfg := c.cfg
	cfg.Logger = slog.New(slog.NewTextHandler(&viaSlog, &slog.HandlerOptions{Level: slog.LevelDebug - 8}))
	write(cfg)
	cfg = c.cfg
	cfg.Output = &direct
	write(cfg)
	if viaSlog.String() != direct.String() {
		t.Errorf("Output wrote\n%q\nslog.TextHandler wrote\n%q", direct.String(), viaSlog.String())
	}
	if bytes.Count(direct.Bytes(), []byte("\n")) != 1 {
		t.Errorf("Output wrote %q, want one line", direct.String())
	}
}

// TestAccessLogOutput: with Output, AccessLog writes the very line a
// slog.TextHandler writes for its record, whatever the text in it needs
// (quotes, escapes), the time zone, the level and the attributes.
func TestAccessLogOutput(t *testing.T) {
	utc := time.Date(2026, 11, 25, 22, 7, 10, 123_987_654, time.UTC)
	base := lineCase{method: http.MethodPost, path: "/webapi/DEFAULT/api/v1/services/iris/classify", status: http.StatusOK,
		start: utc, duration: 18_595 * time.Nanosecond, cfg: middleware.AccessLogConfig{Client: true}}
	with := func(f func(*lineCase)) lineCase {
		c := base
		f(&c)
		return c
	}
	logValuer := slog.AnyValue(tokens.Claims{Subject: "ann"})
	cases := map[string]lineCase{
		"a scoring request":     base,
		"no client":             with(func(c *lineCase) { c.cfg.Client = false }),
		"an IPv6 client":        with(func(c *lineCase) { c.remote = "[2001:DB8::1]:4000" }),
		"a client not an IP":    with(func(c *lineCase) { c.remote = "@unix socket" }),
		"a request ID":          with(func(c *lineCase) { c.id = "abc-123" }),
		"a request ID with '='": with(func(c *lineCase) { c.id = "a=b+c/d" }),
		"a subject":             with(func(c *lineCase) { c.subject = "ann" }),
		"a subject with spaces": with(func(c *lineCase) { c.subject = "Ann Smith" }),
		"a subject in Japanese": with(func(c *lineCase) { c.subject = "名前" }),
		"a subject with a quote and a backslash": with(func(c *lineCase) {
			c.subject = `a"b\c`
		}),
		"a subject of invalid UTF-8": with(func(c *lineCase) { c.subject = "a\xffb" }),
		"a subject with a control":   with(func(c *lineCase) { c.subject = "a\tb\x00\x7f" }),
		"an empty subject, audited":  with(func(c *lineCase) { c.cfg.Audit = true }),
		"an audited 5xx":             with(func(c *lineCase) { c.cfg.Audit = true; c.status = http.StatusServiceUnavailable }),
		"an audited 5xx at warn+1": with(func(c *lineCase) {
			c.cfg.Audit, c.cfg.Level, c.status = true, slog.LevelWarn+1, http.StatusInternalServerError
		}),
		"a 5xx at debug-2, not audited": with(func(c *lineCase) {
			c.cfg.Level, c.status = slog.LevelDebug-2, http.StatusBadGateway
		}),
		"a path with spaces and '='": with(func(c *lineCase) { c.path = "/a b/c=d" }),
		"a path with a backslash":    with(func(c *lineCase) { c.path = `/a\b` }),
		"a path with a newline":      with(func(c *lineCase) { c.path = "/a\nb" }),
		"an empty path":              with(func(c *lineCase) { c.path = "" }),
		"a path in Greek":            with(func(c *lineCase) { c.path = "/αβγ" }),
		"a path with a no-break space": with(func(c *lineCase) {
			c.path = "/a\u00a0b"
		}),
		"an odd method":      with(func(c *lineCase) { c.method = "M-SEARCH" }),
		"a message":          with(func(c *lineCase) { c.cfg.Message = "write" }),
		"a message with '='": with(func(c *lineCase) { c.cfg.Message = `a="b"` }),
		"attributes": with(func(c *lineCase) {
			c.cfg.Attrs = []slog.Attr{slog.String("route", "PUT /x"), slog.Int("n", -3), slog.Float64("f", 0.1),
				slog.Bool("b", true), slog.Duration("d", 1500*time.Millisecond), slog.Time("t", utc),
				slog.Group("g", slog.String("k", "v"), slog.Group("h", slog.Int("i", 1))), slog.String("msg", "again"),
				slog.Any("claims", logValuer), {}, slog.String("", "no key"), slog.Group("empty")}
		}),
		"a zone east":             with(func(c *lineCase) { c.start = utc.In(time.FixedZone("IST", 5*3600+30*60)) }),
		"a zone west":             with(func(c *lineCase) { c.start = utc.In(time.FixedZone("X", -(9*3600 + 30*60))) }),
		"a zone of seconds":       with(func(c *lineCase) { c.start = utc.In(time.FixedZone("LMT", 53*60+28)) }),
		"a zone of 100 hours":     with(func(c *lineCase) { c.start = utc.In(time.FixedZone("Z", 100*3600)) }),
		"a year of five digits":   with(func(c *lineCase) { c.start = time.Date(12345, 1, 2, 3, 4, 5, 6, time.UTC) }),
		"a year before Christ":    with(func(c *lineCase) { c.start = time.Date(-44, 3, 15, 0, 0, 0, 0, time.UTC) }),
		"the last millisecond":    with(func(c *lineCase) { c.start = time.Date(2026, 12, 31, 23, 59, 59, 999_999_999, time.UTC) }),
		"no time":                 with(func(c *lineCase) { c.start, c.duration = time.Time{}, 0 }),
		"a long duration":         with(func(c *lineCase) { c.duration = 90*time.Minute + 7*time.Millisecond }),
		"a duration of 0":         with(func(c *lineCase) { c.duration = 0 }),
		"a negative duration":     with(func(c *lineCase) { c.duration = -time.Millisecond }),
		"a status of 101":         with(func(c *lineCase) { c.status = http.StatusSwitchingProtocols }),
		"a status the log counts": with(func(c *lineCase) { c.status = 999 }),
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { sameLines(t, c) })
	}
}

// FuzzAccessLogOutput: whatever the path, subject, message and attribute
// text, Output writes what a slog.TextHandler writes.
func FuzzAccessLogOutput(f *testing.F) {
	for _, s := range [][3]string{
		{"/webapi/x", "ann", "http request"},
		{"/a b", "", "a=b"},
		{"/\xff", "名前", "\"q\""},
		{`/a\b`, "\u2028", "\x00"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, path, subject, msg string) {
		sameLines(t, lineCase{method: http.MethodGet, path: path, subject: subject, status: http.StatusOK,
			start: time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC), duration: time.Microsecond,
			cfg: middleware.AccessLogConfig{Message: msg, Audit: true, Client: true,
				Attrs: []slog.Attr{slog.String(msg, subject)}}})
	})
}

// ExampleAccessLogConfig_output logs requests as text lines, written by
// AccessLog itself, through a LogWriter that joins the lines of a busy
// server into few writes.
func ExampleAccessLogConfig_output() {
	out := middleware.NewLogWriter(os.Stdout)
	defer out.Flush(context.Background())
	clock := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	log := middleware.AccessLog(middleware.AccessLogConfig{Output: out, Now: func() time.Time {
		clock = clock.Add(250 * time.Microsecond)
		return clock
	}})
	h := log(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/health", nil))
	// Output:
	// time=2026-11-25T12:00:00.000Z level=INFO msg="http request" method=GET path=/health status=200 bytes=2 duration=250µs
}
