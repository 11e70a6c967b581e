package middleware_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/scorehub/scorehub/middleware"
)

// gatedWriter records each write it gets as one entry. While gated, a
// write blocks until the gate opens, after saying on entered that it
// started; failAt makes the write of that number (from 1) fail.
type gatedWriter struct {
	entered chan struct{}
	gate    chan struct{} // nil: never blocks
	delay   time.Duration
	failAt  int

	mu     sync.Mutex
	writes []string
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	if g.gate != nil {
		g.entered <- struct{}{}
		<-g.gate
	}
	time.Sleep(g.delay)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.writes)+1 == g.failAt {
		g.writes = append(g.writes, "")
		return 0, errors.New("disk full")
	}
	g.writes = append(g.writes, string(p))
	return len(p), nil
}

func (g *gatedWriter) got() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.writes...)
}

func flush(t *testing.T, w *middleware.LogWriter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// A lone line is written before Write returns: an idle LogWriter holds
// nothing back. It is idle again once it has lingered after its last line.
func TestLogWriterLoneLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g gatedWriter
		w := middleware.NewLogWriter(&g)
		if n, err := w.Write([]byte("one\n")); n != 4 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		if got := g.got(); len(got) != 1 || got[0] != "one\n" {
			t.Fatalf("after the first Write returned, the writer got %q", got)
		}
		time.Sleep(20 * time.Millisecond) // longer than the LogWriter lingers
		if _, err := w.Write([]byte("two\n")); err != nil {
			t.Fatal(err)
		}
		if got := g.got(); len(got) != 2 || got[1] != "two\n" {
			t.Fatalf("a line written 20 ms after the last one is not written at once: %q", got)
		}
		flush(t, w)
		time.Sleep(20 * time.Millisecond) // the writer lingers, then ends its goroutine
	})
}

