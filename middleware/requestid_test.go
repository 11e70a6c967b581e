package middleware_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/middleware"
)

func TestRequestID(t *testing.T) {
	// The generator reads 16 bytes per ID: 0x00… then 0xff….
	const (
		first  = "00000000-0000-4000-8000-000000000000"
		second = "ffffffff-ffff-4fff-bfff-ffffffffffff"
	)
	tests := []struct {
		name     string
		header   string   // config
		incoming []string // request header lines
		want     string
	}{
		{"none sent: generated", "", nil, first},
		{"valid one kept", "", []string{"req-42.a_b~c:d+e/f="}, "req-42.a_b~c:d+e/f="},
		{"UUID kept", "", []string{"6f1c8a52-3c1e-4b59-9a5e-0f2b7d4c8e11"}, "6f1c8a52-3c1e-4b59-9a5e-0f2b7d4c8e11"},
		{"longest kept", "", []string{strings.Repeat("a", 128)}, strings.Repeat("a", 128)},
		{"too long: replaced", "", []string{strings.Repeat("a", 129)}, first},
		{"space: replaced", "", []string{"a b"}, first},
		{"log-injection attempt: replaced", "", []string{"x\nlevel=ERROR"}, first},
		{"quote: replaced", "", []string{`a"b`}, first},
		{"two headers: replaced", "", []string{"a", "b"}, first},
		{"custom header", "X-Correlation-Id", []string{"corr-1"}, "corr-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rnd := io.MultiReader(bytes.NewReader(make([]byte, 16)), bytes.NewReader(bytes.Repeat([]byte{0xff}, 16)))
			mw, err := middleware.RequestID(middleware.RequestIDConfig{Header: tt.header, Rand: rnd})
			if err != nil {
				t.Fatal(err)
			}
			header := tt.header
			if header == "" {
				header = "X-Request-ID"
			}
			var inHandler string
			h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				inHandler = middleware.RequestIDFrom(r.Context())
			}))
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			for _, v := range tt.incoming {
				r.Header.Add(header, v)
			}
			rec := serve(h, r)
			if got := rec.Header().Get(header); got != tt.want {
				t.Errorf("response %s = %q, want %q", header, got, tt.want)
			}
			if inHandler != tt.want {
				t.Errorf("RequestIDFrom = %q, want %q", inHandler, tt.want)
			}
		})
	}
}

func TestRequestIDGeneratesDistinct(t *testing.T) {
	mw, err := middleware.RequestID(middleware.RequestIDConfig{Rand: bytes.NewReader(append(make([]byte, 16), bytes.Repeat([]byte{0xff}, 16)...))})
	if err != nil {
		t.Fatal(err)
	}
	h := mw(okHandler)
	a := serve(h, httptest.NewRequest(http.MethodGet, "/", nil)).Header().Get("X-Request-ID")
	b := serve(h, httptest.NewRequest(http.MethodGet, "/", nil)).Header().Get("X-Request-ID")
	if a != "00000000-0000-4000-8000-000000000000" || b != "ffffffff-ffff-4fff-bfff-ffffffffffff" {
		t.Errorf("IDs = %q, %q", a, b)
	}
}

func TestRequestIDRandFails(t *testing.T) {
	logger, logs := newLogger(0)
	mw, err := middleware.RequestID(middleware.RequestIDConfig{Rand: iotestErrReader{}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	called := false
	rec := serve(mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true })),
		httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusInternalServerError || called {
		t.Fatalf("status %d, handler called %v; want 500 without the handler", rec.Code, called)
	}
	if b := decodeError(t, rec); b.Error.Message != "internal error" {
		t.Errorf("message = %q", b.Error.Message)
	}
	if !strings.Contains(logs.String(), "entropy exhausted") {
		t.Errorf("cause not logged: %s", logs)
	}
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("entropy exhausted") }

func TestRequestIDConfig(t *testing.T) {
	if _, err := middleware.RequestID(middleware.RequestIDConfig{Header: "X Request"}); err == nil {
		t.Error("a header name with a space was accepted")
	}
}
