package payloads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/atomicfile"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry/process"
)

var (
	logEpoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	logRef   = process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "live"}
	logCtx   = context.Background()
	errFault = errors.New("injected fault")
)

func logRecord(n int, at time.Time) Record {
	return Record{Endpoint: logRef, Model: "churn@3", At: at, Row: json.RawMessage(fmt.Sprintf(`{"n":%d,"plan":"gold"}`, n))}
}

// openTestStore opens a FileStore in dir on fsys, closed when the test
// ends.
func openTestStore(t *testing.T, dir string, opts Options, fsys fileSystem, boundsEvery time.Duration) *FileStore {
	t.Helper()
	s, err := openFileStore(dir, opts, fsys, boundsEvery)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func appendRecords(t *testing.T, s Store, from, to int, at time.Time) {
	t.Helper()
	var rs []Record
	for n := from; n < to; n++ {
		rs = append(rs, logRecord(n, at))
	}
	if err := s.Append(logCtx, rs); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

func countHeld(t *testing.T, s Store) int {
	t.Helper()
	n := 0
	var after int64
	for {
		rs, more, err := s.Page(logCtx, logRef, after, MaxPage)
		if err != nil {
			t.Fatalf("Page: %v", err)
		}
		n += len(rs)
		if !more {
			return n
		}
		after = rs[len(rs)-1].Seq
	}
}

// TestFileStoreAppendDoesNotWaitForTheDisk holds the writer back, as a
// disk that takes its time to flush does: Append goes on returning at
// once, and Page returns what was already on disk.
func TestFileStoreAppendDoesNotWaitForTheDisk(t *testing.T) {
	s := openTestStore(t, t.TempDir(), Options{}, atomicfile.OS{}, boundsInterval)
	appendRecords(t, s, 0, 10, time.Now())
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}

	s.wmu.Lock() // the writer is in the middle of a flush
	start := time.Now()
	for i := range 1000 {
		appendRecords(t, s, 10+i, 11+i, time.Now())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("1000 appends took %v while the writer was held", d)
	}
	rs, _, _, err := s.page(logRef, 0, 10, false)
	if err != nil || len(rs) != 10 {
		t.Errorf("Page of the flushed records while the writer was held: %d, %v; want 10", len(rs), err)
	}
	s.wmu.Unlock()
	if n := countHeld(t, s); n != 1010 {
		t.Errorf("%d records held once the writer went on, want 1010", n)
	}
}

// TestFileStoreBacklog holds the writer back until the backlog passes its
// bound: Append fails with ErrBacklog and stores nothing of its batch,
// and goes on once the writer has caught up.
func TestFileStoreBacklog(t *testing.T) {
	s := openTestStore(t, t.TempDir(), Options{}, atomicfile.OS{}, boundsInterval)
	s.maxBacklog = 1 << 20
	big := strings.Repeat("x", 10<<10)
	batch := func(n int) []Record {
		rs := make([]Record, 10)
		for i := range rs {
			rs[i] = Record{Endpoint: logRef, At: time.Now(), Row: json.RawMessage(fmt.Sprintf(`{"n":%d,"pad":%q}`, n*10+i, big))}
		}
		return rs
	}
	s.wmu.Lock()
	stored := 0
	var err error
	for ; stored < 100; stored++ {
		if err = s.Append(logCtx, batch(stored)); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrBacklog) {
		s.wmu.Unlock()
		t.Fatalf("after %d batches of 100 KiB with the writer held: %v, want ErrBacklog", stored, err)
	}
	if int64(stored)*(100<<10) > s.maxBacklog+100<<10 {
		t.Errorf("%d batches of 100 KiB taken before ErrBacklog, more than the bound of %d", stored, s.maxBacklog)
	}
	s.wmu.Unlock()
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(logCtx, batch(stored)); err != nil {
		t.Fatalf("Append once the writer caught up: %v", err)
	}
	if n := countHeld(t, s); n != (stored+1)*10 {
		t.Errorf("%d records held, want the %d of the batches taken", n, (stored+1)*10)
	}
}

// faultFS is the real file system with the next operation of a kind made
// to fail: "create" (a file), "write" or "sync".
type faultFS struct {
	atomicfile.OS
	mu    sync.Mutex
	armed string
}

func (f *faultFS) arm(op string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = op
}

// hit reports whether op is to fail, disarming it.
func (f *faultFS) hit(op string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed != op {
		return false
	}
	f.armed = ""
	return true
}

func (f *faultFS) OpenFile(name string, flag int, perm os.FileMode) (segmentFile, error) {
	if flag&os.O_CREATE != 0 && f.hit("create") {
		return nil, errFault
	}
	file, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

type faultFile struct {
	*os.File
	fs *faultFS
}

func (f *faultFile) Write(b []byte) (int, error) {
	if f.fs.hit("write") {
		n, _ := f.File.Write(b[:len(b)/2])
		return n, errFault
	}
	return f.File.Write(b)
}

func (f *faultFile) Sync() error {
	if f.fs.hit("sync") {
		return errFault
	}
	return f.File.Sync()
}

// TestFileStoreFailures makes a write, a flush or the creation of a file
// fail: the store is failed, every later call says so, and opening the
// directory again recovers every record flushed before the failure.
func TestFileStoreFailures(t *testing.T) {
	for _, op := range []string{"write", "sync", "create"} {
		t.Run(op, func(t *testing.T) {
			dir := t.TempDir()
			fsys := &faultFS{}
			// Files of one record, so that each Flush creates one.
			opts := Options{MaxBytes: 8 * 100, Now: func() time.Time { return logEpoch }}
			s, err := openFileStore(dir, opts, fsys, boundsInterval)
			if err != nil {
				t.Fatal(err)
			}
			appendRecords(t, s, 0, 1, logEpoch)
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			appendRecords(t, s, 1, 2, logEpoch)
			fsys.arm(op)
			if err := s.Flush(); !errors.Is(err, errFault) {
				t.Fatalf("Flush with a failing %s: %v, want the fault", op, err)
			}
			if err := s.Append(logCtx, []Record{logRecord(2, logEpoch)}); !errors.Is(err, errFault) {
				t.Errorf("Append after the failure: %v, want the fault", err)
			}
			if _, _, err := s.Page(logCtx, logRef, 0, 10); !errors.Is(err, errFault) {
				t.Errorf("Page after the failure: %v, want the fault", err)
			}
			if err := s.Close(); !errors.Is(err, errFault) {
				t.Errorf("Close after the failure: %v, want the fault", err)
			}
			re := openTestStore(t, dir, opts, atomicfile.OS{}, boundsInterval)
			if n := countHeld(t, re); n < 1 || n > 2 {
				t.Errorf("%d records after reopening, want the flushed one, and the other if it reached the disk", n)
			}
			appendRecords(t, re, 3, 4, logEpoch)
			if err := re.Flush(); err != nil {
				t.Errorf("Flush after reopening: %v", err)
			}
		})
	}
}

// countingFS is the real file system, counting what is read from its
// files.
type countingFS struct {
	atomicfile.OS
	mu           sync.Mutex
	reads, bytes int
}

func (c *countingFS) OpenFile(name string, flag int, perm os.FileMode) (segmentFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, fs: c}, nil
}

func (c *countingFS) reset() (reads, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	reads, bytes = c.reads, c.bytes
	c.reads, c.bytes = 0, 0
	return reads, bytes
}

type countingFile struct {
	*os.File
	fs *countingFS
}

func (f *countingFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(b, off)
	f.fs.mu.Lock()
	f.fs.reads++
	f.fs.bytes += n
	f.fs.mu.Unlock()
	return n, err
}

// TestFileStorePageReadsOnlyItsLines pages from the middle of a log of
// many files: the store reads the page's lines, in one read when they are
// adjacent, and nothing else.
func TestFileStorePageReadsOnlyItsLines(t *testing.T) {
	dir := t.TempDir()
	opts := Options{MaxBytes: 2 << 20, Now: func() time.Time { return logEpoch }}
	other := process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "test"}
	s := openTestStore(t, dir, opts, atomicfile.OS{}, boundsInterval)
	for i := range 10 {
		appendRecords(t, s, i*1000, (i+1)*1000, logEpoch)
		if err := s.Append(logCtx, []Record{{Endpoint: other, At: logEpoch, Row: json.RawMessage(`{"other":true}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fsys := &countingFS{}
	s = openTestStore(t, dir, opts, fsys, boundsInterval)
	if files, _ := filepath.Glob(filepath.Join(dir, "payloads-*.jsonl")); len(files) < 4 {
		t.Fatalf("%d files, want several", len(files))
	}
	fsys.reset() // what the open read
	rs, more, err := s.Page(logCtx, logRef, 6789, 50)
	if err != nil || len(rs) != 50 || !more || rs[0].Seq != 6790 {
		t.Fatalf("Page: %d records from seq %v, more %v, %v", len(rs), rs, more, err)
	}
	var lines int
	for _, r := range rs {
		l, err := Prepare([]Record{r}, opts)
		if err != nil {
			t.Fatal(err)
		}
		lines += int(l[0].Size(r.Seq))
	}
	// The page's 50 are adjacent, in one file or across the end of one.
	reads, bytes := fsys.reset()
	if bytes != lines || reads > 2 {
		t.Errorf("Page of 50 records read %d bytes in %d reads, want their %d bytes in one or two", bytes, reads, lines)
	}
}

// TestFileStoreAppliesBoundsWhenIdle moves the clock past the retention of
// every record of a store nobody appends to: the writer deletes their
// files by itself.
func TestFileStoreAppliesBoundsWhenIdle(t *testing.T) {
	dir := t.TempDir()
	clock := testutil.NewClock(logEpoch)
	opts := Options{Retention: 8 * time.Hour, Now: clock.Now}
	s := openTestStore(t, dir, opts, atomicfile.OS{}, 10*time.Millisecond)
	for i := range 30 {
		appendRecords(t, s, i, i+1, clock.Now())
		clock.Advance(20 * time.Minute)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	files := func() []string {
		paths, err := filepath.Glob(filepath.Join(dir, "payloads-*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return paths
	}
	if n := len(files()); n < 5 {
		t.Fatalf("%d files, want the records spread over more", n)
	}
	clock.Advance(9 * time.Hour)
	testutil.Eventually(t, 5*time.Second, "the files past the retention deleted", func() bool {
		fs := files()
		return len(fs) == 1 && filepath.Base(fs[0]) == fileName(31)
	})
}
