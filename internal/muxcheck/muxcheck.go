// Package muxcheck detects a program running with the pre-Go 1.22
// http.ServeMux (GODEBUG=httpmuxgo121=1, which a main module whose go.mod
// says go 1.21 or older gets by default). scorehub's handlers route with
// method and wildcard patterns, which that mux would silently take as
// literal paths.
package muxcheck

import (
	"errors"
	"net/http"
	"net/http/httptest"
)

// ErrOldMux is returned by [Check] under the pre-Go 1.22 mux.
var ErrOldMux = errors.New("scorehub needs the Go 1.22 http.ServeMux patterns, but this program runs with GODEBUG=httpmuxgo121=1 " +
	"(set by a go.mod with go ≤ 1.21 or by the environment): raise the go line in go.mod or unset the setting")

// Check reports whether http.ServeMux understands method and wildcard
// patterns.
func Check() (err error) {
	defer func() {
		if recover() != nil {
			err = ErrOldMux
		}
	}()
	var got string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /probe/{x}", func(_ http.ResponseWriter, r *http.Request) { got = r.PathValue("x") })
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/probe/ok", nil))
	if got != "ok" {
		return ErrOldMux
	}
	return nil
}