// Lines written while a write is in progress, or soon after it, return at
// once and go out together in the next write, in order.
func TestLogWriterGroupCommit(t *testing.T) {
	g := &gatedWriter{entered: make(chan struct{}, 1), gate: make(chan struct{})}
	w := middleware.NewLogWriter(g)
	first := make(chan error, 1)
	go func() {
		_, err := w.Write([]byte("line 0\n"))
		first <- err
	}()
	<-g.entered // line 0 is being written
	var want strings.Builder
	for i := 1; i <= 50; i++ {
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		if _, err := w.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	close(g.gate) // later writes pass; entered has room for the next one
	go func() {
		for range g.entered {
		}
	}()
	defer close(g.entered)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	flush(t, w)
	got := g.got()
	if len(got) != 2 || got[0] != "line 0\n" || got[1] != want.String() {
		t.Errorf("writes %q, want line 0 alone, then lines 1 to 50 in one write", got)
	}
}

// Under concurrent load every line arrives once, whole, each writer's lines
// in its order, in fewer writes than lines.
func TestLogWriterConcurrent(t *testing.T) {
	g := &gatedWriter{delay: 200 * time.Microsecond}
	w := middleware.NewLogWriter(g)
	const writers, lines = 8, 500
	var wg sync.WaitGroup
	for k := range writers {
		wg.Go(func() {
			for i := range lines {
				line := fmt.Sprintf("writer=%d line=%d %s\n", k, i, strings.Repeat("x", i%97))
				if _, err := w.Write([]byte(line)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	flush(t, w)
	writes := g.got()
	next := make([]int, writers)
	for _, line := range strings.SplitAfter(strings.Join(writes, ""), "\n") {
		if line == "" {
			continue
		}
		var k, i int
		if _, err := fmt.Sscanf(line, "writer=%d line=%d", &k, &i); err != nil || k < 0 || k >= writers {
			t.Fatalf("line %q cut or mixed: %v", line, err)
		}
		if want := fmt.Sprintf("writer=%d line=%d %s\n", k, i, strings.Repeat("x", i%97)); line != want {
			t.Fatalf("line %q, want %q", line, want)
		}
		if i != next[k] {
			t.Fatalf("writer %d: line %d after line %d", k, i, next[k]-1)
		}
		next[k]++
	}
	for k, n := range next {
		if n != lines {
			t.Errorf("writer %d: %d lines arrived, want %d", k, n, lines)
		}
	}
	if len(writes) > writers*lines/2 {
		t.Errorf("%d writes for %d lines: lines were not joined", len(writes), writers*lines)
	}
}

// A destination that stops taking lines makes Write wait once a mebibyte
// is held, and Flush give up at its deadline; nothing is lost once it
// takes lines again.
func TestLogWriterBlocked(t *testing.T) {
	g := &gatedWriter{entered: make(chan struct{}, 1), gate: make(chan struct{})}
	w := middleware.NewLogWriter(g)
	go w.Write([]byte("first\n"))
	<-g.entered
	line := bytes.Repeat([]byte("y"), 64<<10-1)
	line = append(line, '\n')
	for range 16 { // a mebibyte held
		if _, err := w.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	blocked := make(chan struct{})
	go func() {
		defer close(blocked)
		w.Write([]byte("over the bound\n"))
	}()
	select {
	case <-blocked:
		t.Fatal("Write returned with a mebibyte held and the destination stuck")
	case <-time.After(50 * time.Millisecond):
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := w.Flush(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Flush with the destination stuck: %v, want the deadline", err)
	}
	close(g.gate)
	go func() {
		for range g.entered {
		}
	}()
	defer close(g.entered)
	<-blocked
	flush(t, w)
	all := strings.Join(g.got(), "")
	want := "first\n" + strings.Repeat(string(line), 16) + "over the bound\n"
	if all != want {
		t.Errorf("the destination got %d bytes, want %d in order", len(all), len(want))
	}
}

// A failed write loses its lines: a Write that made it hears of it, and
// Flush reports it once. Later lines are written.
func TestLogWriterError(t *testing.T) {
	g := &gatedWriter{failAt: 1}
	w := middleware.NewLogWriter(g)
	if n, err := w.Write([]byte("lost\n")); n != 0 || err == nil {
		t.Errorf("Write to a failing destination = %d, %v; want 0 and its error", n, err)
	}
	if err := w.Flush(context.Background()); err == nil || !strings.Contains(err.Error(), "5 bytes lost") {
		t.Errorf("Flush = %v, want the 5 bytes lost", err)
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Errorf("Flush after the error was reported = %v, want nil", err)
	}
	g.mu.Lock()
	g.failAt = 3
	g.mu.Unlock()
	for _, line := range []string{"kept\n", "gone\n", "also gone\n"} {
		if _, err := w.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if line == "kept\n" {
			flush(t, w) // kept is alone in write 2; the others gather for write 3
		}
	}
	err := w.Flush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "15 bytes lost") || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Flush = %v, want the 15 bytes lost to disk full", err)
	}
	if _, err := w.Write([]byte("after\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Errorf("Flush after the error was reported = %v, want nil", err)
	}
	if got, want := strings.Join(g.got(), ""), "kept\nafter\n"; got != want {
		t.Errorf("the destination got %q, want %q", got, want)
	}
}

// An access log written through a LogWriter keeps one line per request.
func TestLogWriterAccessLog(t *testing.T) {
	var g gatedWriter
	w := middleware.NewLogWriter(&g)
	logger := slog.New(slog.NewTextHandler(w, nil))
	h := middleware.AccessLog(middleware.AccessLogConfig{Logger: logger})(okHandler)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/health", nil))
			}
		})
	}
	wg.Wait()
	flush(t, w)
	lines := strings.Split(strings.TrimSuffix(strings.Join(g.got(), ""), "\n"), "\n")
	if len(lines) != 400 {
		t.Fatalf("%d lines, want 400", len(lines))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "time=") || !strings.Contains(l, " path=/health status=200 ") {
			t.Fatalf("line %q is not one whole record", l)
		}
	}
}

func ExampleLogWriter() {
	out := middleware.NewLogWriter(os.Stdout)
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	logger.Info("listening", "addr", "127.0.0.1:8080")
	logger.Info("shutting down")
	// Before the program exits, on every path:
	if err := out.Flush(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	// Output:
	// level=INFO msg=listening addr=127.0.0.1:8080
	// level=INFO msg="shutting down"
}
