package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/tokens"
)

const testRealm = "scorehub-test"

var (
	annClaims   = &tokens.Claims{Subject: "ann", Groups: []string{"analysts"}}
	rootClaims  = &tokens.Claims{Subject: "root", Admin: true}
	bobClaims   = &tokens.Claims{Subject: "bob", Groups: []string{"sales", "marketing"}}
	errInternal = errors.New("key store unreachable at 10.0.0.7")
)

// sentinelTokens maps the raw tokens fakeVerifier refuses to the error it
// refuses them with. Each wraps its sentinel with detail that must never
// reach the client.
var sentinelTokens = map[string]error{
	"missing":     tokens.ErrMissing,
	"too-large":   tokens.ErrTooLarge,
	"malformed":   tokens.ErrMalformed,
	"algorithm":   tokens.ErrAlgorithm,
	"unknown-key": tokens.ErrUnknownKey,
	"signature":   tokens.ErrSignature,
	"expired":     tokens.ErrExpired,
	"not-yet":     tokens.ErrNotYetValid,
	"issuer":      tokens.ErrIssuer,
	"audience":    tokens.ErrAudience,
	"claims":      tokens.ErrClaims,
	"revoked":     tokens.ErrRevoked,
}

// fakeVerifier accepts "ann-token", "root-token" and "bob-token", refuses
// the names in sentinelTokens with their sentinel, fails with an internal
// error on "broken", with context.Canceled on "cancelled", returns neither
// claims nor error on "nil-claims", and refuses anything else as a bad
// signature. It records the last raw token it saw.
type fakeVerifier struct {
	mu   sync.Mutex
	seen []string
}

func (f *fakeVerifier) Verify(_ context.Context, raw string) (*tokens.Claims, error) {
	f.mu.Lock()
	f.seen = append(f.seen, raw)
	f.mu.Unlock()
	switch raw {
	case "ann-token":
		return annClaims, nil
	case "root-token":
		return rootClaims, nil
	case "bob-token":
		return bobClaims, nil
	case "broken":
		return nil, errInternal
	case "cancelled":
		return nil, context.Canceled
	case "nil-claims":
		return nil, nil
	}
	if err, ok := sentinelTokens[raw]; ok {
		return nil, fmt.Errorf("%w: detail kid=k9 secret-detail", err)
	}
	return nil, fmt.Errorf("%w: detail secret-detail", tokens.ErrSignature)
}

func (f *fakeVerifier) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// errorBody is the JSON error shape every refusal has.
type errorBody struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// decodeError decodes rec's body as the JSON error shape, failing the test
// if it is not one.
func decodeError(t *testing.T, rec *httptest.ResponseRecorder) errorBody {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q, want application/json; body %q", ct, rec.Body.String())
	}
	var b errorBody
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("body %q is not the JSON error shape: %v", rec.Body.String(), err)
	}
	if b.Error.Type == "" || b.Error.Message == "" {
		t.Fatalf("body %q lacks type or message", rec.Body.String())
	}
	return b
}

// okHandler answers 200 "ok <subject>" with the claims it finds.
var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	sub := "-"
	if c, ok := middleware.ClaimsFrom(r.Context()); ok {
		sub = c.Subject
	}
	fmt.Fprintf(w, "ok %s", sub)
})

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// logBuffer is a concurrency-safe buffer for a JSON slog handler.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// records returns the JSON log records written so far.
func (b *logBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func newLogger(level slog.Level) (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: level})), b
}

func newClock() *testutil.Clock {
	return testutil.NewClock(time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC))
}

// verifierFunc adapts a function to middleware.TokenVerifier.
type verifierFunc func(ctx context.Context, raw string) (*tokens.Claims, error)

func (f verifierFunc) Verify(ctx context.Context, raw string) (*tokens.Claims, error) {
	return f(ctx, raw)
}
