package harness

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
)

// profilesURL finds the profiles' address in what the server prints when
// it runs with -debug-addr.
var profilesURL = regexp.MustCompile(`(http://127\.0\.0\.1:\d+/debug/pprof/)`)

// Profiles reads the server's runtime figures from its profiling listener
// (-debug-addr): what a test in the server's own process would read from
// package runtime. It is safe for concurrent use.
type Profiles struct {
	base   string // http://127.0.0.1:port/debug/pprof/
	client *http.Client
}

// Profiles returns the reader of the server's profiles; the server must run
// with -debug-addr 127.0.0.1:0 (or another loopback address).
func (s *Server) Profiles(t testing.TB) *Profiles {
	t.Helper()
	m := profilesURL.FindStringSubmatch(s.Stdout())
	if m == nil {
		t.Fatalf("the server printed no profiles address (is -debug-addr set?):\n%s", s.Stdout())
	}
	// Keep-alives off: a kept connection would be one more goroutine in
	// the server to count.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	return &Profiles{base: m[1], client: &http.Client{Transport: tr}}
}

func (p *Profiles) get(t testing.TB, name string) string {
	t.Helper()
	res, err := p.client.Get(p.base + name)
	if err != nil {
		t.Fatalf("profiles: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("profiles: GET %s: %d %v %.200s", name, res.StatusCode, err, b)
	}
	return string(b)
}

var goroutineTotal = regexp.MustCompile(`(?m)^goroutine profile: total (\d+)$`)

// Goroutines returns the number of goroutines in the server, the one
// serving this request included.
func (p *Profiles) Goroutines(t testing.TB) int {
	t.Helper()
	text := p.get(t, "goroutine?debug=1")
	m := goroutineTotal.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("profiles: no goroutine total in %.200s", text)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// GoroutineDump returns the server's goroutines, grouped by stack.
func (p *Profiles) GoroutineDump(t testing.TB) string {
	t.Helper()
	return p.get(t, "goroutine?debug=1")
}

var heapInuse = regexp.MustCompile(`(?m)^# HeapInuse = (\d+)$`)

// HeapInuse returns the bytes of heap in use in the server right after a
// garbage collection.
func (p *Profiles) HeapInuse(t testing.TB) uint64 {
	t.Helper()
	text := p.get(t, "heap?gc=1&debug=1")
	m := heapInuse.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("profiles: no HeapInuse in the heap profile")
	}
	n, _ := strconv.ParseUint(m[1], 10, 64)
	return n
}
