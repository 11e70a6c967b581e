package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
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
// process: in the harness, or in the bare process.
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

// bareProcessEnv, set in the environment, makes this program a peer
// server in a process of its own instead of the harness. Set to
// naiveProcess, it serves the naive encoding/json scorer; set to anything
// else, the bare handler, reading the responses from standard input, a
// JSON object of the bodies by path. Either serves on a free loopback
// port, says where on standard output and serves until SIGINT or SIGTERM.
// The harness starts itself so.
const bareProcessEnv = "SCOREHUB_LOADTEST_BARE_PROCESS"

// naiveProcess is the value of bareProcessEnv that makes the process the
// naive server.
const naiveProcess = "naive"

// servePeerProcess is the main of a peer process started with
// bareProcessEnv set to mode.
func servePeerProcess(ctx context.Context, mode string, stdin io.Reader, stdout io.Writer) error {
	if mode == naiveProcess {
		return serveNaiveProcess(ctx, stdout)
	}
	return serveBareProcess(ctx, stdin, stdout)
}

// bareListening starts the line the bare process prints once it accepts
// connections, followed by its base URL.
const bareListening = "bare handler listening on "

// serveBareProcess is the bare process's main: it serves until ctx ends.
func serveBareProcess(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	var responses map[string][]byte
	if err := json.NewDecoder(stdin).Decode(&responses); err != nil {
		return fmt.Errorf("loadtest: bare process: read the responses: %w", err)
	}
	srv, err := startBare(bareHandler(responses))
	if err != nil {
		return fmt.Errorf("loadtest: bare process: %w", err)
	}
	if _, err := fmt.Fprintf(stdout, "%s%s\n", bareListening, srv.base); err != nil {
		srv.Close()
		return err
	}
	<-ctx.Done()
	return srv.Close()
}

// startBareProcess starts this program again as the bare process, serving
// responses, and waits, at most timeout, until it listens.
func startBareProcess(ctx context.Context, responses map[string][]byte, timeout time.Duration) (*serverProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("loadtest: bare process: %w", err)
	}
	b, err := json.Marshal(responses)
	if err != nil {
		return nil, fmt.Errorf("loadtest: bare process: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), bareProcessEnv+"=1")
	cmd.Stdin = bytes.NewReader(b)
	return startProcess(ctx, cmd, bareListening, timeout)
}
