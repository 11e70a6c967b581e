package ui

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
)

//go:embed static
var static embed.FS

// Config configures a [Handler]. The zero value is a page mounted one level
// below the management API and the token service, as the standalone server
// lays them out (/ui/ beside /api/v1/… and /api/rest/tokenservice), that
// calls nothing but its own origin.
type Config struct {
	// ManagementPath is the URL path at which the host mounts the
	// management API (management.Handler), such as "/manage/". Empty means
	// the parent of the page's own path: the page at /ui/ reads
	// /api/v1/endpoints. Segments may hold letters, digits, '.', '_', '-'
	// and '~'.
	ManagementPath string

	// TokenServicePath is the URL path of the token service, where the
	// host mounts tokens.PathTokenService, such as
	// "/auth/api/rest/tokenservice". Empty means api/rest/tokenservice
	// under the parent of the page's path. Same characters as
	// ManagementPath.
	TokenServicePath string

	// ScoringOrigins are the origins ("https://scoring.example.com") other
	// than the page's own where scoring endpoints are served, for a
	// management API whose BaseURL names another origin. The page's
	// Content-Security-Policy lets it call them, and nothing else; each
	// must also allow the page's origin in its CORS configuration. Empty
	// means the page's own origin only.
	ScoringOrigins []string
}

// Handler serves the endpoint test pages: one HTML page, its stylesheet,
// its script and its icon, all embedded in the binary. Routes are relative
// to "/"; a host mounts it with http.StripPrefix, at /ui/ in the standalone
// server:
//
//	GET /          the page
//	GET /app.css   GET /app.js   GET /icon.svg
//
// GET and HEAD only (405 otherwise); any other path is a JSON 404. Every
// answer carries a Content-Security-Policy without inline scripts or
// styles, frame-ancestors 'none', X-Content-Type-Options: nosniff and
// Referrer-Policy: no-referrer. The page is revalidated on every load
// (Cache-Control: no-cache, with an ETag); the page refers to the other
// assets by a URL that names their content hash, and those URLs are cached
// for a year.
//
// A Handler is immutable once made and safe for concurrent use.
type Handler struct {
	assets  map[string]*asset // by path, "/" for the page
	headers http.Header       // set on every answer
}

var _ http.Handler = (*Handler)(nil)

// asset is one file as served.
type asset struct {
	body        []byte
	contentType string
	etag        string
	version     string // what ?v= must say for the answer to be cached for a year
	integrity   string // the Subresource Integrity value of body
}

// Cache lifetimes.
const (
	cacheRevalidate = "no-cache"
	cacheImmutable  = "public, max-age=31536000, immutable"
)

// New checks cfg and returns a Handler. It fails when a path is not an
// absolute URL path of plain segments or a scoring origin is not of the
// form scheme://host[:port] with scheme http or https.
func New(cfg Config) (*Handler, error) {
	mgmt, err := cleanPath("ManagementPath", cfg.ManagementPath, true)
	if err != nil {
		return nil, err
	}
	tokenService, err := cleanPath("TokenServicePath", cfg.TokenServicePath, false)
	if err != nil {
		return nil, err
	}
	connect := []string{"'self'"}
	for _, o := range cfg.ScoringOrigins {
		norm, err := cleanOrigin(o)
		if err != nil {
			return nil, err
		}
		connect = append(connect, norm)
	}

	h := &Handler{assets: make(map[string]*asset, 4), headers: http.Header{}}
	for _, f := range []struct{ name, contentType string }{
		{"app.css", "text/css; charset=utf-8"},
		{"app.js", "text/javascript; charset=utf-8"},
		{"icon.svg", "image/svg+xml"},
	} {
		body, err := static.ReadFile("static/" + f.name)
		if err != nil {
			return nil, fmt.Errorf("ui: %w", err)
		}
		h.assets["/"+f.name] = newAsset(body, f.contentType)
	}

	page, err := renderPage(pageData{
		Management:   mgmt,
		TokenService: tokenService,
		CSS:          h.assets["/app.css"].ref(),
		JS:           h.assets["/app.js"].ref(),
		Icon:         h.assets["/icon.svg"].ref(),
	})
	if err != nil {
		return nil, err
	}
	index := newAsset(page, "text/html; charset=utf-8")
	index.version = "" // the page's URL is fixed: it is never cached for long
	h.assets["/"] = index

	h.headers.Set("Content-Security-Policy", strings.Join([]string{
		"default-src 'none'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src 'self'",
		"connect-src " + strings.Join(connect, " "),
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
		"require-trusted-types-for 'script'",
		"trusted-types 'none'",
	}, "; "))
	h.headers.Set("X-Content-Type-Options", "nosniff")
	h.headers.Set("X-Frame-Options", "DENY")
	h.headers.Set("Referrer-Policy", "no-referrer")
	h.headers.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.headers.Set("Cross-Origin-Resource-Policy", "same-origin")
	return h, nil
}

