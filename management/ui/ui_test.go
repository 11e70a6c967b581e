package ui_test

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/management/ui"
)

func newServer(t *testing.T, cfg ui.Config) *httptest.Server {
	t.Helper()
	h, err := ui.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ui/", http.StripPrefix("/ui", h))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func TestServesEachAssetWithItsTypeAndSecurityHeaders(t *testing.T) {
	srv := newServer(t, ui.Config{})
	tests := []struct {
		path, contentType, contains string
	}{
		{"/ui/", "text/html; charset=utf-8", `<label for="password">`},
		{"/ui/app.css", "text/css; charset=utf-8", ".result-col"},
		{"/ui/app.js", "text/javascript; charset=utf-8", "shellQuote"},
		{"/ui/icon.svg", "image/svg+xml", "<svg"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res, body := get(t, srv.URL+tt.path, nil)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", res.StatusCode)
			}
			if got := res.Header.Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type %q, want %q", got, tt.contentType)
			}
			if !strings.Contains(body, tt.contains) {
				t.Errorf("body does not contain %q", tt.contains)
			}
			want := map[string]string{
				"X-Content-Type-Options": "nosniff",
				"X-Frame-Options":        "DENY",
				"Referrer-Policy":        "no-referrer",
			}
			for k, v := range want {
				if got := res.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			csp := res.Header.Get("Content-Security-Policy")
			for _, d := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "form-action 'none'"} {
				if !strings.Contains(csp, d+";") && !strings.HasSuffix(csp, d) {
					t.Errorf("CSP %q lacks %q", csp, d)
				}
			}
			if strings.Contains(csp, "unsafe-") {
				t.Errorf("CSP %q allows something unsafe", csp)
			}
		})
	}
}

// TestPageLoadsAssetsByHashAndCachesThemForAYear follows the page's own
// links: each names the asset's version, is cached for a year under that
// URL, and carries the integrity hash of what is served.
func TestPageLoadsAssetsByHashAndCachesThemForAYear(t *testing.T) {
	srv := newServer(t, ui.Config{})
	res, page := get(t, srv.URL+"/ui/", nil)
	if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("page Cache-Control %q, want no-cache: a new release must show at once", cc)
	}
	links := regexp.MustCompile(`(?:src|href)="(app\.(?:css|js)\?v=[0-9a-f]+)" integrity="(sha384-[^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(links) != 2 {
		t.Fatalf("found %d versioned links with integrity in the page, want 2:\n%s", len(links), page)
	}
	for _, l := range links {
		res, body := get(t, srv.URL+"/ui/"+l[1], nil)
		if cc := res.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q, want a year, immutable", l[1], cc)
		}
		sum := sha512.Sum384([]byte(body))
		if got, want := "sha384-"+base64.StdEncoding.EncodeToString(sum[:]), html.UnescapeString(l[2]); got != want {
			t.Errorf("%s: served content hashes to %s, page says %s: the browser would refuse it", l[1], got, want)
		}
		for _, other := range []string{strings.Split(l[1], "?")[0], strings.Split(l[1], "?")[0] + "?v=0000"} {
			res, _ := get(t, srv.URL+"/ui/"+other, nil)
			if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
				t.Errorf("%s: Cache-Control %q, want no-cache for a URL that does not name this version", other, cc)
			}
		}
	}
}

func TestRevalidationAnswers304(t *testing.T) {
	srv := newServer(t, ui.Config{})
	for _, path := range []string{"/ui/", "/ui/app.js"} {
		res, _ := get(t, srv.URL+path, nil)
		etag := res.Header.Get("ETag")
		if etag == "" {
			t.Fatalf("%s: no ETag", path)
		}
		res, body := get(t, srv.URL+path, map[string]string{"If-None-Match": etag})
		if res.StatusCode != http.StatusNotModified || body != "" {
			t.Errorf("%s with If-None-Match: %d %q, want 304 without a body", path, res.StatusCode, body)
		}
	}
}

func TestOtherPathsAndMethodsAreJSONErrors(t *testing.T) {
	srv := newServer(t, ui.Config{})
	tests := []struct {
		method, path string
		status       int
		typ, allow   string
	}{
		{http.MethodGet, "/ui/nothing.js", http.StatusNotFound, "not_found", ""},
		{http.MethodGet, "/ui/index.html", http.StatusNotFound, "not_found", ""},
		{http.MethodGet, "/ui/static/app.js", http.StatusNotFound, "not_found", ""},
		{http.MethodPost, "/ui/", http.StatusMethodNotAllowed, "method_not_allowed", "GET, HEAD"},
		{http.MethodDelete, "/ui/app.js", http.StatusMethodNotAllowed, "method_not_allowed", "GET, HEAD"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var got struct {
				Error struct{ Type, Message string }
			}
			if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
				t.Fatalf("body is not the JSON error shape: %v", err)
			}
			if res.StatusCode != tt.status || got.Error.Type != tt.typ || got.Error.Message == "" {
				t.Errorf("%d %+v, want %d %s with a message", res.StatusCode, got, tt.status, tt.typ)
			}
			if a := res.Header.Get("Allow"); a != tt.allow {
				t.Errorf("Allow %q, want %q", a, tt.allow)
			}
		})
	}

	req, _ := http.NewRequest(http.MethodHead, srv.URL+"/ui/", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("HEAD /ui/: %d %q, want 200 text/html", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     ui.Config
		wantErr string
		page    []string // in the page
		csp     string   // in the CSP
	}{
		{name: "zero value: relative to the page", cfg: ui.Config{},
			page: []string{`data-management=""`, `data-token-service=""`}, csp: "connect-src 'self';"},
		{name: "paths", cfg: ui.Config{ManagementPath: "/manage", TokenServicePath: "/auth/api/rest/tokenservice"},
			page: []string{`data-management="/manage/"`, `data-token-service="/auth/api/rest/tokenservice"`}},
		{name: "root management", cfg: ui.Config{ManagementPath: "/"}, page: []string{`data-management="/"`}},
		{name: "scoring origins", cfg: ui.Config{ScoringOrigins: []string{"https://Scoring.Example.com:443", "http://127.0.0.1:8081"}},
			csp: "connect-src 'self' https://scoring.example.com http://127.0.0.1:8081;"},
		{name: "relative management path", cfg: ui.Config{ManagementPath: "manage/"}, wantErr: "must start with /"},
		{name: "dot segment", cfg: ui.Config{ManagementPath: "/a/../b/"}, wantErr: "dot segment"},
		{name: "quote in a path", cfg: ui.Config{TokenServicePath: `/a"b`}, wantErr: "characters"},
		{name: "token service at the root", cfg: ui.Config{TokenServicePath: "/"}, wantErr: "must name a route"},
		{name: "origin with a path", cfg: ui.Config{ScoringOrigins: []string{"https://x.example/api"}}, wantErr: "scheme://host"},
		{name: "wildcard origin", cfg: ui.Config{ScoringOrigins: []string{"*"}}, wantErr: "http or https"},
		{name: "origin injecting a directive", cfg: ui.Config{ScoringOrigins: []string{"https://x.example;script-src"}}, wantErr: "scoring origin"},
		{name: "ftp origin", cfg: ui.Config{ScoringOrigins: []string{"ftp://x.example"}}, wantErr: "http or https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ui.New(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "ui: ") {
					t.Fatalf("New: %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			for _, p := range tt.page {
				if !strings.Contains(rec.Body.String(), p) {
					t.Errorf("page lacks %s", p)
				}
			}
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, tt.csp) {
				t.Errorf("CSP %q lacks %q", csp, tt.csp)
			}
		})
	}
}

