package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
)

// defaultCORSMaxAge is how long browsers may cache a preflight answer when
// [CORSConfig.MaxAge] is zero.
const defaultCORSMaxAge = 10 * time.Minute

// CORSConfig configures [CORS]. The zero value allows no cross-origin
// access at all: CORS then adds no headers.
type CORSConfig struct {
	// AllowedOrigins are the origins ("https://app.example.com",
	// "http://localhost:8080") whose pages may call the API: scheme, host
	// and, if not the default, port; no path. Matching is exact (scheme and
	// host are compared in lower case, a default port is dropped). "*"
	// alone allows every origin, and then AllowCredentials must be false.
	// "null" is refused: sandboxed frames and local files all share it.
	// Empty means CORS is off.
	AllowedOrigins []string
	// AllowCredentials lets pages send cookies and TLS client certificates
	// (Access-Control-Allow-Credentials). An Authorization header set by
	// the page's script does not need it.
	AllowCredentials bool
	// AllowedMethods may be used in cross-origin requests. Nil means GET,
	// HEAD, POST, PUT, PATCH and DELETE.
	AllowedMethods []string
	// AllowedHeaders may be sent in cross-origin requests, beyond the
	// CORS-safelisted ones. Nil means Authorization and Content-Type.
	AllowedHeaders []string
	// ExposedHeaders may be read by the page from responses, beyond the
	// CORS-safelisted ones (Access-Control-Expose-Headers); Retry-After,
	// WWW-Authenticate and X-Request-ID are the ones scorehub sets. Nil
	// means none.
	ExposedHeaders []string
	// MaxAge is how long a browser may cache a preflight answer, in whole
	// seconds. Zero means 10 minutes; negative is an error.
	MaxAge time.Duration
}

type corsPolicy struct {
	anyOrigin   bool
	origins     map[string]string // normalized → itself, to send back
	credentials bool
	methods     map[string]bool
	headers     map[string]bool // lower case
	allowMethod string          // header values, precomputed
	allowHeader string
	expose      string
	maxAge      string
}

// CORS returns middleware that answers cross-origin requests as cfg
// allows. With no AllowedOrigins it changes nothing.
//
// A preflight (OPTIONS with Origin and Access-Control-Request-Method) is
// answered by CORS itself and never reaches the handler: 204 with the
// allowed methods, headers and max age when the origin, the method and
// every requested header are allowed, else 403 cors_rejected. On other
// requests from an allowed origin, CORS adds Access-Control-Allow-Origin
// (and -Credentials, -Expose-Headers) and calls the handler; requests from
// other origins reach the handler without them, and the browser keeps the
// response from the page. Unless every origin is allowed, responses carry
// Vary: Origin so caches keep the answers for different origins apart.
func CORS(cfg CORSConfig) (func(http.Handler) http.Handler, error) {
	if len(cfg.AllowedOrigins) == 0 {
		return func(next http.Handler) http.Handler { return next }, nil
	}
	p, err := newCORSPolicy(cfg)
	if err != nil {
		return nil, err
	}
	return p.middleware, nil
}

