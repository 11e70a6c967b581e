package payloads

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scorehub/scorehub/internal/atomicfile"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

const (
	// syncInterval is how long an appended record may wait in memory
	// before the writer writes and flushes it to stable storage; with
	// the time the flush takes, it stays within the second FileStore
	// promises.
	syncInterval = 500 * time.Millisecond
	// hurryBytes is the backlog past which the writer starts at once.
	hurryBytes = 1 << 20
	// backlogBytes bounds the backlog: the bytes appended and not yet
	// written. Past it Append fails with ErrBacklog rather than wait.
	backlogBytes = 16 << 20
	// filesPerBound is how many files the bounds span: a file is closed
	// at MaxBytes/8 bytes or once its first record is Retention/8 old,
	// so that space is reclaimed in steps of an eighth of the bounds.
	filesPerBound = 8
	// boundsInterval is how often the writer applies the bounds to a
	// store that is not appended to.
	boundsInterval = time.Minute
)

// Names in a FileStore's directory, which may be shared with other stores
// of the data directory: every name starts with "payloads".
const (
	lockFileName = "payloads.lock"
	filePrefix   = "payloads-"
	fileSuffix   = ".jsonl"
)

// FileStore is a durable [Store], the embedded default: rotating JSON
// Lines files in a directory of its own, or in the data directory beside
// other stores (its files are named payloads.lock and
// payloads-<seq of the first record, 16 hex digits>.jsonl, so that their
// order is their names').
//
// # Format
//
// A file holds one record a line, its JSON ([Record], seq first) and a
// newline; its records' seqs follow each other without gaps from the one
// it is named by, and each file's first follows the last of the one
// before. A file can be read, exported or searched with any JSON Lines
// tool (jq, grep).
//
// # Durability
//
// Append never waits for the disk: it adds the lines to a buffer in
// memory and returns. A writer goroutine writes the buffer and flushes it
// to stable storage (fsync) within a second of an Append, at once when
// more than a MiB waits; [FileStore.Flush] and Close do it when called.
// A crash may lose what was appended in the last second, and nothing
// that a Flush reported written. If the disk falls so far behind that
// 16 MiB wait, Append fails with [ErrBacklog] instead of growing the
// buffer.
//
// A file is flushed before the next is created, and the directory after
// a file is created, so a crash can leave only the end of the newest file
// damaged. Opening the store reads every file and rebuilds the index:
// it truncates the newest file at its first line that is not a whole,
// valid record (cut short, garbage, out of sequence), flushes it, and
// appends from there with the seq that follows the last whole record. A
// flush that completed covered every line written before it, so no flush
// had covered what is truncated. Damage anywhere else, or a file missing
// between two others, is an error naming the file: the store does not
// silently drop what it had flushed.
//
// Page returns only records on stable storage: a Page that reaches
// records still in the buffer first flushes it. A seq a Page returned is
// so never reused, even after a crash.
//
// # Bounds
//
// A new file is started once the newest holds MaxBytes/8 bytes or its
// first record is Retention/8 old (by its At and the store's clock). The
// oldest file is deleted, whole, while the files hold more than MaxBytes
// together or its newest record is older than Retention: the log holds at
// most MaxBytes, and at least MaxBytes less the file deleted last once it
// has filled. The bounds are applied on every Append and, for a store
// nobody appends to, once a minute; the files they drop are deleted by
// the writer's next pass, after the buffer is on stable storage, within a
// second. A record older than the retention in a file not yet due is
// held, never returned.
//
// # Memory
//
// The store keeps in memory an index of what the files hold, not the
// records: per record its seq, time and place in its file, 32 bytes (up
// to twice that with the slack of growing slices); a full log of 256 MiB
// of 500-byte records takes some 20 MiB. Page reads the lines of its page
// from the files, those adjacent in one read.
//
// # Failures
//
// A write, flush or delete that fails leaves the store failed: every
// later call returns the error, and the next open recovers what reached
// the disk.
//
// One FileStore at a time may have a directory open: another
// [OpenFileStore] of it, in any process, fails with [registry.ErrLocked]
// until this one is closed or its process exits. A FileStore is safe for
// concurrent use.
type FileStore struct {
	dir       string
	opts      Options
	fs        fileSystem
	lock      io.Closer
	fileBytes int64 // the size at which a file is closed: MaxBytes/8
	// boundsEvery is how often the writer applies the bounds, and
	// maxBacklog the bound of the backlog; tests shorten them.
	boundsEvery time.Duration
	maxBacklog  int64

	// The locks are taken in this order. wmu serialises the writer's
	// passes (the background writer's, Flush's and Close's): it is held
	// while files are written, flushed and created; Append never takes
	// it, Page only through Flush. fmu is held for reading by Page while
	// it reads files, and for writing by whoever closes them. mu guards
	// the fields below it and is never held across I/O.
	wmu sync.Mutex
	fmu sync.RWMutex
	mu  sync.Mutex

	idx    *index[place]
	segs   []*segment // the live files, oldest first; records go to the last
	doomed []*segment // files the bounds dropped, oldest first, for the writer to delete
	total  int64      // the bytes of segs, buffered ones included
	// backlog is the bytes appended and not yet written.
	backlog int64
	next    int64 // the seq of the next record
	durable int64 // every record up to this seq is on stable storage
	closed  bool  // Close has been called
	// released is set once Close has closed the files.
	released bool
	failed   error

	kick  chan struct{} // a record waits
	hurry chan struct{} // more than hurryBytes wait
	stop  chan struct{} // closed by Close
	done  chan struct{} // closed when the writer goroutine has stopped
}

