package ui_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/scorehub/scorehub/management/ui"
)

// The standalone server's layout: the page at /ui/, the management API and
// the token service at the root, so the zero Config fits. The mux sends
// /ui to /ui/.
func ExampleNew() {
	page, err := ui.New(ui.Config{})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ui/", http.StripPrefix("/ui", page))

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui", nil))
	fmt.Println("/ui redirects to", rec.Header().Get("Location"))

	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	// Output:
	// /ui redirects to /ui/
	// 200 text/html; charset=utf-8
}
