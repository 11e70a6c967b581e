package middleware_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/middleware"
)

func TestAccessLog(t *testing.T) {
	zeros := func() io.Reader { return bytes.NewReader(make([]byte, 64)) }
	const genID = "00000000-0000-4000-8000-000000000000"
	tests := []struct {
		name   string
		chain  func(log func(http.Handler) http.Handler, rid, bearer func(http.Handler) http.Handler) http.Handler
		target string
		auth   string
		want   map[string]any
	}{
		{
			name: "request ID and subject from pieces inside the log",
			chain: func(log, rid, bearer func(http.Handler) http.Handler) http.Handler {
				return middleware.Chain(log, rid, bearer)(okHandler)
			},
			target: "/groups?secret=s3cr3t", auth: "Bearer ann-token",
			want: map[string]any{"level": "INFO", "msg": "http request", "method": "GET", "path": "/groups",
				"status": 200.0, "bytes": 6.0, "duration": 1.5e9, "request_id": genID, "subject": "ann"},
		},
		{
			name: "request ID and subject from pieces outside the log",
			chain: func(log, rid, bearer func(http.Handler) http.Handler) http.Handler {
				return middleware.Chain(rid, bearer, log)(okHandler)
			},
			target: "/groups", auth: "Bearer root-token",
			want: map[string]any{"level": "INFO", "msg": "http request", "method": "GET", "path": "/groups",
				"status": 200.0, "bytes": 7.0, "duration": 1.5e9, "request_id": genID, "subject": "root"},
		},
		{
			name: "refused request has no subject",
			chain: func(log, rid, bearer func(http.Handler) http.Handler) http.Handler {
				return middleware.Chain(log, rid, bearer)(okHandler)
			},
			target: "/groups", auth: "Bearer expired",
			want: map[string]any{"level": "INFO", "msg": "http request", "method": "GET", "path": "/groups",
				"status": 401.0, "bytes": 65.0, "duration": 1.5e9, "request_id": genID},
		},
		{
			name: "no request ID, no claims",
			chain: func(log, rid, bearer func(http.Handler) http.Handler) http.Handler {
				return log(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(http.StatusNoContent)
				}))
			},
			target: "/health",
			want: map[string]any{"level": "INFO", "msg": "http request", "method": "GET", "path": "/health",
				"status": 204.0, "bytes": 0.0, "duration": 1.5e9},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, logs := newLogger(slog.LevelInfo)
			clock := newClock()
			log := middleware.AccessLog(middleware.AccessLogConfig{Logger: logger, Now: func() time.Time {
				now := clock.Now()
				clock.Advance(1500 * time.Millisecond)
				return now
			}})
			rid, err := middleware.RequestID(middleware.RequestIDConfig{Rand: zeros()})
			if err != nil {
				t.Fatal(err)
			}
			bearer, err := middleware.Bearer(middleware.BearerConfig{Verifier: &fakeVerifier{}, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodGet, tt.target, nil)
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			rec := serve(tt.chain(log, rid, bearer), r)
			recs := logs.records(t)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1: %s", len(recs), logs)
			}
			delete(recs[0], "time")
			if diff := cmp.Diff(tt.want, recs[0]); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
			if got := float64(rec.Body.Len()); got != tt.want["bytes"] {
				t.Errorf("logged %v bytes, sent %v", tt.want["bytes"], got)
			}
		})
	}
}

// TestAccessLogRecord checks what a record carries besides its
// attributes: the attributes of a logger made with With, the time the
// request ended, and no source position even where the handler would add
// one.
func TestAccessLogRecord(t *testing.T) {
	var b logBuffer
	logger := slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{AddSource: true})).With("component", "api")
	clock := newClock()
	start := clock.Now()
	log := middleware.AccessLog(middleware.AccessLogConfig{Logger: logger, Now: func() time.Time {
		now := clock.Now()
		clock.Advance(time.Second)
		return now
	}})
	serve(log(okHandler), httptest.NewRequest(http.MethodGet, "/health", nil))
	recs := b.records(t)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1: %s", len(recs), &b)
	}
	if src, ok := recs[0]["source"]; ok {
		t.Errorf("record has source %v, want none", src)
	}
	if got, want := recs[0]["time"], start.Add(time.Second).Format(time.RFC3339Nano); got != want {
		t.Errorf("record time %v, want %v, when the request ended", got, want)
	}
	if got := recs[0]["component"]; got != "api" {
		t.Errorf("component %v, want the logger's api", got)
	}
}

func TestAccessLogPanic(t *testing.T) {
	logger, logs := newLogger(slog.LevelInfo)
	h := middleware.Chain(
		middleware.Recover(slog.New(slog.DiscardHandler)),
		middleware.AccessLog(middleware.AccessLogConfig{Logger: logger}),
	)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := serve(h, httptest.NewRequest(http.MethodPost, "/x", nil))
	recs := logs.records(t)
	if rec.Code != http.StatusInternalServerError || len(recs) != 1 || recs[0]["status"] != 500.0 {
		t.Fatalf("answered %d, logged %v; want 500 both", rec.Code, recs)
	}
}