var _ Store = (*FileStore)(nil)

// segment is one file of the log.
type segment struct {
	first int64 // the seq of its first record, which names it
	path  string
	// f is nil until the writer creates the file. It is set under mu
	// and by the writer only.
	f       segmentFile
	size    int64  // its bytes, those buffered included
	pending []byte // appended lines not yet handed to the writer
	// inflight is what the writer is writing, without mu.
	inflight []byte
	records  int
	firstAt  int64 // the At of its first record and its newest, in Unix nanoseconds
	newestAt int64
}

func (seg *segment) note(at int64) {
	if seg.records == 0 {
		seg.firstAt, seg.newestAt = at, at
	}
	seg.newestAt = max(seg.newestAt, at)
	seg.records++
}

// place is where a record's line is in its file.
type place struct {
	off, n int64
}

// segmentFile and fileSystem are the store's files and where they are;
// tests substitute a fileSystem whose operations fail or count.
type (
	segmentFile = atomicfile.LogFile
	fileSystem  = atomicfile.LogFS
)

// OpenFileStore opens the log kept in dir, bounded by opts, creating dir
// (mode 0700) and the log when they do not exist. The bounds are applied
// at once: opening the log with smaller bounds than it was written with
// drops its oldest files.
func OpenFileStore(dir string, opts Options) (*FileStore, error) {
	return openFileStore(dir, opts, atomicfile.OS{}, boundsInterval)
}

func openFileStore(dir string, opts Options, fsys fileSystem, boundsEvery time.Duration) (*FileStore, error) {
	if dir == "" {
		return nil, errors.New("payloads: OpenFileStore needs a directory")
	}
	opts = opts.WithDefaults()
	lock, err := atomicfile.LockDir(dir, lockFileName)
	if errors.Is(err, atomicfile.ErrLocked) {
		err = registry.ErrLocked
	}
	if err != nil {
		return nil, fmt.Errorf("payloads: open %s: %w", dir, err)
	}
	s := &FileStore{
		dir: dir, opts: opts, fs: fsys, lock: lock,
		fileBytes:   max(1, opts.MaxBytes/filesPerBound),
		boundsEvery: boundsEvery,
		maxBacklog:  backlogBytes,
		idx:         newIndex[place](),
		kick:        make(chan struct{}, 1), hurry: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	err = s.load()
	if err == nil {
		// The first file of a new log, and the deletions of the bounds,
		// are on disk when the store opens.
		err = s.writeOut()
	}
	if err != nil {
		for _, seg := range slices.Concat(s.doomed, s.segs) {
			if seg.f != nil {
				seg.f.Close()
			}
		}
		lock.Close()
		return nil, err
	}
	go s.run()
	return s, nil
}

// load rebuilds the index from the files in the directory, repairs the end
// of the newest and applies the bounds.
func (s *FileStore) load() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("payloads: read %s: %w", s.dir, err)
	}
	var firsts []int64
	for _, e := range entries {
		if first, ok := parseFileName(e.Name()); ok && e.Type().IsRegular() {
			firsts = append(firsts, first)
		}
	}
	slices.Sort(firsts)
	s.next = 1
	for i, first := range firsts {
		if i > 0 && first != s.next {
			return fmt.Errorf("payloads: %s follows a file that ends before record %d: records are missing from the log", fileName(first), s.next)
		}
		s.next = first
		if err := s.loadFile(first, i == len(firsts)-1); err != nil {
			return err
		}
	}
	if len(s.segs) == 0 {
		s.segs = append(s.segs, s.newSegment())
	}
	s.durable = s.next - 1
	s.applyBounds(s.opts.Now())
	return nil
}