// TestPageIsAccessibleAndKeepsNothingInStorage reads the page and its
// script as a reviewer would: every control has a label, controls are real
// buttons and inputs, results are announced, no markup is built from text,
// and the token is never written where it would outlive the tab.
func TestPageIsAccessibleAndKeepsNothingInStorage(t *testing.T) {
	srv := newServer(t, ui.Config{})
	_, page := get(t, srv.URL+"/ui/", nil)
	_, script := get(t, srv.URL+"/ui/app.js", nil)

	labels := map[string]bool{}
	for _, m := range regexp.MustCompile(`<label for="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		labels[m[1]] = true
	}
	var unlabelled []string
	for _, m := range regexp.MustCompile(`<(?:input|textarea|select)\b[^>]*\bid="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		if !labels[m[1]] {
			unlabelled = append(unlabelled, m[1])
		}
	}
	if d := cmp.Diff([]string(nil), unlabelled); d != "" {
		t.Errorf("controls without a label (-want +got):\n%s", d)
	}
	for _, id := range []string{"run", "show-curl", "copy-url", "copy-curl", "signin-submit", "challengers-refresh", "drift-refresh", "promote-confirm", "promote-cancel"} {
		if !regexp.MustCompile(`<button type="(?:button|submit)" id="` + id + `"`).MatchString(page) {
			t.Errorf("no <button> with id %s", id)
		}
	}
	for _, live := range []string{`id="result-live" aria-live="polite"`, `id="signin-message" class="notice" role="alert"`, `id="announce" class="sr-only" role="status" aria-live="polite"`, `id="drift-message" class="notice" role="status"`} {
		if !strings.Contains(page, live) {
			t.Errorf("page lacks the live region %s", live)
		}
	}
	// Promoting a challenger is confirmed in a modal <dialog> that says what
	// it asks, not in the browser's confirm(), which a page cannot label.
	if !regexp.MustCompile(`<dialog id="promote-dialog"[^>]* aria-labelledby="promote-title" aria-describedby="promote-text">`).MatchString(page) {
		t.Error("no labelled dialog promote-dialog")
	}
	if !strings.Contains(script, "$('promote-dialog').showModal()") || strings.Contains(script, "confirm(") {
		t.Error("app.js does not confirm a promotion in the modal dialog promote-dialog")
	}
	// How a protected endpoint is called is one group of radio buttons
	// under a legend, and the password and API token typed there are
	// hidden as typed and kept out of the browser's form memory.
	callAs := regexp.MustCompile(`(?s)<fieldset id="call-as"[^>]*>\s*<legend>Call as</legend>(.*?)</fieldset>`).FindStringSubmatch(page)
	if callAs == nil {
		t.Error("no fieldset call-as with the legend Call as")
	} else {
		var radios []string
		for _, m := range regexp.MustCompile(`<input type="radio" name="call-as" id="[^"]+" value="([^"]+)">`).FindAllStringSubmatch(callAs[1], -1) {
			radios = append(radios, m[1])
		}
		if d := cmp.Diff([]string{"bearer", "basic", "apitoken"}, radios); d != "" {
			t.Errorf("the Call as choices (-want +got):\n%s", d)
		}
	}
	for _, id := range []string{"call-password", "call-token"} {
		if !strings.Contains(page, `<input id="`+id+`" type="password" autocomplete="off"`) {
			t.Errorf("%s is not a password field with autocomplete off", id)
		}
	}
	if regexp.MustCompile(`<script[^>]*>[^<]`).MatchString(page) || regexp.MustCompile(`\s(?:on[a-z]+|style)=`).MatchString(page) {
		t.Error("the page has an inline script, handler or style: the CSP would block it")
	}
	for _, banned := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "localStorage", "sessionStorage", "document.cookie", "indexedDB"} {
		if strings.Contains(script, banned) {
			t.Errorf("app.js uses %s", banned)
		}
	}
}
