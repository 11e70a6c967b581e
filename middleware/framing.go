package middleware

import "net/http"

// CloseChunked makes the server close an HTTP/1.1 connection once it has
// answered a request whose body came with Transfer-Encoding (chunked).
//
// A request that carries both Content-Length and Transfer-Encoding is the
// shape of request smuggling: a proxy in front that frames the body by
// Content-Length and a server that frames it by Transfer-Encoding disagree
// on where the next request starts. RFC 9112 §6.1 lets a server process
// such a request by its Transfer-Encoding, as net/http does, but says it
// MUST close the connection after responding, which net/http does not.
// net/http also removes the Content-Length header before any handler runs,
// so no handler can tell such a request from a plain chunked one: hence
// CloseChunked closes after every chunked request. Most clients send a
// Content-Length; those that stream a chunked body pay one new connection
// per such request. Put it outermost, so that every answer, refusals
// included, carries the Connection: close. HTTP/2 requests, whose framing
// has no such ambiguity, pass untouched.
//
// The middleware is safe for concurrent use.
func CloseChunked(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 1 && len(r.TransferEncoding) > 0 {
			// net/http closes the connection after an answer that
			// says so, and reads no further request from it.
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}
