package middleware

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
)

// defaultRequestIDHeader is the header requestID reads and sets when
// requestIDConfig.Header is empty.
const defaultRequestIDHeader = "X-Request-ID"

// maxRequestIDLen is the longest incoming request ID requestID keeps.
const maxRequestIDLen = 128

// requestIDConfig configures requestID.
type requestIDConfig struct {
	// Header is the request and response header that carries the ID.
	// Empty means defaultRequestIDHeader.
	Header string
	// Rand is the source of generated IDs. Nil means crypto/rand.Reader.
	Rand io.Reader
	// Logger receives failures of Rand. Nil means slog.Default().
	Logger *slog.Logger
}

// requestID returns middleware that gives every request an ID: the one the
// client (or a proxy) sent in the header, if it is at most maxRequestIDLen
// characters of A–Z a–z 0–9 and "-._~:+/=", else a new random one in UUID
// version 4 form. The ID is set on the response header before the handler
// runs and put in the request's context (requestIDFrom), and AccessLog
// logs it. If Rand fails, the request is answered 500 rather than served
// without an ID.
func requestID(cfg requestIDConfig) (func(http.Handler) http.Handler, error) {
	header := cfg.Header
	if header == "" {
		header = defaultRequestIDHeader
	}
	if !isToken(header) {
		return nil, fmt.Errorf("middleware: request ID header %q is not a valid header name", header)
	}
	header = http.CanonicalHeaderKey(header)
	rnd := cfg.Rand
	if rnd == nil {
		rnd = rand.Reader
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var id string
			if v := r.Header[header]; len(v) == 1 && validRequestID(v[0]) {
				id = v[0]
			} else {
				var err error
				if id, err = newUUID(rnd); err != nil {
					httperr.Write(w, r, logger, err)
					return
				}
			}
			w.Header().Set(header, id)
			ctx := r.Context()
			if li := logInfoFrom(ctx); li != nil {
				li.requestID = id
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, requestIDKey{}, id)))
		})
	}, nil
}

type requestIDKey struct{}

// requestIDFrom returns the ID requestID gave the request with context
// ctx, or "" if none.
func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestIDOf is requestIDFrom, or the ID a requestID running inside an
// AccessLog left for it.
func requestIDOf(ctx context.Context) string {
	if id := requestIDFrom(ctx); id != "" {
		return id
	}
	if li := logInfoFrom(ctx); li != nil {
		return li.requestID
	}
	return ""
}

func validRequestID(s string) bool {
	if s == "" || len(s) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == ':', c == '+', c == '/', c == '=':
		default:
			return false
		}
	}
	return true
}

// newUUID returns a random RFC 9562 version 4 UUID read from rnd.
func newUUID(rnd io.Reader) (string, error) {
	var u [16]byte
	if _, err := io.ReadFull(rnd, u[:]); err != nil {
		return "", fmt.Errorf("middleware: generate request ID: %w", err)
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:]), nil
}
