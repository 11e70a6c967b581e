package scoring_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// paddedBody is a request of rows rows, each carrying pad bytes of text, so
// that its echo is about rows × pad bytes long.
func paddedBody(rows, pad int) string {
	var b strings.Builder
	text := strings.Repeat("p", pad)
	b.WriteString(`{"data":[`)
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"x":%d,"pad":"%s"}`, i, text)
	}
	b.WriteString(`]}`)
	return b.String()
}

// serving reports whether a goroutine is inside the handler, from the
// stacks of all goroutines: a count of goroutines would also see those of
// earlier tests still winding down.
func serving() bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Contains(string(buf[:n]), "scoring.(*Handler).serve(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// heapInUse is the heap in use once garbage is collected.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC() // a second cycle empties the sync.Pools too
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestHandlerClosesAnAnswerNobodyReads replays a client that sends a
// request with a large answer over a raw socket and never reads it: the
// server must close the connection once a write has made no progress for
// WriteProgressTimeout, and the handler must return and let go of the
// request's table and buffers. The kernel may still hold what was sent
// when the connection closed, so the test watches the server's side of
// it. With the bound turned off the handler stays blocked, which shows
// the test sees the attack.
func TestHandlerClosesAnAnswerNobodyReads(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		freed   bool
	}{
		{"bounded", 200 * time.Millisecond, true},
		{"off", -1, false},
	}
	// About 10 MB of answer: more than the kernel buffers of both ends
	// hold, with the client's receive buffer made small.
	body := paddedBody(50_000, 200)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, scoring.Config{WriteProgressTimeout: tt.timeout},
				process.ProcessInfo{Name: "echo", Process: echo, Prompt: true})
			srv := httptest.NewUnstartedServer(f.h)
			closed := make(chan struct{})
			var once sync.Once
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateClosed {
					once.Do(func() { close(closed) })
				}
			}
			srv.Start()
			defer srv.Close()

			baseHeap := heapInUse()

			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.(*net.TCPConn).SetReadBuffer(4 << 10); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if _, err := fmt.Fprintf(conn, "POST /DEFAULT/api/v1/services/demo/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body); err != nil {
				t.Fatal(err)
			}
			sent := time.Since(start)

			if !tt.freed {
				time.Sleep(time.Second)
				if !serving() {
					t.Fatal("the handler returned although nothing bounds the answer")
				}
				return
			}
			// The body is sent once decoding has begun; the rest is
			// decoding, one stalled write and the close.
			deadline := time.Now().Add(10 * time.Second)
			if !testutil.Poll(time.Until(deadline), func() bool { return strings.Contains(f.log.String(), "response not delivered") }) {
				t.Fatalf("no write of the answer failed after %v; log:\n%s", time.Since(start), f.log)
			}
			if !testutil.Poll(time.Until(deadline), func() bool { return !serving() }) {
				t.Fatalf("the handler still holds the answer after %v", time.Since(start))
			}
			t.Logf("sent in %v, handler gone after %v", sent, time.Since(start))

			select {
			case <-closed:
			case <-time.After(5 * time.Second):
				t.Fatal("the handler returned but the server keeps the connection open")
			}

			// What the request held is freed: the heap is back near where
			// it was, far below the body's size.
			if grown := int64(heapInUse()) - int64(baseHeap); grown > int64(len(body))/2 {
				t.Errorf("heap grew by %d bytes after the handler returned, with a %d-byte body", grown, len(body))
			}
		})
	}
}

// TestHandlerDecodingBudget: the bodies of requests in flight are bounded
// together by MaxDecodingBytes. Past it a body of announced length and a
// chunked one get 503 server_busy with Retry-After, while a small body
// passes; once the holder is answered, the budget is free again.
func TestHandlerDecodingBudget(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	hold := process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
		started <- struct{}{}
		<-release
		return process.NewTable(in.Table.Rows())
	})
	const budget = 1 << 20
	f := newFixture(t, scoring.Config{
		Limits:           scoring.Limits{MaxBodyBytes: budget},
		MaxDecodingBytes: budget,
		RetryAfter:       2 * time.Second,
	}, process.ProcessInfo{Name: "hold", Process: hold}, process.ProcessInfo{Name: "echo", Process: echo})

	large := paddedBody(3000, 200) // about 650 KB: two do not fit
	if len(large) <= budget/2 || len(large) > budget {
		t.Fatalf("body of %d bytes does not fit the test", len(large))
	}
	var wg sync.WaitGroup
	var held *httptest.ResponseRecorder
	wg.Add(1)
	go func() {
		defer wg.Done()
		held = f.post("hold", "", large)
	}()
	<-started

	post := func(alias, body string, chunked bool) *httptest.ResponseRecorder {
		var rd io.Reader = strings.NewReader(body)
		if chunked {
			rd = iotest.HalfReader(rd)
		}
		r := httptest.NewRequest(http.MethodPost, "/DEFAULT/api/v1/services/demo/"+alias, rd)
		r.Header.Set("Content-Type", "application/json")
		if chunked {
			r.ContentLength = -1
		}
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		return w
	}
	tests := []struct {
		name    string
		body    string
		chunked bool
		status  int
	}{
		{"announced length over the budget", large, false, http.StatusServiceUnavailable},
		{"chunked over the budget", large, true, http.StatusServiceUnavailable},
		{"small body", `{"data":[{"x":1}]}`, false, http.StatusOK},
		{"small chunked body", `{"data":[{"x":1}]}`, true, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := post("echo", tt.body, tt.chunked)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.status != http.StatusServiceUnavailable {
				return
			}
			if e := errorOf(t, w); e.Type != "server_busy" {
				t.Errorf("type %q, want server_busy", e.Type)
			}
			if got := w.Header().Get("Retry-After"); got != "2" {
				t.Errorf("Retry-After %q, want 2", got)
			}
		})
	}

	close(release)
	wg.Wait()
	if held.Code != http.StatusOK {
		t.Fatalf("the held request: status %d: %s", held.Code, held.Body)
	}
	for _, chunked := range []bool{false, true} {
		if w := post("echo", large, chunked); w.Code != http.StatusOK {
			t.Errorf("chunked=%v after the budget was freed: status %d: %s", chunked, w.Code, w.Body)
		}
	}
}
