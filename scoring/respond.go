package scoring

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/scorehub/scorehub/internal/redact"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// flushSize is how much of a response is buffered before it is written.
const flushSize = 32 << 10

// respond writes the rows. A response that fits in one buffer goes out with
// Content-Length; a longer one is streamed, each write under a deadline of
// h.writeProgress from its start, so that a client that stops reading
// loses its connection instead of holding the handler, its table and its
// buffers. The last deadline stays set for the server's final flush, and
// the server clears it before the connection's next request.
func (h *Handler) respond(w http.ResponseWriter, r *http.Request, enc *wire.Encoder, rows int) {
	bp, _ := h.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer func() {
		if cap(*bp) <= 4*flushSize {
			h.bufs.Put(bp)
		}
	}()
	buf := append((*bp)[:0], wire.ResponseStart...)
	i := 0
	for ; i < rows && len(buf) < flushSize; i++ {
		buf = enc.AppendRow(buf, i)
	}
	if i == rows {
		buf = append(buf, wire.ResponseEnd...)
		*bp = buf
		writeJSON(w, buf)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	sw := streamWriter{w: w, r: r, h: h}
	if h.writeProgress > 0 {
		sw.rc = http.NewResponseController(w)
	}
	if n := wire.Parallelism(); n > 1 && rows-i >= parallelRows {
		perRow := max(1, len(buf)/i)
		ok := sw.write(buf)
		*bp = buf[:0]
		if ok {
			h.respondParallel(&sw, enc, i, rows, n, perRow)
		}
		return
	}
	for {
		if !sw.write(buf) {
			*bp = buf
			return
		}
		buf = buf[:0]
		if i == rows {
			break
		}
		for ; i < rows && len(buf) < flushSize; i++ {
			buf = enc.AppendRow(buf, i)
		}
		if i == rows {
			buf = append(buf, wire.ResponseEnd...)
		}
	}
	*bp = buf
}

// streamWriter writes the pieces of a streamed answer, each under its
// write deadline.
type streamWriter struct {
	w  http.ResponseWriter
	r  *http.Request
	h  *Handler
	rc *http.ResponseController // nil: no deadlines
}

// write writes b and reports whether it was delivered.
func (sw *streamWriter) write(b []byte) bool {
	if sw.rc != nil && sw.rc.SetWriteDeadline(time.Now().Add(sw.h.writeProgress)) != nil {
		// A ResponseWriter without deadlines (a recorder, a wrapper
		// without Unwrap) is written to as before.
		sw.rc = nil
	}
	if _, err := sw.w.Write(b); err != nil {
		sw.h.log.DebugContext(sw.r.Context(), "scoring: response not delivered", "path", redact.Secrets(sw.r.URL.Path), "cause", err.Error())
		return false
	}
	return true
}

// An answer encoded in parts is encoded a batch at a time, each batch in
// one part a goroutine, while the batch before it is written. A part holds
// at most partRows rows and about partBytes bytes, as many rows as the
// rows before it say fit, so that the answer's buffers stay near
// 2 × parts × partBytes however wide its rows and however long the
// answer: a part outgrows partBytes only by rows much longer than those
// before them. Buffers of up to maxPartBuf are kept for the next answer.
const (
	partRows   = 1024
	partBytes  = 128 << 10
	maxPartBuf = 1 << 20
)

// rowsPerPart is how many rows of perRow bytes each make a part.
func rowsPerPart(perRow int) int {
	return max(1, min(partRows, partBytes/max(1, perRow)))
}

// respondParallel encodes rows from to rows of the answer on n goroutines
// and writes them, and the end of the answer, in order: each batch of n
// parts is encoded while the batch before it is written. perRow is the
// bytes of a row encoded so far, which sizes the first batch's parts;
// each batch sizes the next one's.
func (h *Handler) respondParallel(sw *streamWriter, enc *wire.Encoder, from, rows, n, perRow int) {
	type batch struct {
		bufs [][]byte
		wg   sync.WaitGroup
	}
	var batches [2]batch
	for i := range batches {
		batches[i].bufs = make([][]byte, n)
		for k := range n {
			if bp, ok := h.partBufs.Get().(*[]byte); ok {
				batches[i].bufs[k] = *bp
			}
		}
	}
	defer func() {
		for i := range batches {
			for _, buf := range batches[i].bufs {
				if cap(buf) <= maxPartBuf {
					h.partBufs.Put(&buf)
				}
			}
		}
	}()
	start := func(b *batch, lo int) int {
		hi := min(lo+n*rowsPerPart(perRow), rows)
		for k := range n {
			plo, phi := lo+(hi-lo)*k/n, lo+(hi-lo)*(k+1)/n
			b.wg.Go(func() {
				buf := b.bufs[k][:0]
				for i := plo; i < phi; i++ {
					buf = enc.AppendRow(buf, i)
				}
				if phi == rows {
					buf = append(buf, wire.ResponseEnd...)
				}
				b.bufs[k] = buf
			})
		}
		return hi
	}
	lo, next := from, start(&batches[0], from)
	for cur := 0; ; cur ^= 1 {
		b := &batches[cur]
		b.wg.Wait()
		done := next == rows
		if !done {
			size := 0
			for _, buf := range b.bufs {
				size += len(buf)
			}
			perRow = max(1, size/(next-lo))
			lo, next = next, start(&batches[cur^1], next)
		}
		for _, buf := range b.bufs {
			if len(buf) > 0 && !sw.write(buf) {
				batches[cur^1].wg.Wait()
				return
			}
		}
		if done {
			return
		}
	}
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
