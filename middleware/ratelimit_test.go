package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/tokens"
)

func request(remote string, xff ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/webapi/DEFAULT/api/v1/services/churn/predict", nil)
	r.RemoteAddr = remote
	for _, h := range xff {
		r.Header.Add("X-Forwarded-For", h)
	}
	return r
}

func TestRateLimit(t *testing.T) {
	clock := newClock()
	mw, err := middleware.RateLimit(middleware.RateLimitConfig{Limit: tokens.RateLimit{Every: time.Second, Burst: 2}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	h := mw(okHandler)
	steps := []struct {
		advance    time.Duration
		remote     string
		wantStatus int
		wantRetry  string
	}{
		{0, "192.0.2.1:4000", http.StatusOK, ""},
		{0, "192.0.2.1:4001", http.StatusOK, ""}, // same client, other port
		{0, "192.0.2.1:4002", http.StatusTooManyRequests, "1"},
		{0, "192.0.2.2:4000", http.StatusOK, ""}, // another client has its own bucket
		{500 * time.Millisecond, "192.0.2.1:4000", http.StatusTooManyRequests, "1"},
		{500 * time.Millisecond, "192.0.2.1:4000", http.StatusOK, ""}, // one token back after 1 s
		{0, "192.0.2.1:4000", http.StatusTooManyRequests, "1"},
		{0, "[2001:db8:1:2::1]:4000", http.StatusOK, ""},
		{0, "[2001:db8:1:2::ffff]:4000", http.StatusOK, ""},
		{0, "[2001:db8:1:2:aaaa::1]:4000", http.StatusTooManyRequests, "1"}, // same /64
		{0, "[2001:db8:1:3::1]:4000", http.StatusOK, ""},                    // next /64
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		rec := serve(h, request(s.remote))
		if rec.Code != s.wantStatus {
			t.Fatalf("step %d (%s): status = %d, want %d", i, s.remote, rec.Code, s.wantStatus)
		}
		if got := rec.Header().Get("Retry-After"); got != s.wantRetry {
			t.Errorf("step %d: Retry-After = %q, want %q", i, got, s.wantRetry)
		}
		if s.wantStatus == http.StatusTooManyRequests {
			if b := decodeError(t, rec); b.Error.Type != "rate_limited" || b.Error.Message != "too many requests; retry in 1 seconds" {
				t.Errorf("step %d: error = %+v", i, b.Error)
			}
		}
	}
}

func TestRateLimitRetryAfterRoundsUp(t *testing.T) {
	clock := newClock()
	l, err := middleware.NewRateLimiter(middleware.RateLimitConfig{Limit: tokens.RateLimit{Every: 10 * time.Second, Burst: 1}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	h := l.Middleware(okHandler)
	serve(h, request("192.0.2.1:1"))
	clock.Advance(2500 * time.Millisecond)
	rec := serve(h, request("192.0.2.1:1"))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "8" {
		t.Fatalf("got %d Retry-After %q, want 429 and 8 (7.5 s rounded up)", rec.Code, rec.Header().Get("Retry-After"))
	}
	// A refused request takes no token: 7.5 s later the client is served.
	clock.Advance(7500 * time.Millisecond)
	if rec := serve(h, request("192.0.2.1:1")); rec.Code != http.StatusOK {
		t.Fatalf("after waiting Retry-After: %d", rec.Code)
	}
}

func TestRateLimitForgetsLeastRecentlySeen(t *testing.T) {
	clock := newClock()
	l, err := middleware.NewRateLimiter(middleware.RateLimitConfig{
		Limit: tokens.RateLimit{Every: time.Hour, Burst: 1, MaxKeys: 2}, Now: clock.Now,
		Key: func(r *http.Request) string { return r.Header.Get("X-Key") },
	})
	if err != nil {
		t.Fatal(err)
	}
	allow := func(key string) bool {
		_, ok := l.Allow(key)
		return ok
	}
	got := []bool{
		allow("a"), allow("b"), // both spend their token
		allow("a"), // refused; a is now the most recent
		allow("c"), // b is forgotten
		allow("a"), // still refused: a was kept
		allow("b"), // a fresh bucket
	}
	want := []bool{true, true, false, true, false, true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("allowed = %v, want %v", got, want)
	}
	if l.Len() != 2 {
		t.Errorf("Len = %d, want at most MaxKeys 2", l.Len())
	}
}

// TestRateLimitBoundedUnderChurn checks that memory stays bounded while
// many clients come and go at once, and that a new client is never refused
// for the others' sake.
func TestRateLimitBoundedUnderChurn(t *testing.T) {
	clock := newClock()
	mw, err := middleware.RateLimit(middleware.RateLimitConfig{
		Limit: tokens.RateLimit{Every: time.Hour, Burst: 1, MaxKeys: 16}, Now: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	h := mw(okHandler)
	var refused atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if serve(h, request(fmt.Sprintf("198.51.%d.%d:1", g, i))).Code != http.StatusOK {
					refused.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := refused.Load(); n != 0 {
		t.Errorf("%d first requests of new clients refused", n)
	}
	l, err := middleware.NewRateLimiter(middleware.RateLimitConfig{Limit: tokens.RateLimit{Every: time.Second, Burst: 1, MaxKeys: 16}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		l.Allow(fmt.Sprint(i))
	}
	if l.Len() != 16 {
		t.Errorf("Len = %d after 1000 keys, want MaxKeys 16", l.Len())
	}
}

func TestRateLimitExact(t *testing.T) {
	clock := newClock()
	l, err := middleware.NewRateLimiter(middleware.RateLimitConfig{Limit: tokens.RateLimit{Every: time.Hour, Burst: 100}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, ok := l.Allow("one-client"); ok {
					allowed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if got := allowed.Load(); got != 100 {
		t.Errorf("allowed %d of 400 concurrent requests, want exactly Burst 100", got)
	}
}

func TestRateLimitConfig(t *testing.T) {
	key := func(*http.Request) string { return "" }
	tests := []struct {
		name string
		cfg  middleware.RateLimitConfig
		want string
	}{
		{"no rate", middleware.RateLimitConfig{Limit: tokens.RateLimit{Burst: 1}}, "positive Every"},
		{"negative rate", middleware.RateLimitConfig{Limit: tokens.RateLimit{Every: -1, Burst: 1}}, "positive Every"},
		{"no burst", middleware.RateLimitConfig{Limit: tokens.RateLimit{Every: time.Second}}, "Burst of at least 1"},
		{"negative MaxKeys", middleware.RateLimitConfig{Limit: tokens.RateLimit{Every: time.Second, Burst: 1, MaxKeys: -1}}, "MaxKeys"},
		{"Key and TrustedProxies", middleware.RateLimitConfig{Limit: tokens.RateLimit{Every: time.Second, Burst: 1}, Key: key,
			TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, "not both"},
		{"invalid prefix", middleware.RateLimitConfig{Limit: tokens.RateLimit{Every: time.Second, Burst: 1}, TrustedProxies: []netip.Prefix{{}}}, "invalid trusted proxy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := middleware.RateLimit(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestRateLimitTrustedProxies(t *testing.T) {
	clock := newClock()
	mw, err := middleware.RateLimit(middleware.RateLimitConfig{
		Limit: tokens.RateLimit{Every: time.Hour, Burst: 1}, Now: clock.Now,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := mw(okHandler)
	for i, s := range []struct {
		remote, xff string
		want        int
	}{
		{"10.0.0.2:1", "203.0.113.1", http.StatusOK},
		{"10.0.0.3:1", "203.0.113.2", http.StatusOK}, // another client behind the same proxies
		{"10.0.0.3:1", "203.0.113.1", http.StatusTooManyRequests},
		{"10.0.0.3:1", "198.51.100.1, 203.0.113.1", http.StatusTooManyRequests}, // a spoofed entry does not help
	} {
		if got := serve(h, request(s.remote, s.xff)).Code; got != s.want {
			t.Errorf("request %d: status %d, want %d", i, got, s.want)
		}
	}
}
