package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/middleware"
)

func TestCORS(t *testing.T) {
	exact := middleware.CORSConfig{
		AllowedOrigins:   []string{"https://App.Example.com:443", "http://localhost:8080"},
		AllowCredentials: true,
		ExposedHeaders:   []string{"Retry-After", "X-Request-ID"},
		MaxAge:           time.Hour,
	}
	anyOrigin := middleware.CORSConfig{AllowedOrigins: []string{"*"}}
	preflight := func(origin, method, headers string) map[string]string {
		h := map[string]string{"Origin": origin, "Access-Control-Request-Method": method}
		if headers != "" {
			h["Access-Control-Request-Headers"] = headers
		}
		return h
	}
	tests := []struct {
		name        string
		cfg         middleware.CORSConfig
		method      string
		header      map[string]string
		wantStatus  int
		wantHandler bool
		want        http.Header // the CORS headers of the response (Vary and Access-Control-*)
		wantType    string
	}{
		{
			name: "off by default: no headers at all", cfg: middleware.CORSConfig{},
			method: http.MethodPost, header: map[string]string{"Origin": "https://evil.example"},
			wantStatus: http.StatusOK, wantHandler: true, want: http.Header{},
		},
		{
			name: "off by default: preflight reaches the handler", cfg: middleware.CORSConfig{},
			method: http.MethodOptions, header: preflight("https://app.example.com", "POST", ""),
			wantStatus: http.StatusOK, wantHandler: true, want: http.Header{},
		},
		{
			name: "same-origin request: only Vary", cfg: exact, method: http.MethodGet,
			wantStatus: http.StatusOK, wantHandler: true, want: http.Header{"Vary": {"Origin"}},
		},
		{
			name: "allowed origin", cfg: exact, method: http.MethodPost,
			header:     map[string]string{"Origin": "https://app.example.com"},
			wantStatus: http.StatusOK, wantHandler: true,
			want: http.Header{
				"Vary":                             {"Origin"},
				"Access-Control-Allow-Origin":      {"https://app.example.com"},
				"Access-Control-Allow-Credentials": {"true"},
				"Access-Control-Expose-Headers":    {"Retry-After, X-Request-ID"},
			},
		},
		{
			name: "other origin: served without CORS headers, the browser withholds it", cfg: exact, method: http.MethodPost,
			header:     map[string]string{"Origin": "https://app.example.com.evil.example"},
			wantStatus: http.StatusOK, wantHandler: true, want: http.Header{"Vary": {"Origin"}},
		},
		{
			name: "other scheme is another origin", cfg: exact, method: http.MethodPost,
			header:     map[string]string{"Origin": "http://app.example.com"},
			wantStatus: http.StatusOK, wantHandler: true, want: http.Header{"Vary": {"Origin"}},
		},
		{
			name: "preflight allowed", cfg: exact, method: http.MethodOptions,
			header:     preflight("http://localhost:8080", "POST", "authorization,content-type"),
			wantStatus: http.StatusNoContent,
			want: http.Header{
				"Vary":                             {"Origin"},
				"Access-Control-Allow-Origin":      {"http://localhost:8080"},
				"Access-Control-Allow-Credentials": {"true"},
				"Access-Control-Allow-Methods":     {"GET, HEAD, POST, PUT, PATCH, DELETE"},
				"Access-Control-Allow-Headers":     {"Authorization, Content-Type"},
				"Access-Control-Max-Age":           {"3600"},
			},
		},
		{
			name: "preflight from another origin", cfg: exact, method: http.MethodOptions,
			header:     preflight("https://evil.example", "POST", ""),
			wantStatus: http.StatusForbidden, want: http.Header{"Vary": {"Origin"}}, wantType: "cors_rejected",
		},
		{
			name: "preflight for a method not allowed", cfg: exact, method: http.MethodOptions,
			header:     preflight("https://app.example.com", "PROPFIND", ""),
			wantStatus: http.StatusForbidden, want: http.Header{"Vary": {"Origin"}}, wantType: "cors_rejected",
		},
		{
			name: "preflight for a header not allowed", cfg: exact, method: http.MethodOptions,
			header:     preflight("https://app.example.com", "POST", "authorization, x-debug"),
			wantStatus: http.StatusForbidden, want: http.Header{"Vary": {"Origin"}}, wantType: "cors_rejected",
		},
		{
			name: "OPTIONS without Access-Control-Request-Method is not a preflight", cfg: exact, method: http.MethodOptions,
			header:     map[string]string{"Origin": "https://app.example.com"},
			wantStatus: http.StatusOK, wantHandler: true,
			want: http.Header{
				"Vary":                             {"Origin"},
				"Access-Control-Allow-Origin":      {"https://app.example.com"},
				"Access-Control-Allow-Credentials": {"true"},
				"Access-Control-Expose-Headers":    {"Retry-After, X-Request-ID"},
			},
		},
		{
			name: "any origin", cfg: anyOrigin, method: http.MethodPost,
			header:     map[string]string{"Origin": "https://anyone.example"},
			wantStatus: http.StatusOK, wantHandler: true,
			want: http.Header{"Access-Control-Allow-Origin": {"*"}},
		},
		{
			name: "any origin, preflight with default max age", cfg: anyOrigin, method: http.MethodOptions,
			header:     preflight("https://anyone.example", "DELETE", "Authorization"),
			wantStatus: http.StatusNoContent,
			want: http.Header{
				"Access-Control-Allow-Origin":  {"*"},
				"Access-Control-Allow-Methods": {"GET, HEAD, POST, PUT, PATCH, DELETE"},
				"Access-Control-Allow-Headers": {"Authorization, Content-Type"},
				"Access-Control-Max-Age":       {"600"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mw, err := middleware.CORS(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			called := false
			h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called = true }))
			r := httptest.NewRequest(tt.method, "/webapi/DEFAULT/api/v1/services/churn/predict", nil)
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			rec := serve(h, r)
			if rec.Code != tt.wantStatus || called != tt.wantHandler {
				t.Fatalf("status %d, handler called %v; want %d, %v", rec.Code, called, tt.wantStatus, tt.wantHandler)
			}
			got := http.Header{}
			for k, v := range rec.Header() {
				if k == "Vary" || strings.HasPrefix(k, "Access-Control-") {
					got[k] = v
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CORS headers (-want +got):\n%s", diff)
			}
			if tt.wantType != "" {
				if b := decodeError(t, rec); b.Error.Type != tt.wantType {
					t.Errorf("type = %q, want %q", b.Error.Type, tt.wantType)
				}
			}
		})
	}
}

func TestCORSConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  middleware.CORSConfig
		want string
	}{
		{"wildcard with credentials", middleware.CORSConfig{AllowedOrigins: []string{"*"}, AllowCredentials: true}, "AllowCredentials"},
		{"wildcard among origins", middleware.CORSConfig{AllowedOrigins: []string{"*", "https://a.example"}}, "other origins"},
		{"null origin", middleware.CORSConfig{AllowedOrigins: []string{"null"}}, `"null" is refused`},
		{"origin with a path", middleware.CORSConfig{AllowedOrigins: []string{"https://a.example/"}}, "scheme://host"},
		{"origin without a scheme", middleware.CORSConfig{AllowedOrigins: []string{"a.example"}}, "scheme://host"},
		{"origin with a wildcard subdomain", middleware.CORSConfig{AllowedOrigins: []string{"https://*.example.com"}}, "no wildcards"},
		{"negative max age", middleware.CORSConfig{AllowedOrigins: []string{"https://a.example"}, MaxAge: -time.Second}, "MaxAge"},
		{"wildcard header", middleware.CORSConfig{AllowedOrigins: []string{"https://a.example"}, AllowedHeaders: []string{"*"}}, "header"},
		{"bad method", middleware.CORSConfig{AllowedOrigins: []string{"https://a.example"}, AllowedMethods: []string{"GET POST"}}, "method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := middleware.CORS(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}
