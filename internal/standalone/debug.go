package standalone

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// sideServer serves a handler on a listener of its own, so that what it
// serves is never reachable through the public address: the Go runtime's
// profiles (-debug-addr) and, when -metrics-addr is set, the metrics.
type sideServer struct {
	srv  *http.Server
	addr string
	done chan struct{}
}

// debugHandler serves /debug/pprof/. It takes no token: whoever can reach it
// can read the process's memory layout and slow it down with profiles, which
// is why it is off unless -debug-addr is set, and why that address must be
// on loopback unless -insecure-debug-public. The command line
// (/debug/pprof/cmdline) is not served: it may hold -store's password; the
// index answers that path 404 as an unknown profile. The handlers are
// mounted on a mux of the server's own; net/http/pprof's registrations on
// http.DefaultServeMux are never served.
func debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// startSide listens on addr and serves h there until Close; name says in the
// log which side server stopped.
func startSide(addr, name string, h http.Handler, logger *slog.Logger) (*sideServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	d := &sideServer{
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
		addr: ln.Addr().String(),
		done: make(chan struct{}),
	}
	go func() {
		defer close(d.done)
		if err := d.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Error(name+" server stopped", "cause", err.Error())
		}
	}()
	return d, nil
}

// Close stops the side server at once: a profile being taken or a scrape
// being answered is cut off.
func (d *sideServer) Close() error {
	err := d.srv.Close()
	<-d.done
	return err
}

// metricsMux serves h at GET metricsPath alone, for the metrics listener.
func metricsMux(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+metricsPath, h)
	return mux
}
