package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrLocked reports a directory whose lock another open file description
// holds, in this process or in another one.
var ErrLocked = errors.New("atomicfile: directory is in use by another process")

// LockDir creates dir (mode 0700) when it does not exist and takes an
// exclusive lock on the file name in it, so that one owner at a time has dir
// open; it fails with [ErrLocked] when another holds it. Closing the result
// releases the lock, as the death of the process does.
func LockDir(dir, name string) (io.Closer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("atomicfile: create directory: %w", err)
	}
	f, err := lockFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	return f, nil
}