func TestAccessLogDisabledLevel(t *testing.T) {
	logger, logs := newLogger(slog.LevelWarn)
	h := middleware.AccessLog(middleware.AccessLogConfig{Logger: logger})(okHandler)
	if rec := serve(h, httptest.NewRequest(http.MethodGet, "/", nil)); rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if logs.String() != "" {
		t.Errorf("logged below the logger's level: %s", logs)
	}
}

// TestAccessLogKeepsFlushing checks that a streaming handler can still
// flush through the log's response writer, directly and through
// http.ResponseController.
func TestAccessLogKeepsFlushing(t *testing.T) {
	logger, _ := newLogger(slog.LevelInfo)
	for name, flush := range map[string]func(http.ResponseWriter) error{
		"http.Flusher": func(w http.ResponseWriter) error { w.(http.Flusher).Flush(); return nil },
		"ResponseController": func(w http.ResponseWriter) error {
			return http.NewResponseController(w).Flush()
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := middleware.Chain(
				middleware.AccessLog(middleware.AccessLogConfig{Logger: logger}),
				middleware.Recover(nil),
			)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, `{"data":[`)
				if err := flush(w); err != nil {
					t.Errorf("flush: %v", err)
				}
			}))
			rec := serve(h, httptest.NewRequest(http.MethodPost, "/", nil))
			if !rec.Flushed {
				t.Error("the response was not flushed")
			}
		})
	}
}

// TestAccessLogResponseWriter checks that the log's response writer counts
// bytes written through io.Copy and keeps http.ResponseController's
// features of the server's writer (here, write deadlines) reachable.
func TestAccessLogResponseWriter(t *testing.T) {
	logger, logs := newLogger(slog.LevelInfo)
	srv := httptest.NewServer(middleware.Chain(
		middleware.AccessLog(middleware.AccessLogConfig{Logger: logger}),
		middleware.Recover(nil),
	)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Errorf("SetWriteDeadline through the log's writer: %v", err)
		}
		// A LimitReader is no io.WriterTo, so io.Copy uses the writer's ReadFrom.
		io.Copy(w, io.LimitReader(bytes.NewReader(make([]byte, 5000)), 4096))
	})))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	srv.Close() // wait for the handler, and so the log record
	recs := logs.records(t)
	if n != 4096 || len(recs) != 1 || recs[0]["bytes"] != 4096.0 {
		t.Errorf("client read %d bytes; log %v; want 4096 both", n, recs)
	}
}

