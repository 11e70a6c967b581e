package middleware_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/middleware"
)

// readAll is a handler that reads the whole body and answers with its
// length, or with the error reading it gave, as scorehub handlers do.
var readAll = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		httperr.Write(w, r, nil, err)
		return
	}
	io.WriteString(w, strings.Repeat("+", len(b)))
})

func TestBodyLimit(t *testing.T) {
	mw, err := middleware.BodyLimit(10)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		body        string
		chunked     bool
		wantStatus  int
		wantHandler bool
	}{
		{"under the limit", "12345", false, http.StatusOK, true},
		{"at the limit", "1234567890", false, http.StatusOK, true},
		{"Content-Length over the limit: refused before the handler", "12345678901", false, http.StatusRequestEntityTooLarge, false},
		{"chunked, at the limit", "1234567890", true, http.StatusOK, true},
		{"chunked, over the limit: the handler's read fails", "12345678901", true, http.StatusRequestEntityTooLarge, true},
		{"no body", "", false, http.StatusOK, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				called = true
				readAll(w, r)
			}))
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
			if tt.chunked {
				r.ContentLength = -1
				r.Body = io.NopCloser(strings.NewReader(tt.body))
			}
			rec := serve(h, r)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.wantStatus, rec.Body)
			}
			if called != tt.wantHandler {
				t.Errorf("handler called = %v, want %v", called, tt.wantHandler)
			}
			if tt.wantStatus == http.StatusOK {
				if rec.Body.Len() != len(tt.body) {
					t.Errorf("handler read %d bytes, want %d", rec.Body.Len(), len(tt.body))
				}
				return
			}
			b := decodeError(t, rec)
			if b.Error.Type != "body_too_large" || b.Error.Message != "the request body is larger than 10 bytes" {
				t.Errorf("error = %+v", b.Error)
			}
		})
	}
}

// TestBodyLimitServer sends a large body to a real server: the client gets
// the 413 answer, not a reset connection, and the server is not made to
// read the body.
func TestBodyLimitServer(t *testing.T) {
	mw, err := middleware.BodyLimit(1 << 10)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(readAll))
	defer srv.Close()

	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(strings.Repeat("x", 4<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), `"body_too_large"`) {
		t.Fatalf("got %d %s, want 413 body_too_large", resp.StatusCode, body)
	}
}

func TestBodyLimitConfig(t *testing.T) {
	for _, n := range []int64{0, -1} {
		if _, err := middleware.BodyLimit(n); err == nil {
			t.Errorf("BodyLimit(%d) succeeded", n)
		}
	}
}