func newCORSPolicy(cfg CORSConfig) (*corsPolicy, error) {
	p := &corsPolicy{
		origins:     make(map[string]string, len(cfg.AllowedOrigins)),
		credentials: cfg.AllowCredentials,
		methods:     make(map[string]bool),
		headers:     make(map[string]bool),
	}
	for _, o := range cfg.AllowedOrigins {
		if o == "*" {
			p.anyOrigin = true
			continue
		}
		norm, err := normalizeOrigin(o)
		if err != nil {
			return nil, err
		}
		p.origins[norm] = norm
	}
	if p.anyOrigin && len(p.origins) > 0 {
		return nil, errors.New(`middleware: CORS origin "*" cannot be listed with other origins`)
	}
	if p.anyOrigin && p.credentials {
		return nil, errors.New(`middleware: CORS origin "*" cannot be combined with AllowCredentials; list the origins`)
	}

	methods := cfg.AllowedMethods
	if methods == nil {
		methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	}
	for _, m := range methods {
		if !isToken(m) {
			return nil, fmt.Errorf("middleware: CORS method %q is not a valid method", m)
		}
		p.methods[m] = true
	}
	p.allowMethod = strings.Join(methods, ", ")

	headers := cfg.AllowedHeaders
	if headers == nil {
		headers = []string{"Authorization", "Content-Type"}
	}
	for _, h := range headers {
		if !isToken(h) || h == "*" {
			return nil, fmt.Errorf("middleware: CORS header %q is not a header name", h)
		}
		p.headers[strings.ToLower(h)] = true
	}
	p.allowHeader = strings.Join(headers, ", ")

	for _, h := range cfg.ExposedHeaders {
		if !isToken(h) || h == "*" {
			return nil, fmt.Errorf("middleware: CORS exposed header %q is not a header name", h)
		}
	}
	p.expose = strings.Join(cfg.ExposedHeaders, ", ")

	switch {
	case cfg.MaxAge < 0:
		return nil, fmt.Errorf("middleware: CORS MaxAge must not be negative, not %v", cfg.MaxAge)
	case cfg.MaxAge == 0:
		p.maxAge = strconv.FormatInt(int64(defaultCORSMaxAge/time.Second), 10)
	default:
		p.maxAge = strconv.FormatInt(int64(cfg.MaxAge/time.Second), 10)
	}
	return p, nil
}

// normalizeOrigin checks that o is a serialized origin and returns it as
// browsers send it.
func normalizeOrigin(o string) (string, error) {
	if strings.EqualFold(o, "null") {
		return "", errors.New(`middleware: CORS origin "null" is refused: every sandboxed page and local file sends it`)
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" || u.User != nil ||
		(u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery) {
		return "", fmt.Errorf("middleware: CORS origin %q is not of the form scheme://host[:port]", o)
	}
	if !validHost(u.Hostname()) {
		return "", fmt.Errorf("middleware: CORS origin %q does not name one host (no wildcards)", o)
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if port := u.Port(); (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return scheme + "://" + host, nil
}

// allowed returns the value of Access-Control-Allow-Origin for origin: the
// configured origin it matches (never the header as sent), or "*".
// validHost reports whether h is a DNS name or an IP address.
func validHost(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func (p *corsPolicy) allowed(origin string) (string, bool) {
	if p.anyOrigin {
		return "*", true
	}
	o, ok := p.origins[strings.ToLower(origin)]
	return o, ok
}

func (p *corsPolicy) middleware(next http.Handler) http.Handler {
	rejected := func(w http.ResponseWriter, r *http.Request, msg string) {
		httperr.Write(w, r, nil, httperr.New(problem.CORSRejected, msg))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if !p.anyOrigin {
			h.Add("Vary", "Origin")
		}
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		allowOrigin, ok := p.allowed(origin)
		if !preflight {
			if ok {
				p.setOrigin(h, allowOrigin)
				if p.expose != "" {
					h.Set("Access-Control-Expose-Headers", p.expose)
				}
			}
			next.ServeHTTP(w, r)
			return
		}
		if !ok {
			rejected(w, r, "cross-origin requests from this origin are not allowed")
			return
		}
		if !p.methods[r.Header.Get("Access-Control-Request-Method")] {
			rejected(w, r, "this method is not allowed in cross-origin requests")
			return
		}
		for _, line := range r.Header.Values("Access-Control-Request-Headers") {
			for _, name := range strings.Split(line, ",") {
				name = strings.ToLower(strings.TrimSpace(name))
				if name != "" && !p.headers[name] {
					rejected(w, r, "a requested header is not allowed in cross-origin requests")
					return
				}
			}
		}
		p.setOrigin(h, allowOrigin)
		h.Set("Access-Control-Allow-Methods", p.allowMethod)
		h.Set("Access-Control-Allow-Headers", p.allowHeader)
		h.Set("Access-Control-Max-Age", p.maxAge)
		w.WriteHeader(http.StatusNoContent)
	})
}

func (p *corsPolicy) setOrigin(h http.Header, allowOrigin string) {
	h.Set("Access-Control-Allow-Origin", allowOrigin)
	if p.credentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
}
