package testutil

import (
	"bufio"
	"os"
	"os/exec"
	"testing"
)

// Child is a run of the test binary as a child process that runs one test
// of its own: a writer that a crash test kills mid-stream. Its lines are
// what the child prints, one acknowledgement a line.
type Child struct {
	cmd    *exec.Cmd
	Lines  *bufio.Scanner
	killed bool
}

// StartChild runs the test binary again as a child that runs only the
// test named test, with env ("NAME=value") added to its environment, and
// reads its standard output line by line. The child is killed when t
// ends, if Kill has not killed it before.
func StartChild(t testing.TB, test, env string) *Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &Child{cmd: cmd, Lines: bufio.NewScanner(out)}
	t.Cleanup(func() {
		if !c.killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return c
}

// Kill kills the child with SIGKILL, a crash it has no time to clean up
// after, and waits for it to end.
func (c *Child) Kill(t testing.TB) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	c.killed = true
	c.cmd.Wait()
}
