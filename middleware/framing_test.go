package middleware_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/middleware"
)

// TestCloseChunked replays a request with both Content-Length and
// Transfer-Encoding on a raw connection, followed by a second request on
// the same connection. RFC 9112 §6.1 requires the server to close the
// connection after answering the first: the second must never be read. A
// request framed by Content-Length alone keeps its connection.
func TestCloseChunked(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(middleware.CloseChunked(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+string(b))
		mu.Unlock()
		w.Write([]byte("ok"))
	})))
	defer srv.Close()

	tests := []struct {
		name      string
		first     string
		wantClose bool
	}{
		{"Content-Length and Transfer-Encoding",
			"POST /first HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", true},
		{"Transfer-Encoding alone",
			"POST /first HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", true},
		{"Content-Length alone",
			"POST /first HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			// Both requests at once, as a smuggled one would come.
			fmt.Fprint(c, tt.first+"GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
			br := bufio.NewReader(c)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || res.Close != tt.wantClose {
				t.Errorf("first answer %d, Connection: close %v; want 200, %v", res.StatusCode, res.Close, tt.wantClose)
			}
			_, err = http.ReadResponse(br, nil)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case tt.wantClose && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
				t.Errorf("the server answered a second request on the connection (err %v); seen %q", err, seen)
			case !tt.wantClose && err != nil:
				t.Errorf("second request on a kept connection: %v", err)
			}
			if tt.wantClose && len(seen) != 1 {
				t.Errorf("handler saw %q, want only the first request", seen)
			}
		})
	}
}
