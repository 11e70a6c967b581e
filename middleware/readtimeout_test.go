package middleware_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/scorehub/scorehub/middleware"
)

// timedOutBody is a request body whose read fails as a connection's does
// once the server's read timeout has passed.
type timedOutBody struct{}

func (timedOutBody) Read([]byte) (int, error) {
	return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
}

// TestBearerFormBodyCutOffIs408: the form body Bearer reads for a
// forbidden access_token never arrives; the client is told 408, not that
// its body was malformed.
func TestBearerFormBodyCutOffIs408(t *testing.T) {
	bearer, err := middleware.Bearer(middleware.BearerConfig{Verifier: &fakeVerifier{}})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/", timedOutBody{})
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer ann-token")
	rec := serve(bearer(okHandler), req)
	if b := decodeError(t, rec); rec.Code != http.StatusRequestTimeout || b.Error.Type != "request_timeout" {
		t.Errorf("answered %d %+v, want 408 request_timeout", rec.Code, b)
	}
}