// loadFile reads the file whose first record is first into the index. The
// newest file is the one a crash may have left damaged at its end: it is
// truncated after its last whole record.
func (s *FileStore) loadFile(first int64, newest bool) error {
	path := filepath.Join(s.dir, fileName(first))
	f, err := s.fs.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("payloads: open %s: %w", path, err)
	}
	seg := &segment{first: first, path: path, f: f}
	s.segs = append(s.segs, seg)
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("payloads: %w", err)
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, 0, fi.Size()), 64<<10)
	var off int64
	var bad error
	var scratch []byte
	for {
		var line []byte
		line, scratch, err = readLine(br, scratch)
		if errors.Is(err, io.EOF) && len(line) == 0 {
			break
		}
		if errors.Is(err, io.EOF) {
			bad = errors.New("its last line is cut short")
			break
		}
		if errors.Is(err, errLongLine) {
			bad = err
			break
		}
		if err != nil {
			return fmt.Errorf("payloads: read %s: %w", path, err)
		}
		r, err := decodeLine(line, s.next)
		if err != nil {
			bad = err
			break
		}
		n := int64(len(line))
		s.idx.add(r.Endpoint, r.Seq, r.At, place{off: off, n: n})
		seg.note(nanos(r.At))
		s.next++
		off += n
	}
	seg.size = off
	s.total += off
	if bad == nil {
		return nil
	}
	if !newest {
		return fmt.Errorf("payloads: %s is damaged at byte %d: %v", path, off, bad)
	}
	// What a crash left of the lines being written when it struck.
	if err := f.Truncate(off); err != nil {
		return fmt.Errorf("payloads: repair the end of %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("payloads: repair the end of %s: %w", path, err)
	}
	return nil
}

// readLine reads a line and its newline from br, growing scratch for a
// line longer than br's buffer, and returns it and scratch. It returns
// io.EOF with what was left when the input ends without a newline, and
// stops with an error at a line longer than any record.
func readLine(br *bufio.Reader, scratch []byte) ([]byte, []byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, scratch, err
	}
	scratch = append(scratch[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(scratch) > MaxRecordBytes {
			return nil, scratch, errLongLine
		}
		line, err = br.ReadSlice('\n')
		scratch = append(scratch, line...)
	}
	return scratch, scratch, err
}

var errLongLine = errors.New("a line longer than any record")

// decodeLine decodes the line of record seq, checking that it is one.
func decodeLine(line []byte, seq int64) (Record, error) {
	var r Record
	if err := json.Unmarshal(line, &r); err != nil {
		return Record{}, fmt.Errorf("a line is not a record: %v", err)
	}
	switch {
	case r.Seq != seq:
		return Record{}, fmt.Errorf("record %d where %d was due", r.Seq, seq)
	case r.Endpoint.Group == "" || r.Endpoint.Path == "" || r.Endpoint.Alias == "":
		return Record{}, fmt.Errorf("record %d names no endpoint", seq)
	case len(r.Row) == 0 || r.Row[0] != '{':
		return Record{}, fmt.Errorf("record %d has no row", seq)
	}
	r.At = r.At.UTC()
	return r, nil
}

