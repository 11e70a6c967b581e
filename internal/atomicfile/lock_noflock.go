//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd)

package atomicfile

import (
	"fmt"
	"os"
	"runtime"
)

// lockFile fails: without flock(2) nothing keeps a second process from
// writing the same directory, and a durable store does not open unguarded.
func lockFile(path string) (*os.File, error) {
	return nil, fmt.Errorf("atomicfile: not available on %s: it needs flock(2) to keep %s to one process", runtime.GOOS, path)
}