// TestAccessLogAudit checks the knobs a host uses for an audit trail, as
// the management API keeps of its writes: its own message and attributes,
// a subject on every record, and server faults at error level.
func TestAccessLogAudit(t *testing.T) {
	status := func(code int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) })
	}
	tests := []struct {
		name  string
		audit bool
		next  http.Handler
		want  map[string]any
	}{
		{"audit names an empty subject", true, status(http.StatusCreated),
			map[string]any{"level": "INFO", "msg": "write", "status": 201.0, "subject": "", "route": "PUT /x"}},
		{"audit logs a 5xx as an error", true, status(http.StatusServiceUnavailable),
			map[string]any{"level": "ERROR", "msg": "write", "status": 503.0, "subject": "", "route": "PUT /x"}},
		{"without audit a 5xx keeps the level and no subject", false, status(http.StatusServiceUnavailable),
			map[string]any{"level": "INFO", "msg": "write", "status": 503.0, "route": "PUT /x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, logs := newLogger(slog.LevelInfo)
			h := middleware.AccessLog(middleware.AccessLogConfig{Logger: logger, Message: "write",
				Attrs: []slog.Attr{slog.String("route", "PUT /x")}, Audit: tt.audit})(tt.next)
			serve(h, httptest.NewRequest(http.MethodPut, "/x", nil))
			recs := logs.records(t)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1: %s", len(recs), logs)
			}
			got := map[string]any{}
			for _, k := range []string{"level", "msg", "status", "subject", "route"} {
				if v, ok := recs[0][k]; ok {
					got[k] = v
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAccessLogClient: with Client, every record names the client, read from
// X-Forwarded-For only when the request came through a trusted proxy.
func TestAccessLogClient(t *testing.T) {
	proxy := []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}
	tests := []struct {
		name    string
		client  bool
		trusted []netip.Prefix
		want    any // nil: no client attribute
	}{
		{"off by default", false, nil, nil},
		{"the connection's address", true, nil, "192.0.2.1"},
		{"behind a trusted proxy", true, proxy, "203.0.113.9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, logs := newLogger(slog.LevelInfo)
			h := middleware.AccessLog(middleware.AccessLogConfig{Logger: logger, Client: tt.client, TrustedProxies: tt.trusted})(okHandler)
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("X-Forwarded-For", "203.0.113.9")
			serve(h, r)
			recs := logs.records(t)
			if len(recs) != 1 || recs[0]["client"] != tt.want {
				t.Errorf("records %v, want one with client %v", recs, tt.want)
			}
		})
	}
}

// TestAccessLogClientText: the client is written the way netip writes an
// address, whatever spelling the connection's address came in.
func TestAccessLogClientText(t *testing.T) {
	for _, tt := range []struct{ remote, want string }{
		{"198.51.100.7:4000", "198.51.100.7"},
		{"[2001:db8::1]:4000", "2001:db8::1"},
		{"[2001:DB8:0:0:0:0:0:1]:4000", "2001:db8::1"},
		{"[::ffff:198.51.100.7]:4000", "198.51.100.7"},
		{"[fe80::1%eth0]:4000", "fe80::1%eth0"},
		{"198.51.100.7", "198.51.100.7"},
		{"198.51.100.7:65535", "198.51.100.7"},
		{"198.51.100.7:0000080", "198.51.100.7"},
		{"198.51.100.7:65536", "198.51.100.7:65536"},
		{"198.51.100.7:", "198.51.100.7:"},
		{"198.51.100.7:http", "198.51.100.7:http"},
		{"198.051.100.7:4000", "198.051.100.7:4000"},
		{"198.51.100:4000", "198.51.100:4000"},
		{"not an address", "not an address"},
	} {
		t.Run(tt.remote, func(t *testing.T) {
			logger, logs := newLogger(slog.LevelInfo)
			h := middleware.AccessLog(middleware.AccessLogConfig{Logger: logger, Client: true})(okHandler)
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.remote
			serve(h, r)
			recs := logs.records(t)
			if len(recs) != 1 || recs[0]["client"] != tt.want {
				t.Errorf("records %v, want one with client %q", recs, tt.want)
			}
		})
	}
}

// TestAccessLogRealClock checks the duration logged without an injected
// clock, whose start is read off the monotonic clock alone: it covers the
// handler's time, through slog and through Output alike, and the record's
// time is the wall clock's at the end. The clock is the bubble's, so the
// handler's pause takes no time and the bounds are exact.
func TestAccessLogRealClock(t *testing.T) {
	const pause = 20 * time.Millisecond
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(pause)
		w.WriteHeader(http.StatusNoContent)
	})
	t.Run("slog", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var b logBuffer
			log := middleware.AccessLog(middleware.AccessLogConfig{Logger: slog.New(slog.NewJSONHandler(&b, nil))})
			before := time.Now()
			serve(log(slow), httptest.NewRequest(http.MethodGet, "/slow", nil))
			after := time.Now()
			recs := b.records(t)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1: %s", len(recs), &b)
			}
			d, _ := recs[0]["duration"].(float64)
			if got := time.Duration(d); got < pause || got > after.Sub(before) {
				t.Errorf("duration %v, want from %v to the %v the request took", got, pause, after.Sub(before))
			}
			at, err := time.Parse(time.RFC3339Nano, recs[0]["time"].(string))
			if err != nil || at.Before(before.Add(pause).Round(0).Truncate(time.Millisecond)) || at.After(after) {
				t.Errorf("time %v (%v), want the end of the request, between %v and %v", recs[0]["time"], err, before.Add(pause), after)
			}
		})
	})
	t.Run("output", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var b bytes.Buffer
			log := middleware.AccessLog(middleware.AccessLogConfig{Logger: slog.New(slog.DiscardHandler), Output: &b})
			before := time.Now()
			serve(log(slow), httptest.NewRequest(http.MethodGet, "/slow", nil))
			took := time.Since(before)
			_, text, ok := strings.Cut(strings.TrimSpace(b.String()), " duration=")
			text, _, _ = strings.Cut(text, " ")
			got, err := time.ParseDuration(text)
			if !ok || err != nil || got < pause || got > took {
				t.Errorf("line %q: duration %v (%v), want from %v to the %v the request took", b.String(), got, err, pause, took)
			}
		})
	})
}

// TestAccessLogRedactsSecretsInThePath: an API token or a JWT sent as a
// path segment is replaced in the record, through a Logger and as a line
// of Output alike.
func TestAccessLogRedactsSecretsInThePath(t *testing.T) {
	const (
		apiToken = "scorehub_4Jq0VZ3bWm9Xc1yTfLpR8sN2uK7hD5gA6eB0oQiCzwt3kPY1z2"
		jwt      = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJhbm4ifQ.c2lnbmF0dXJlLWJ5dGVz"
	)
	for _, lines := range []bool{false, true} {
		var out bytes.Buffer
		cfg := middleware.AccessLogConfig{Logger: slog.New(slog.NewTextHandler(&out, nil))}
		if lines {
			cfg = middleware.AccessLogConfig{Output: &out}
		}
		h := middleware.AccessLog(cfg)(okHandler)
		for _, path := range []string{"/api/v1/apitokens/" + apiToken, "/webapi/g/" + jwt + "/a"} {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
		}
		got := out.String()
		if strings.Contains(got, apiToken[len("scorehub_"):]) || strings.Contains(got, jwt) {
			t.Errorf("Output %v: the log holds a secret:\n%s", lines, got)
		}
		for _, want := range []string{"path=/api/v1/apitokens/scorehub_REDACTED ", "path=/webapi/g/REDACTED/a "} {
			if !strings.Contains(got, want) {
				t.Errorf("Output %v: the log lacks %q:\n%s", lines, want, got)
			}
		}
	}
}
