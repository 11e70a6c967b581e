package middleware_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/tokens"
)

// discardWriter is a ResponseWriter that costs nothing, so benchmarks
// measure the middleware.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

// BenchmarkBearer measures what Bearer adds to a request: header checks,
// the verifier call (a fake returning fixed claims, so signature checking
// is not counted) and the claims' context.
func BenchmarkBearer(b *testing.B) {
	claims := &tokens.Claims{Subject: "ann", Groups: []string{"analysts"}}
	v := verifierFunc(func(context.Context, string) (*tokens.Claims, error) { return claims, nil })
	bearer, err := middleware.Bearer(middleware.BearerConfig{Verifier: v})
	if err != nil {
		b.Fatal(err)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	// A token of a realistic length (an ES256 JWT with scorehub's claims).
	token := strings.Repeat("eyJhbGciOiJFUzI1NiJ9", 20)
	r := httptest.NewRequest(http.MethodPost, "/webapi/DEFAULT/api/v1/services/churn/predict?threshold=0.7", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("Content-Type", "application/json")
	benchHandlers(b, r, []namedHandler{
		{"bare", handler},
		{"bearer", bearer(handler)},
		{"bearer+group", bearer(middleware.RequireGroup("analysts")(handler))},
	})
}

// namedHandler is one handler a benchmark measures, under its name.
type namedHandler struct {
	name string
	h    http.Handler
}

// benchHandlers measures each handler serving r, as a sub-benchmark of
// its name, with its allocations and the process's CPU time per request.
func benchHandlers(b *testing.B, r *http.Request, handlers []namedHandler) {
	w := &discardWriter{h: http.Header{}}
	for _, nh := range handlers {
		b.Run(nh.name, func(b *testing.B) {
			b.ReportAllocs()
			report := testutil.MeasureCPU(b, testutil.ProcessCPU)
			for b.Loop() {
				nh.h.ServeHTTP(w, r)
			}
			report()
		})
	}
}

// BenchmarkRateLimit measures the limiter's cost per request when many
// clients' requests arrive in parallel.
func BenchmarkRateLimit(b *testing.B) {
	l, err := middleware.NewRateLimiter(middleware.RateLimitConfig{Limit: tokens.RateLimit{Every: 1, Burst: 1 << 30}})
	if err != nil {
		b.Fatal(err)
	}
	h := l.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		w := &discardWriter{h: http.Header{}}
		reqs := make([]*http.Request, 256)
		for i := range reqs {
			reqs[i] = httptest.NewRequest(http.MethodPost, "/", nil)
			reqs[i].RemoteAddr = fmt.Sprintf("198.51.100.%d:4000", i)
		}
		i := 0
		for pb.Next() {
			h.ServeHTTP(w, reqs[i&255])
			i++
		}
	})
}

// BenchmarkChain measures the whole recommended chain in front of a
// handler.
func BenchmarkChain(b *testing.B) {
	claims := &tokens.Claims{Subject: "ann"}
	v := verifierFunc(func(context.Context, string) (*tokens.Claims, error) { return claims, nil })
	bearer, _ := middleware.Bearer(middleware.BearerConfig{Verifier: v})
	rid, _ := middleware.RequestID(middleware.RequestIDConfig{})
	rl, _ := middleware.RateLimit(middleware.RateLimitConfig{Limit: tokens.RateLimit{Every: time.Nanosecond, Burst: 1 << 30}})
	bl, _ := middleware.BodyLimit(32 << 20)
	cors, _ := middleware.CORS(middleware.CORSConfig{AllowedOrigins: []string{"https://app.example.com"}})
	h := middleware.Chain(rid, middleware.Recover(nil), cors, rl, bl, bearer)(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	r := httptest.NewRequest(http.MethodPost, "/webapi/DEFAULT/api/v1/services/churn/predict", strings.NewReader("{}"))
	r.Header.Set("Authorization", "Bearer abc.def.ghi")
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(&discardWriter{h: http.Header{}}, r)
	}
}

// BenchmarkAccessLog measures what the access log adds to a request: a
// text record with the client's address, written to a writer that costs
// nothing, through a slog.TextHandler and as the standalone server
// configures it, by AccessLog itself (Output). It reports the
// process's CPU time per request too, steadier than wall time on a shared
// machine.
func BenchmarkAccessLog(b *testing.B) {
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"data":[{"prediction":"setosa"}]}`)
	})
	r := httptest.NewRequest(http.MethodPost, "/webapi/DEFAULT/api/v1/services/iris/score", nil)
	r.RemoteAddr = "127.0.0.1:51234"
	benchHandlers(b, r, []namedHandler{
		{"bare", handler},
		{"log", middleware.AccessLog(middleware.AccessLogConfig{Logger: logger, Client: true})(handler)},
		{"lines", middleware.AccessLog(middleware.AccessLogConfig{Output: io.Discard, Client: true})(handler)},
	})
}

// BenchmarkLogWriter measures what an access record costs, write(2)
// included, when 16 goroutines log to a file: written straight, one
// system call a line, and through a LogWriter. It reports the process's
// CPU time per record, which a shared machine disturbs less than wall
// time.
func BenchmarkLogWriter(b *testing.B) {
	attrs := []slog.Attr{
		slog.String("method", "POST"),
		slog.String("path", "/webapi/DEFAULT/api/v1/services/iris/classify"),
		slog.Int("status", 200),
		slog.Int64("bytes", 161),
		slog.Duration("duration", 182*time.Microsecond),
		slog.String("client", "127.0.0.1"),
	}
	for _, bb := range []struct {
		name string
		wrap bool
	}{{"direct", false}, {"logwriter", true}} {
		b.Run(bb.name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			var w io.Writer = f
			lw := middleware.NewLogWriter(f)
			if bb.wrap {
				w = lw
			}
			logger := slog.New(slog.NewTextHandler(w, nil))
			ctx := context.Background()
			b.SetParallelism(8) // 16 goroutines on 2 CPUs, as the load harness's clients
			b.ReportAllocs()
			report := testutil.MeasureCPU(b, testutil.ProcessCPU)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					logger.LogAttrs(ctx, slog.LevelInfo, "http request", attrs...)
				}
			})
			if err := lw.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			report()
		})
	}
}
