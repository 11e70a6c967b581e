package atomicfile

import (
	"io"
	"io/fs"
	"os"
)

// LogFile is what a store does with a file it appends to and reads back:
// the part of *os.File a log of segments uses.
type LogFile interface {
	io.Writer
	io.ReaderAt
	Stat() (fs.FileInfo, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

// LogFS is where a log of segments keeps its files. [OS] is the real
// file system; tests substitute one whose operations fail or count.
type LogFS interface {
	OpenFile(name string, flag int, perm os.FileMode) (LogFile, error)
	Remove(name string) error
	SyncDir(dir string) error
}

var _ LogFS = OS{}

// OpenFile is [os.OpenFile].
func (OS) OpenFile(name string, flag int, perm os.FileMode) (LogFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // not a nil *os.File in an interface
	}
	return f, nil
}