func fileName(first int64) string {
	return fmt.Sprintf("%s%016x%s", filePrefix, first, fileSuffix)
}

// parseFileName returns the seq of the first record of the file named
// name, and whether name is a file of the log's.
func parseFileName(name string) (int64, bool) {
	hex, ok := strings.CutPrefix(name, filePrefix)
	if !ok {
		return 0, false
	}
	hex, ok = strings.CutSuffix(hex, fileSuffix)
	if !ok || len(hex) != 16 {
		return 0, false
	}
	first, err := strconv.ParseInt(hex, 16, 64)
	return first, err == nil && first > 0
}

// newSegment returns the file that starts with the next record, which the
// writer creates.
func (s *FileStore) newSegment() *segment {
	return &segment{first: s.next, path: filepath.Join(s.dir, fileName(s.next))}
}

func (s *FileStore) active() *segment { return s.segs[len(s.segs)-1] }

// Append implements [Store]. It does not wait for the disk: its records
// are on stable storage within a second (see the type's documentation).
// It fails with [ErrBacklog] when the disk has fallen behind.
func (s *FileStore) Append(ctx context.Context, rs []Record) error {
	lines, err := Prepare(rs, s.opts)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case s.failed != nil:
		return s.failed
	}
	var size int64
	for i, l := range lines {
		size += l.Size(s.next + int64(i))
	}
	if s.backlog > 0 && s.backlog+size > s.maxBacklog {
		return fmt.Errorf("payloads: %d bytes wait to be written to %s, and the batch would pass %d: %w", s.backlog, s.dir, s.maxBacklog, ErrBacklog)
	}
	now := s.opts.Now()
	for _, l := range lines {
		seq, n := s.next, l.Size(s.next)
		s.rotateIfDue(now, n)
		seg := s.active()
		seg.pending = l.appendTo(seg.pending, seq)
		s.idx.add(l.Record.Endpoint, seq, l.Record.At, place{off: seg.size, n: n})
		seg.note(nanos(l.Record.At))
		seg.size += n
		s.total += n
		s.backlog += n
		s.next++
		s.applyBounds(now)
	}
	wake := s.kick
	if s.backlog >= hurryBytes {
		wake = s.hurry
	}
	if len(lines) > 0 {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// rotateIfDue starts a new file before a line of n bytes when the newest
// is full: it would pass fileBytes, or its first record is past its share
// of the retention.
func (s *FileStore) rotateIfDue(now time.Time, n int64) {
	seg := s.active()
	if seg.records == 0 {
		return
	}
	if seg.size+n > s.fileBytes || nanos(now)-seg.firstAt >= int64(s.opts.Retention/filesPerBound) {
		s.segs = append(s.segs, s.newSegment())
	}
}

// applyBounds drops the oldest files while the files hold more than
// MaxBytes or the oldest's newest record is older than the retention at
// now. A newest file past the retention is followed by an empty one
// first, which keeps the next seq's name.
func (s *FileStore) applyBounds(now time.Time) {
	cutoff := nanos(now.Add(-s.opts.Retention))
	for {
		old := s.segs[0]
		expired := old.records > 0 && old.newestAt < cutoff
		if !expired && s.total <= s.opts.MaxBytes {
			return
		}
		if len(s.segs) == 1 {
			if !expired {
				return // no file is larger than MaxBytes: it holds one record, or an eighth
			}
			s.segs = append(s.segs, s.newSegment())
		}
		s.idx.dropBefore(s.segs[1].first)
		s.total -= old.size
		s.segs[0] = nil
		s.segs = s.segs[1:]
		s.doomed = append(s.doomed, old)
	}
}

// Page implements [Store]. It reads the lines of the page from the files,
// and first flushes the buffer when the page reaches records in it.
func (s *FileStore) Page(ctx context.Context, endpoint process.EndpointRef, after int64, limit int) ([]Record, bool, error) {
	if err := CheckLimit(limit); err != nil {
		return nil, false, err
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	recs, more, buffered, err := s.page(endpoint, after, limit, false)
	if err != nil || !buffered {
		return recs, more, err
	}
	if err := s.Flush(); err != nil {
		return nil, false, err
	}
	recs, more, _, err = s.page(endpoint, after, limit, true)
	return recs, more, err
}

// page reads a page of records on stable storage. When the page reaches
// records appended since the last flush, it returns buffered true and
// nothing else, unless partial is set: then it returns the page up to
// them, with more true.
func (s *FileStore) page(endpoint process.EndpointRef, after int64, limit int, partial bool) ([]Record, bool, bool, error) {
	// fmu keeps the files open while they are read, after mu is
	// released.
	s.fmu.RLock()
	defer s.fmu.RUnlock()
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return nil, false, false, ErrClosed
	case s.failed != nil:
		s.mu.Unlock()
		return nil, false, false, s.failed
	}
	es, more := s.idx.page(endpoint, after, limit, nanos(s.opts.Now().Add(-s.opts.Retention)))
	if i := slices.IndexFunc(es, func(e entry[place]) bool { return e.seq > s.durable }); i >= 0 {
		if !partial {
			s.mu.Unlock()
			return nil, false, true, nil
		}
		es, more = es[:i], true
	}
	// Runs of adjacent lines of a file are read at once.
	type run struct {
		seg     *segment
		f       segmentFile
		off, n  int64
		entries []entry[place]
	}
	var runs []run
	for _, e := range es {
		seg := s.segmentOf(e.seq)
		if k := len(runs) - 1; k >= 0 && runs[k].seg == seg && runs[k].off+runs[k].n == e.body.off {
			runs[k].n += e.body.n
			runs[k].entries = append(runs[k].entries, e)
			continue
		}
		runs = append(runs, run{seg: seg, f: seg.f, off: e.body.off, n: e.body.n, entries: []entry[place]{e}})
	}
	s.mu.Unlock()

	out := make([]Record, 0, len(es))
	for _, r := range runs {
		b := make([]byte, r.n)
		if _, err := r.f.ReadAt(b, r.off); err != nil {
			return nil, false, false, fmt.Errorf("payloads: read %s: %w", r.seg.path, err)
		}
		off := r.off
		for _, e := range r.entries {
			line := b[:e.body.n]
			b = b[e.body.n:]
			rec, err := decodeLine(line, e.seq)
			if err == nil && !bytes.HasSuffix(line, []byte("\n")) {
				err = errors.New("the line does not end where the index says")
			}
			if err != nil {
				return nil, false, false, fmt.Errorf("payloads: read the line at byte %d of %s: %w", off, r.seg.path, err)
			}
			out = append(out, rec)
			off += e.body.n
		}
	}
	return out, more, false, nil
}

// segmentOf returns the live file that holds record seq.
func (s *FileStore) segmentOf(seq int64) *segment {
	i := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].first > seq })
	return s.segs[i-1]
}

