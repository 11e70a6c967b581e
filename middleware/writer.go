package middleware

import (
	"io"
	"net/http"
)

// responseWriter records the status and size of a response for AccessLog
// and whether headers went out for recoverPanics. Both reuse one they find
// already in place, so stacking them costs one wrapper. It keeps the
// optional interfaces reachable: Flush directly (the scoring handler
// streams), the rest through Unwrap for http.ResponseController.
type responseWriter struct {
	http.ResponseWriter
	status  int // 0 until headers are sent
	written int64
}

func wrapWriter(w http.ResponseWriter) *responseWriter {
	if rw, ok := w.(*responseWriter); ok {
		return rw
	}
	return &responseWriter{ResponseWriter: w}
}

func (w *responseWriter) WriteHeader(code int) {
	// 1xx responses other than 101 do not commit the final status.
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

// ReadFrom keeps io.Copy to the response as fast as without the wrapper.
func (w *responseWriter) ReadFrom(src io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := io.Copy(w.ResponseWriter, src)
	w.written += n
	return n, err
}

func (w *responseWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush() // http.Flusher has no way to report it
}

func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
