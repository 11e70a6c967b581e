package harness

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
)

// AdminPassword is the password of the user admin on the servers Start
// runs, unless Options.Env says otherwise.
const AdminPassword = "correct horse battery staple"

// listeningPrefix starts the line the server prints once it accepts
// connections, followed by its base URL.
const listeningPrefix = "scorehub listening on "

// How long a server may take to start listening and to exit after a signal:
// generous bounds for a loaded machine and a race-detector build, never
// speed requirements.
const (
	startLimit = 2 * time.Minute
	stopLimit  = 2 * time.Minute
)

// Options are how Start runs the server.
type Options struct {
	// Dir is the data directory; a new temporary one when empty.
	Dir string
	// Args are further flags, after -addr 127.0.0.1:0 and -data Dir.
	Args []string
	// Env sets SCOREHUB_* variables over the one Start sets,
	// SCOREHUB_ADMIN_PASSWORD=AdminPassword; an empty value leaves a
	// variable unset. No other SCOREHUB_* variable of the test's own
	// environment reaches the server.
	Env map[string]string
	// WithoutRace runs a build without the race detector even when the
	// test binary has it: for tests that start the server many times and
	// test what it leaves on disk, not its memory model (a start-up under
	// the race detector takes seconds).
	WithoutRace bool
}

// Server is one run of the reference server as a process. Its methods are
// safe for concurrent use.
type Server struct {
	// Base is the server's base URL, http://127.0.0.1:port.
	Base string
	// Addr is its listening address, 127.0.0.1:port.
	Addr string
	// Dir is its data directory.
	Dir string

	cmd    *exec.Cmd
	stdout testutil.LockedBuffer
	stderr testutil.LockedBuffer
	done   chan struct{} // closed once the process has exited
	err    error         // cmd.Wait's, once done

	docOnce sync.Once
	doc     *Conformance
	docErr  error
}

// Start runs the server with opts and waits until it listens. The server is
// killed, if it still runs, when the test ends, and the test fails if the
// race detector reported a race in it.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, listening := launch(t, opts)
	select {
	case base := <-listening:
		s.Base = base
		s.Addr = strings.TrimPrefix(base, "http://")
		return s
	case <-s.done:
		t.Fatalf("the server exited before listening (%v); stderr:\n%s", s.err, s.stderr.String())
	case <-time.After(startLimit):
		s.Kill(t)
		t.Fatalf("the server did not listen within %v; stderr:\n%s", startLimit, s.stderr.String())
	}
	return nil
}

// RunToExit runs the server with opts and waits for it to exit by itself,
// as a bad configuration makes it do at once. It returns what the server
// printed and how it exited; it fails the test if the server started
// listening.
func RunToExit(t testing.TB, opts Options) (stdout, stderr string, err error) {
	t.Helper()
	s, listening := launch(t, opts)
	select {
	case <-s.done:
	case <-listening:
		s.Kill(t)
		t.Errorf("the server started listening; stdout:\n%s", s.stdout.String())
	case <-time.After(startLimit):
		s.Kill(t)
		t.Fatalf("the server neither listened nor exited within %v", startLimit)
	}
	return s.stdout.String(), s.stderr.String(), s.err
}

// launch starts the process and returns it with a channel that receives
// its base URL once it listens.
func launch(t testing.TB, opts Options) (*Server, <-chan string) {
	t.Helper()
	if binaries == nil {
		t.Fatal("harness: no server binaries; the suite's TestMain must call harness.Main")
	}
	binary, err := binaries.binary(RaceEnabled && !opts.WithoutRace)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	cmd := exec.Command(binary, append([]string{"-addr", "127.0.0.1:0", "-data", opts.Dir}, opts.Args...)...)
	cmd.Env = serverEnv(opts.Env)
	s := &Server{Dir: opts.Dir, cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &s.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", binary, err)
	}
	listening := make(chan string, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			s.stdout.Write([]byte(line + "\n"))
			if base, ok := strings.CutPrefix(line, listeningPrefix); ok {
				listening <- base
			}
		}
		io.Copy(&s.stdout, out)
	}()
	go func() {
		<-read // Wait closes the pipe: read it to its end first
		s.err = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		if !s.Exited() {
			cmd.Process.Kill()
			<-s.done
		}
		if strings.Contains(s.stderr.String(), "WARNING: DATA RACE") {
			t.Errorf("the race detector reported a race in the server:\n%s", s.stderr.String())
		}
	})
	return s, listening
}

// serverEnv is the test's environment without its SCOREHUB_* variables,
// with the default admin password and set over it, and GORACE for a server
// built with the race detector.
func serverEnv(set map[string]string) []string {
	vars := map[string]string{"SCOREHUB_ADMIN_PASSWORD": AdminPassword}
	for k, v := range set {
		vars[k] = v
	}
	// A race-detector build sleeps a second before it exits, for reports
	// of other threads to come in; the server's reports are in by then.
	gorace := "atexit_sleep_ms=0"
	var env []string
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "GORACE="):
			gorace = strings.TrimPrefix(kv, "GORACE=") + " " + gorace
		case !strings.HasPrefix(kv, "SCOREHUB_"):
			env = append(env, kv)
		}
	}
	env = append(env, "GORACE="+gorace)
	for k, v := range vars {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Stdout returns what the server printed on its standard output so far.
func (s *Server) Stdout() string { return s.stdout.String() }

// Stderr returns the server's log so far.
func (s *Server) Stderr() string { return s.stderr.String() }

// WaitStdout waits until the server's standard output contains want and
// returns it, failing the test after a minute.
func (s *Server) WaitStdout(t testing.TB, want string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		out := s.stdout.String()
		if strings.Contains(out, want) {
			return out
		}
		if s.Exited() || time.Now().After(deadline) {
			t.Fatalf("the server did not print %q; stdout:\n%s", want, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Exited reports whether the process has exited.
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the process.
func (s *Server) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }

// Wait waits for the process to exit, at most stopLimit, and returns how
// it exited: nil for status 0.
func (s *Server) Wait() error {
	select {
	case <-s.done:
		return s.err
	case <-time.After(stopLimit):
		s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("harness: the server did not exit within %v; killed", stopLimit)
	}
}

// Stop sends SIGTERM, as an operator or a service manager stops the
// server, and waits for it to exit. It returns nil when the server exited
// with status 0 and its race detector, if any, reported nothing.
func (s *Server) Stop() error {
	if err := s.Signal(syscall.SIGTERM); err != nil && !s.Exited() {
		return fmt.Errorf("harness: SIGTERM: %w", err)
	}
	err := s.Wait()
	if err != nil {
		return fmt.Errorf("harness: the server exited with %w after SIGTERM; stderr:\n%s", err, s.stderr.String())
	}
	if strings.Contains(s.stderr.String(), "WARNING: DATA RACE") {
		return errors.New("harness: the race detector reported a race in the server")
	}
	return nil
}

// Kill sends SIGKILL, as a crash or the kernel's OOM killer ends the
// server, and waits for the process. The test fails unless it was the
// SIGKILL that ended it.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	if err := s.Signal(syscall.SIGKILL); err != nil && !s.Exited() {
		t.Fatalf("SIGKILL: %v", err)
	}
	<-s.done
	var ee *exec.ExitError
	if !errors.As(s.err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the server ended with %v before the kill; stderr:\n%s", s.err, s.stderr.String())
	}
}