// Flush writes what Append buffered and flushes it to stable storage, and
// deletes the files the bounds dropped; when it returns nil, every record
// appended before it was called survives a crash. Tests and a service
// shutting down call it; the store does it by itself within a second.
func (s *FileStore) Flush() error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.writeOut()
}

// Close implements [Store]: it writes and flushes what Append buffered,
// closes the files and releases the directory. It returns the failure of
// a store that failed, so that a write that failed in the background is
// not lost. Later calls fail with [ErrClosed]; closing a closed store
// does nothing.
func (s *FileStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	<-s.done

	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.writeOut()
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.released = true
	for _, seg := range slices.Concat(s.doomed, s.segs) {
		if seg.f == nil {
			continue
		}
		if cerr := seg.f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("payloads: close %s: %w", seg.path, cerr)
		}
	}
	if lerr := s.lock.Close(); lerr != nil && err == nil {
		err = fmt.Errorf("payloads: release %s: %w", s.dir, lerr)
	}
	s.idx, s.segs, s.doomed = nil, nil, nil
	return err
}

// fail leaves s failed by err, and returns the error every later call
// returns. The caller holds mu.
func (s *FileStore) fail(err error) error {
	if s.failed == nil {
		s.failed = fmt.Errorf("payloads: the log in %s failed, and takes no more calls until it is opened again: %w", s.dir, err)
	}
	return s.failed
}

