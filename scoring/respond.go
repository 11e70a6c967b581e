package scoring

import (
	"net/http"
	"strconv"
	"time"
)

// flushSize is how much of a response is buffered before it is written.
const flushSize = 32 << 10

// respond writes the rows. A response that fits in one buffer goes out with
// Content-Length; a longer one is streamed, each write under a deadline of
// h.writeProgress from its start, so that a client that stops reading
// loses its connection instead of holding the handler, its table and its
// buffers. The last deadline stays set for the server's final flush, and
// the server clears it before the connection's next request.
func (h *Handler) respond(w http.ResponseWriter, r *http.Request, enc *encoder, rows int) {
	bp, _ := h.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer func() {
		if cap(*bp) <= 4*flushSize {
			h.bufs.Put(bp)
		}
	}()
	buf := append((*bp)[:0], responseStart...)
	i := 0
	for ; i < rows && len(buf) < flushSize; i++ {
		buf = enc.appendRow(buf, i)
	}
	if i == rows {
		buf = append(buf, responseEnd...)
		*bp = buf
		writeJSON(w, buf)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	var rc *http.ResponseController
	if h.writeProgress > 0 {
		rc = http.NewResponseController(w)
	}
	for {
		if rc != nil && rc.SetWriteDeadline(time.Now().Add(h.writeProgress)) != nil {
			// A ResponseWriter without deadlines (a recorder, a
			// wrapper without Unwrap) is written to as before.
			rc = nil
		}
		if _, err := w.Write(buf); err != nil {
			h.log.DebugContext(r.Context(), "scoring: response not delivered", "path", r.URL.Path, "cause", err.Error())
			*bp = buf
			return
		}
		buf = buf[:0]
		if i == rows {
			break
		}
		for ; i < rows && len(buf) < flushSize; i++ {
			buf = enc.appendRow(buf, i)
		}
		if i == rows {
			buf = append(buf, responseEnd...)
		}
	}
	*bp = buf
}

// writeJSON writes a complete 200 response.
func writeJSON(w http.ResponseWriter, b []byte) {
	// One allocation for the three values rather than one each, as
	// Header.Set would make; the keys are canonical already. Each value's
	// slice has room for itself only, so a later Add copies instead of
	// overwriting its neighbour.
	vals := make([]string, 3)
	vals[0], vals[1], vals[2] = "application/json", "nosniff", strconv.Itoa(len(b))
	hd := w.Header()
	hd["Content-Type"] = vals[0:1:1]
	hd["X-Content-Type-Options"] = vals[1:2:2]
	hd["Content-Length"] = vals[2:3:3]
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}
