package middleware_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/middleware"
)

func TestRecover(t *testing.T) {
	tests := []struct {
		name      string
		handler   http.HandlerFunc
		wantPanic any // what escapes Recover
		wantCode  int
		wantLog   bool
	}{
		{"no panic", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "fine") }, nil, http.StatusOK, false},
		{"panic with a string", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/csv")
			panic("index out of range [7] with length 3")
		}, nil, http.StatusInternalServerError, true},
		{"panic with an error", func(w http.ResponseWriter, r *http.Request) {
			panic(errors.New("nil map write"))
		}, nil, http.StatusInternalServerError, true},
		{"panic after the headers went out aborts the response", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"data":[`)
			panic("half way")
		}, http.ErrAbortHandler, http.StatusOK, true},
		{"ErrAbortHandler passes through", func(w http.ResponseWriter, r *http.Request) {
			panic(http.ErrAbortHandler)
		}, http.ErrAbortHandler, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, logs := newLogger(slog.LevelDebug)
			rid, err := middleware.RequestID(middleware.RequestIDConfig{})
			if err != nil {
				t.Fatal(err)
			}
			h := middleware.Chain(rid, middleware.Recover(logger))(tt.handler)
			rec := httptest.NewRecorder()
			var escaped any
			func() {
				defer func() { escaped = recover() }()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/score", nil))
			}()
			if escaped != tt.wantPanic {
				t.Fatalf("panic escaping Recover = %v, want %v", escaped, tt.wantPanic)
			}
			if tt.wantCode != 0 && rec.Code != tt.wantCode {
				t.Errorf("status = %d, want %d", rec.Code, tt.wantCode)
			}
			if tt.wantCode == http.StatusInternalServerError {
				b := decodeError(t, rec)
				if b.Error.Type != "internal_error" || b.Error.Message != "internal error" {
					t.Errorf("error = %+v", b.Error)
				}
			}
			recs := logs.records(t)
			if !tt.wantLog {
				if len(recs) != 0 {
					t.Errorf("logged %v", recs)
				}
				return
			}
			if len(recs) != 1 {
				t.Fatalf("%d log records, want 1", len(recs))
			}
			stack, _ := recs[0]["stack"].(string)
			if recs[0]["level"] != "ERROR" || recs[0]["panic"] == "" || !strings.Contains(stack, "recover_test.go") ||
				recs[0]["request_id"] != rec.Header().Get("X-Request-ID") {
				t.Errorf("log record lacks level, panic, stack or request ID: %v", recs[0])
			}
		})
	}
}

// TestRecoverServer checks what a client of a real server sees when the
// handler panics half way through a response: an error, not a response
// that looks complete. The response is chunked, so had Recover returned
// normally, the client would have read a well-ended body.
func TestRecoverServer(t *testing.T) {
	srv := httptest.NewServer(middleware.Recover(slog.New(slog.DiscardHandler))(http.HandlerFunc(
		func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"data":[`)
			w.(http.Flusher).Flush()
			panic("half way")
		})))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err) // the headers were flushed before the panic
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Fatal("the client read a complete response from a handler that panicked")
	}
}