// writeOut writes the buffered lines of every file, creating the files
// that do not exist yet, in order, flushing each to stable storage before
// the next is created; then it deletes the files the bounds dropped. The
// caller holds wmu; mu is taken only to hand over the buffers and to
// record what was written.
func (s *FileStore) writeOut() error {
	s.mu.Lock()
	switch {
	case s.released:
		s.mu.Unlock()
		return ErrClosed
	case s.failed != nil:
		s.mu.Unlock()
		return s.failed
	}
	// The dropped files are written too, so that the files on disk
	// always follow each other; they are deleted right after.
	var work []*segment
	for _, list := range [][]*segment{s.doomed, s.segs} {
		for _, seg := range list {
			if seg.f == nil || len(seg.pending) > 0 {
				seg.inflight, seg.pending = seg.pending, nil
				work = append(work, seg)
			}
		}
	}
	doomed := slices.Clone(s.doomed)
	upTo := s.next - 1
	s.mu.Unlock()

	for _, seg := range work {
		if err := s.writeSegment(seg); err != nil {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.fail(err)
		}
	}
	s.mu.Lock()
	s.durable = upTo
	s.mu.Unlock()
	if len(doomed) == 0 {
		return nil
	}
	if err := s.remove(doomed); err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.fail(err)
	}
	return nil
}

// writeSegment creates seg's file if it does not exist, writes its
// inflight lines and flushes them.
func (s *FileStore) writeSegment(seg *segment) error {
	if seg.f == nil {
		f, err := s.fs.OpenFile(seg.path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("create %s: %w", seg.path, err)
		}
		s.mu.Lock()
		seg.f = f
		s.mu.Unlock()
		if err := s.fs.SyncDir(s.dir); err != nil {
			return fmt.Errorf("sync %s: %w", s.dir, err)
		}
	}
	data := seg.inflight
	if len(data) > 0 {
		if _, err := seg.f.Write(data); err != nil {
			return fmt.Errorf("write %s: %w", seg.path, err)
		}
		if err := seg.f.Sync(); err != nil {
			return fmt.Errorf("flush %s: %w", seg.path, err)
		}
	}
	s.mu.Lock()
	seg.inflight = nil
	s.backlog -= int64(len(data))
	s.mu.Unlock()
	return nil
}

// remove closes and deletes the dropped files doomed, the first of
// s.doomed, flushing the directory after each: a file deleted that comes
// back after a power loss is the oldest, and the bounds drop it again.
func (s *FileStore) remove(doomed []*segment) error {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	for _, seg := range doomed {
		if err := seg.f.Close(); err != nil {
			return fmt.Errorf("close %s: %w", seg.path, err)
		}
		if err := s.fs.Remove(seg.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete %s: %w", seg.path, err)
		}
		if err := s.fs.SyncDir(s.dir); err != nil {
			return fmt.Errorf("sync %s: %w", s.dir, err)
		}
		s.mu.Lock()
		seg.f = nil
		s.doomed[0] = nil
		s.doomed = s.doomed[1:]
		s.mu.Unlock()
	}
	return nil
}

// run is the writer: it writes and flushes what Append buffered,
// syncInterval after the first Append since it last did or at once past
// hurryBytes, and applies the bounds every boundsEvery, until Close.
func (s *FileStore) run() {
	defer close(s.done)
	bounds := time.NewTicker(s.boundsEvery)
	defer bounds.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.hurry:
		case <-s.kick:
			t := time.NewTimer(syncInterval)
			select {
			case <-s.stop:
				t.Stop()
				return
			case <-s.hurry:
				t.Stop()
			case <-t.C:
			}
		case <-bounds.C:
			s.mu.Lock()
			if !s.closed && s.failed == nil {
				s.applyBounds(s.opts.Now())
			}
			s.mu.Unlock()
		}
		s.wmu.Lock()
		s.writeOut() // a failure is the store's, returned by every later call
		s.wmu.Unlock()
	}
}
