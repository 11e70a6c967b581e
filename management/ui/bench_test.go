package ui_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/scorehub/scorehub/management/ui"
)

func BenchmarkServe(b *testing.B) {
	h, err := ui.New(ui.Config{})
	if err != nil {
		b.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	etag := rec.Header().Get("ETag")
	for _, bc := range []struct {
		name, path, ifNoneMatch string
	}{
		{"page", "/", ""},
		{"page-revalidated", "/", etag},
		{"script", "/app.js", ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, bc.path, nil)
			if bc.ifNoneMatch != "" {
				req.Header.Set("If-None-Match", bc.ifNoneMatch)
			}
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK && w.Code != http.StatusNotModified {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}
