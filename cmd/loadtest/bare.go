package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// bareHandler is the ceiling: for a POST to a path in responses it reads
// the body to the end and writes that path's fixed response, as a scoring
// server would answer with the same bytes, and does nothing else.
func bareHandler(responses map[string][]byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, ok := responses[r.URL.Path]
		if !ok || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(resp)))
		w.Write(resp)
	})
}

// bareServer is the bare handler served on a loopback port of this
// process.
type bareServer struct {
	srv  *http.Server
	base string
	done chan error
}

// startBare serves h on 127.0.0.1 at a free port.
func startBare(h http.Handler) (*bareServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &bareServer{
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		base: "http://" + ln.Addr().String(),
		done: make(chan error, 1),
	}
	go func() { b.done <- b.srv.Serve(ln) }()
	return b, nil
}

// Close stops the server and waits for it.
func (b *bareServer) Close() error {
	err := b.srv.Close()
	if serr := <-b.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
