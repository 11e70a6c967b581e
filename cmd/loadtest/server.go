package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// listeningPrefix starts the line the standalone server prints once it
// accepts connections, followed by its base URL.
const listeningPrefix = "scorehub listening on "

// buildServer builds the reference server, cmd/scorehub, of the module in
// moduleDir into dir and returns the binary's path.
func buildServer(ctx context.Context, moduleDir, dir string) (string, error) {
	bin := filepath.Join(dir, "standalone")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/scorehub")
	cmd.Dir = moduleDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("loadtest: go build ./cmd/scorehub in %s: %w\n%s", moduleDir, err, out)
	}
	return bin, nil
}

// serverProc is a running server process: the standalone server, or the
// bare handler in a process of its own.
type serverProc struct {
	cmd    *exec.Cmd
	base   string      // http://host:port
	stderr *tailBuffer // the end of what it logged
	done   chan error  // receives Wait's result once stdout is drained
}

// startServer runs bin on a free loopback port with its data in dataDir,
// the admin password adminPassword, the NAME=VALUE settings env added to
// its environment and the flags extra, and waits, at most timeout, for the
// line that says where it listens.
func startServer(ctx context.Context, bin, dataDir, adminPassword string, env []string, timeout time.Duration, extra ...string) (*serverProc, error) {
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0", "-data", dataDir}, extra...)...)
	// A given admin password also keeps the server from generating and
	// printing one.
	cmd.Env = append(append(os.Environ(), env...), "SCOREHUB_ADMIN_PASSWORD="+adminPassword)
	return startProcess(ctx, cmd, listeningPrefix, timeout)
}

// startProcess starts cmd and waits, at most timeout, for the line of its
// standard output that starts with prefix and goes on with its base URL.
func startProcess(ctx context.Context, cmd *exec.Cmd, prefix string, timeout time.Duration) (*serverProc, error) {
	bin := cmd.Path
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("loadtest: %w", err)
	}
	s := &serverProc{cmd: cmd, stderr: &tailBuffer{max: 16 << 10}, done: make(chan error, 1)}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("loadtest: start %s: %w", bin, err)
	}
	base := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if b, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				select {
				case base <- strings.TrimSpace(b):
				default:
				}
			}
		}
		io.Copy(io.Discard, stdout) // after an overlong line: keep the server from blocking
		s.done <- cmd.Wait()
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case s.base = <-base:
		return s, nil
	case err := <-s.done:
		return nil, fmt.Errorf("loadtest: %s exited before listening (%v):\n%s", bin, err, s.stderr)
	case <-t.C:
		err = fmt.Errorf("loadtest: %s did not say where it listens within %v:\n%s", bin, timeout, s.stderr)
	case <-ctx.Done():
		err = ctx.Err()
	}
	cmd.Process.Kill()
	<-s.done
	return nil, err
}

// stop asks the server to drain and exit (SIGINT), and kills it if it has
// not exited after grace.
func (s *serverProc) stop(grace time.Duration) error {
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		s.cmd.Process.Kill()
		<-s.done
		return nil
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-s.done:
		if err != nil {
			return fmt.Errorf("loadtest: %s exited with %v:\n%s", s.cmd.Path, err, s.stderr)
		}
		return nil
	case <-t.C:
		s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("loadtest: %s did not exit within %v of SIGINT; killed", s.cmd.Path, grace)
	}
}

// tailBuffer keeps the last max bytes written to it. It is safe for
// concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.b))
}