func newAsset(body []byte, contentType string) *asset {
	sum := sha256.Sum256(body)
	version := hex.EncodeToString(sum[:8])
	sri := sha512.Sum384(body)
	return &asset{
		body:        body,
		contentType: contentType,
		etag:        `"` + hex.EncodeToString(sum[:16]) + `"`,
		version:     version,
		integrity:   "sha384-" + base64.StdEncoding.EncodeToString(sri[:]),
	}
}

// pageData is what static/index.html is rendered with, once, in New.
type pageData struct {
	Management, TokenService string
	CSS, JS, Icon            assetRef
}

// assetRef is how the page refers to an asset: by a URL naming its
// version, with the hash the browser checks it against.
type assetRef struct{ Version, Integrity string }

func (a *asset) ref() assetRef { return assetRef{Version: a.version, Integrity: a.integrity} }

func renderPage(d pageData) ([]byte, error) {
	t, err := template.ParseFS(static, "static/index.html")
	if err != nil {
		return nil, fmt.Errorf("ui: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("ui: render the page: %w", err)
	}
	return b.Bytes(), nil
}

var (
	errNotFound = httperr.New(problem.NotFound, "no page has this address")
	errMethod   = &problem.Error{Status: http.StatusMethodNotAllowed, Code: problem.MethodNotAllowed,
		Message: "only GET and HEAD are allowed here", Allow: "GET, HEAD"}
)

// ServeHTTP serves the page and its assets.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	for k, v := range h.headers {
		hd[k] = v
	}
	a, ok := h.assets[r.URL.Path]
	if !ok {
		httperr.Write(w, r, nil, errNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		httperr.Write(w, r, nil, errMethod)
		return
	}
	hd.Set("Content-Type", a.contentType)
	hd.Set("ETag", a.etag)
	if a.version != "" && r.URL.Query().Get("v") == a.version {
		hd.Set("Cache-Control", cacheImmutable)
	} else {
		hd.Set("Cache-Control", cacheRevalidate)
	}
	// ServeContent answers If-None-Match with 304, ranges with 206, and
	// HEAD without a body; no modification time: the ETag says it all.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// cleanPath checks a configured URL path and returns it, with a trailing
// slash when dir is set; "" stays "" (the page then works it out from its
// own address).
func cleanPath(field, p string, dir bool) (string, error) {
	if p == "" {
		return "", nil
	}
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("ui: Config.%s %q must start with /", field, p)
	}
	trimmed := strings.TrimSuffix(p, "/")
	if trimmed != "" {
		for _, seg := range strings.Split(trimmed[1:], "/") {
			if seg == "" || seg == "." || seg == ".." || strings.Trim(seg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~-") != "" {
				return "", fmt.Errorf("ui: Config.%s %q: segment %q is empty, a dot segment, or has characters other than letters, digits, '.', '_', '-', '~'", field, p, seg)
			}
		}
	}
	if dir {
		return trimmed + "/", nil
	}
	if trimmed == "" {
		return "", fmt.Errorf("ui: Config.%s must name a route, not /", field)
	}
	return trimmed, nil
}

// cleanOrigin checks a serialized origin and returns it in the form
// browsers send.
func cleanOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil {
		return "", fmt.Errorf("ui: scoring origin %q: %w", o, err)
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", fmt.Errorf("ui: scoring origin %q must be http or https", o)
	case u.Host == "" || u.Opaque != "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", fmt.Errorf("ui: scoring origin %q is not of the form scheme://host[:port]", o)
	case strings.ContainsAny(u.Host, "*;' \t"):
		return "", fmt.Errorf("ui: scoring origin %q must name one host", o)
	}
	host := strings.ToLower(u.Host)
	if port := u.Port(); (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return scheme + "://" + host, nil
}
