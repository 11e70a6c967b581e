package main

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// debugServer serves the Go runtime's profiles on a listener of its own,
// so that they are never reachable through the public address. It takes no
// token: whoever can reach it can read the process's memory layout and
// slow it down with profiles, which is why it is off unless -debug-addr is
// set, and why that address belongs on loopback.
type debugServer struct {
	srv  *http.Server
	addr string
	done chan struct{}
}

// startDebug listens on addr and serves /debug/pprof/ there until Close.
// The handlers are mounted on a mux of the server's own; net/http/pprof's
// registrations on http.DefaultServeMux are never served.
func startDebug(addr string, logger *slog.Logger) (*debugServer, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	d := &debugServer{
		srv: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
		addr: ln.Addr().String(),
		done: make(chan struct{}),
	}
	go func() {
		defer close(d.done)
		if err := d.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Error("debug server stopped", "cause", err.Error())
		}
	}()
	return d, nil
}

// Close stops the debug server at once: a profile being taken is cut off.
func (d *debugServer) Close() error {
	err := d.srv.Close()
	<-d.done
	return err
}
