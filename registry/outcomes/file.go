package outcomes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/scorehub/scorehub/internal/atomicfile"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

const (
	// syncInterval is how long an appended record may wait in memory or
	// in the operating system's cache before the store writes and
	// flushes it to stable storage; with the time the flush takes, it
	// stays within the second FileStore promises.
	syncInterval = 500 * time.Millisecond
	// flushBytes is how much the store buffers before it writes to its
	// segment file.
	flushBytes = 256 << 10
	// segmentBytes is the size past which a new segment is started.
	segmentBytes = 64 << 20
	// segmentsPerBound is how many segments the prediction bound spans,
	// and the retention too: a segment is closed after MaxRecords/8
	// predictions or once its first is Retention/8 old, so that space is
	// reclaimed in steps of an eighth of the bounds.
	segmentsPerBound = 8
)

// FileStore is a durable [Store], the embedded default: a capped
// append-only log in a directory of its own, or in the data directory
// beside other stores (its files are named outcomes.lock and
// outcomes-<first record, hex>.log).
//
// # Format
//
// The log is a sequence of segment files, each the header "scorehub
// outcomes log 1\n" followed by records. A record is framed as the length
// of its payload and the payload's CRC-32C (both little-endian uint32),
// then the payload: a kind byte and the record's JSON. A prediction is
// one record; so are all the outcomes one Feedback call recorded (a
// batch is one record, so that a crash leaves all of it or none).
// Records are numbered in order across the log, and a segment is named
// by the number of its first record, so that a segment missing between
// two others is seen.
//
// # Durability
//
// Feedback writes its record and flushes the segment to stable storage
// (fsync) before it returns: an outcome it reported is on disk, with
// every prediction it matched, which precede it in the log. Append
// buffers: its records are written and flushed within a second, when a
// segment is closed, when a Feedback flushes, and on Close. A crash may
// lose the predictions of the last second, never an outcome.
//
// Opening the store reads every segment and rebuilds the index in
// memory. A crash can leave only the end of the last segment damaged,
// because a segment is flushed before the next is created (and a new
// segment's header before any record is written after it): opening
// truncates the last segment at its first record that is not whole and
// valid (cut short, garbage, a checksum that does not match), flushes
// it, and appends from there. A flush that completed covered every
// record written before it, so no flush had covered the first invalid
// record or any after it: what is truncated was never acknowledged by a
// Feedback. A damaged record anywhere else, or a segment missing between
// two others, is an error naming the file: the store does not silently
// drop what it had flushed.
//
// # Bounds
//
// The bounds are applied on every call, to the predictions in the order
// they were appended: the earliest leave first once more than MaxRecords
// are held, or once their At is older than Retention (a prediction
// appended after a younger one waits for it). A new segment is started
// every MaxRecords/8 predictions, at 64 MiB, or once its first prediction
// is Retention/8 old, and the oldest segment is deleted, whole, once none
// of its predictions is held: space is reclaimed without rewriting the
// log. The outcomes in it of rows the store still holds (a row whose
// later predictions are in later segments) are first written again at
// the end of the log. The log so holds at most about MaxRecords·9/8
// predictions, and the outcomes of their rows.
//
// # Memory
//
// The store keeps in memory an index of what it holds, not the
// predictions themselves: per prediction about 200 bytes and its row ID
// (its model, time, sequence number and place in the log, its row, and
// its slot in the queue of the bounds), per outcome about 90 bytes and
// its label; at the default MaxRecords, some 300 MiB when full. Joined
// reads the predictions it returns from the log.
//
// # Failures
//
// A write or flush that fails leaves the store failed: every later call
// returns the error, and the next open recovers what reached the disk.
// A Feedback that failed changed nothing the store serves; its batch may
// be found recorded, whole, after the store is opened again, as a write
// whose flush failed may yet have reached the disk.
//
// One FileStore at a time may have a directory open: another
// [OpenFileStore] of it, in any process, fails with [registry.ErrLocked]
// until this one is closed or its process exits. A FileStore is safe for
// concurrent use; its calls are serialised, and Feedback holds the others
// back while it flushes.
type FileStore struct {
	dir  string
	now  func() time.Time
	opts Options
	fs   fileSystem
	lock io.Closer
	// segPreds is how many predictions a segment holds before a new one
	// is started.
	segPreds int

	mu   sync.Mutex
	idx  *index[place]
	segs []*segment // oldest first; records are appended to the last
	buf  []byte     // records not yet written to the last segment
	// written counts the writes to the last segments, synced how many of
	// them are known to be on stable storage. The flusher flushes
	// without the lock, so a write counts as synced only once a flush
	// begun after it has returned.
	written, synced uint64
	closed          bool
	failed          error

	kick chan struct{} // tells the flusher a record waits
	stop chan struct{} // closed by Close
	done chan struct{} // closed when the flusher has stopped
}

var _ Store = (*FileStore)(nil)

// segment is one file of the log.
type segment struct {
	first   uint64 // the sequence number of its first record
	path    string
	f       segmentFile
	size    int64 // bytes in the file, the store's buffer not counted
	records int
	preds   int
	firstAt int64 // the At of its first prediction, in Unix nanoseconds
}

func (seg *segment) notePrediction(at time.Time) {
	if seg.preds == 0 {
		seg.firstAt = nanos(at)
	}
	seg.preds++
}

// place is where a prediction's record is.
type place struct {
	seg *segment
	off int64
	n   uint32 // the payload's length
}

// segmentFile and fileSystem are the store's files and where they are;
// tests substitute a fileSystem whose operations fail or count.
type (
	segmentFile = atomicfile.LogFile
	fileSystem  = atomicfile.LogFS
)

// OpenFileStore opens the log kept in dir, bounded by opts, creating dir
// (mode 0700) and the log when they do not exist. The bounds are applied
// to what the log holds at once: opening it with smaller bounds than it
// was written with drops the oldest records.
func OpenFileStore(dir string, opts Options) (*FileStore, error) {
	return openFileStore(dir, opts, atomicfile.OS{})
}

func openFileStore(dir string, opts Options, fsys fileSystem) (*FileStore, error) {
	if dir == "" {
		return nil, errors.New("outcomes: OpenFileStore needs a directory")
	}
	opts = opts.WithDefaults()
	lock, err := atomicfile.LockDir(dir, lockFileName)
	if errors.Is(err, atomicfile.ErrLocked) {
		err = registry.ErrLocked
	}
	if err != nil {
		return nil, fmt.Errorf("outcomes: open %s: %w", dir, err)
	}
	s := &FileStore{
		dir: dir, now: opts.Now, opts: opts, fs: fsys, lock: lock,
		segPreds: max(1, (opts.MaxRecords+segmentsPerBound-1)/segmentsPerBound),
		idx:      newIndex[place](opts),
		kick:     make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	if err := s.load(); err != nil {
		for _, seg := range s.segs {
			seg.f.Close()
		}
		lock.Close()
		return nil, err
	}
	go s.flusher()
	return s, nil
}

// load rebuilds the index from the segments in the directory, repairs
// the end of the last and deletes those the bounds left nothing in.
func (s *FileStore) load() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("outcomes: read %s: %w", s.dir, err)
	}
	var firsts []uint64
	for _, e := range entries {
		if first, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			firsts = append(firsts, first)
		}
	}
	slices.Sort(firsts)
	for i, first := range firsts {
		if i > 0 && first != s.idx.seq {
			return fmt.Errorf("outcomes: %s follows a segment that ends before record %d: records are missing from the log", segmentName(first), s.idx.seq)
		}
		s.idx.seq = first
		if err := s.loadSegment(first, i == len(firsts)-1); err != nil {
			return err
		}
	}
	if len(s.segs) == 0 {
		seg, err := s.createSegment(0)
		if err != nil {
			return err
		}
		s.segs = append(s.segs, seg)
	}
	s.idx.endRebuild(s.now())
	return s.reclaim()
}

// loadSegment reads the segment whose first record is first into the
// index. The last segment is the one a crash may have left damaged at
// its end: it is truncated after its last valid record.
func (s *FileStore) loadSegment(first uint64, last bool) error {
	path := filepath.Join(s.dir, segmentName(first))
	f, err := s.fs.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("outcomes: open segment: %w", err)
	}
	seg := &segment{first: first, path: path, f: f}
	s.segs = append(s.segs, seg)
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("outcomes: %w", err)
	}
	size := fi.Size()
	hdr := make([]byte, min(size, int64(len(segmentMagic))))
	if _, err := f.ReadAt(hdr, 0); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("outcomes: read %s: %w", path, err)
	}
	if string(hdr) != segmentMagic {
		if !last || !tornHeader(hdr) {
			return fmt.Errorf("outcomes: %s is not a segment of this build's log format", path)
		}
		// Created by a writer that died before its header was on disk,
		// so before any record after it was.
		return s.truncate(seg, 0)
	}
	end, bad, err := scan(f, size, func(off int64, payload []byte) error { return s.replay(seg, off, payload) })
	if err != nil {
		return fmt.Errorf("outcomes: read %s: %w", path, err)
	}
	seg.size = end
	if bad == nil {
		return nil
	}
	if !last {
		return fmt.Errorf("outcomes: %s is damaged at byte %d: %v", path, end, bad)
	}
	return s.truncate(seg, end)
}

// tornHeader reports whether hdr, the start of a segment, is what a crash
// leaves of a header not yet on stable storage: part of it, or zeros.
func tornHeader(hdr []byte) bool {
	return strings.HasPrefix(segmentMagic, string(hdr)) || !slices.ContainsFunc(hdr, func(b byte) bool { return b != 0 })
}

// truncate cuts the last segment at end, where its last valid record
// ends, or rewrites its header when end is 0, and flushes it, so that
// what follows is appended to a log that holds nothing torn.
func (s *FileStore) truncate(seg *segment, end int64) error {
	err := seg.f.Truncate(end)
	if err == nil && end == 0 {
		_, err = seg.f.Write([]byte(segmentMagic))
		end = int64(len(segmentMagic))
	}
	if err == nil {
		err = seg.f.Sync()
	}
	if err != nil {
		return fmt.Errorf("outcomes: repair the end of %s: %w", seg.path, err)
	}
	seg.size = end
	return nil
}

// replay applies the record at off of seg to the index.
func (s *FileStore) replay(seg *segment, off int64, payload []byte) error {
	seq := s.idx.seq
	switch payload[0] {
	case kindPrediction, kindBirth:
		p, err := decodePrediction(payload)
		if err != nil {
			return fmt.Errorf("a prediction record does not decode: %w", err)
		}
		s.idx.add(&p, payload[0] == kindBirth, seq, place{seg: seg, off: off, n: uint32(len(payload))})
		seg.notePrediction(p.At)
	case kindFeedback:
		ref, outs, at, recorded, err := decodeFeedback(payload)
		if err != nil {
			return fmt.Errorf("a feedback record does not decode: %w", err)
		}
		if recorded == nil {
			recorded = &seq
		}
		s.idx.feedRebuilt(ref, outs, at, seq, *recorded)
	default:
		return fmt.Errorf("a record of unknown kind %q", payload[0])
	}
	seg.records++
	s.idx.seq++
	return nil
}

// createSegment creates the segment whose first record is first, its
// header and its directory entry on stable storage.
func (s *FileStore) createSegment(first uint64) (*segment, error) {
	path := filepath.Join(s.dir, segmentName(first))
	f, err := s.fs.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("outcomes: create segment: %w", err)
	}
	_, err = f.Write([]byte(segmentMagic))
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = s.fs.SyncDir(s.dir)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("outcomes: create %s: %w", path, err)
	}
	return &segment{first: first, path: path, f: f, size: int64(len(segmentMagic))}, nil
}

func (s *FileStore) active() *segment { return s.segs[len(s.segs)-1] }

// begin locks s for a call and applies the bounds at now, or fails when
// ctx is done or s is closed or failed.
func (s *FileStore) begin(ctx context.Context) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return time.Time{}, ErrClosed
	case s.failed != nil:
		s.mu.Unlock()
		return time.Time{}, s.failed
	}
	now := s.now()
	s.idx.prune(now)
	return now, nil
}

// fail leaves s failed by err, and returns the error every later call
// returns.
func (s *FileStore) fail(err error) error {
	if s.failed == nil {
		s.failed = fmt.Errorf("outcomes: the log in %s failed, and takes no more calls until it is opened again: %w", s.dir, err)
	}
	return s.failed
}

// Append implements [Store]. Its records are on stable storage within a
// second (see the type's documentation). A batch is refused as a whole,
// before anything is appended, when one of its predictions cannot be
// stored: a time outside the years 0 to 9999, or a record of more than
// 64 MiB.
func (s *FileStore) Append(ctx context.Context, ps []Prediction) error {
	payloads := make([][]byte, len(ps))
	for i := range ps {
		b, err := encodePrediction(&ps[i])
		if err == nil && len(b) > maxRecord {
			err = fmt.Errorf("its record would take %d bytes, more than %d", len(b), maxRecord)
		}
		if err != nil {
			return fmt.Errorf("outcomes: prediction of row %q: %w", ps[i].RowID, err)
		}
		payloads[i] = b
	}
	now, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.reclaim(); err != nil {
		return s.fail(err)
	}
	for i := range ps {
		p := &ps[i]
		ok, birth := s.idx.accepts(p)
		if !ok {
			continue
		}
		if birth {
			payloads[i][0] = kindBirth
		}
		if err := s.rotateIfDue(now, len(payloads[i])); err != nil {
			return s.fail(err)
		}
		pl := s.appendRecord(payloads[i])
		s.idx.add(p, birth, s.idx.seq, pl)
		s.idx.seq++
		pl.seg.notePrediction(p.At)
		if s.idx.prune(now) {
			if err := s.reclaim(); err != nil {
				return s.fail(err)
			}
		}
		if len(s.buf) >= flushBytes {
			if err := s.flush(); err != nil {
				return s.fail(err)
			}
		}
	}
	if len(s.buf) > 0 || s.synced != s.written {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// Feedback implements [Store]. The outcomes it records are one record,
// on stable storage when it returns. A batch fails as a whole, before it
// changes anything, when ctx is done, the store is closed or failed, or
// its record would take more than 64 MiB; a batch whose write or flush
// fails leaves the store failed (see the type's documentation).
func (s *FileStore) Feedback(ctx context.Context, endpoint process.EndpointRef, outs []Outcome, at time.Time) (Applied, error) {
	now, err := s.begin(ctx)
	if err != nil {
		return Applied{}, err
	}
	defer s.mu.Unlock()
	if err := s.reclaim(); err != nil {
		return Applied{}, s.fail(err)
	}
	a, matched := s.idx.plan(endpoint, outs)
	if len(matched) == 0 {
		return a, nil
	}
	payload, err := encodeFeedback(endpoint, matched, at, nil)
	if err == nil && len(payload) > maxRecord {
		err = fmt.Errorf("its record would take %d bytes, more than %d: send the outcomes in smaller batches", len(payload), maxRecord)
	}
	if err != nil {
		return Applied{}, fmt.Errorf("outcomes: feedback batch of %d outcomes: %w", len(outs), err)
	}
	if err := s.rotateIfDue(now, len(payload)); err != nil {
		return Applied{}, s.fail(err)
	}
	s.appendRecord(payload)
	if err := s.sync(); err != nil {
		return Applied{}, s.fail(err)
	}
	s.idx.feed(endpoint, matched, at, s.idx.seq)
	s.idx.seq++
	return a, nil
}

// Joined implements [Store]; it reads the predictions from the log.
func (s *FileStore) Joined(ctx context.Context, endpoint process.EndpointRef, since time.Time) ([]Joined, error) {
	if _, err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	feds := s.idx.joined(endpoint, since)
	if len(feds) == 0 {
		return nil, nil
	}
	// The buffer's records are read from the file like the others.
	if err := s.flush(); err != nil {
		return nil, s.fail(err)
	}
	var out []Joined
	for _, f := range feds {
		for _, e := range f.row.preds {
			p, err := s.read(e.body)
			if err != nil {
				return nil, err
			}
			out = append(out, Joined{Prediction: p, Actual: f.outcome(), FedAt: f.at})
		}
	}
	return out, nil
}

// read reads the prediction at pl.
func (s *FileStore) read(pl place) (Prediction, error) {
	payload, err := readRecord(pl.seg.f, pl.off, pl.n)
	if err == nil && payload[0] != kindPrediction && payload[0] != kindBirth {
		err = errors.New("the record is not a prediction")
	}
	var p Prediction
	if err == nil {
		p, err = decodePrediction(payload)
	}
	if err != nil {
		return Prediction{}, fmt.Errorf("outcomes: read the record at byte %d of %s: %w", pl.off, pl.seg.path, err)
	}
	return p, nil
}

// Pending implements [Store].
func (s *FileStore) Pending(ctx context.Context, endpoint process.EndpointRef) (int, error) {
	if _, err := s.begin(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	return s.idx.pendingRows(endpoint), nil
}

// Close implements [Store]: it writes and flushes what Append buffered,
// closes the files and releases the directory. It returns the failure of
// a store that failed, so that a flush that failed in the background is
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

	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.failed
	if err == nil {
		if err = s.sync(); err != nil {
			err = fmt.Errorf("outcomes: close %s: %w", s.dir, err)
		}
	}
	for _, seg := range s.segs {
		if cerr := seg.f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("outcomes: close %s: %w", seg.path, cerr)
		}
	}
	if lerr := s.lock.Close(); lerr != nil && err == nil {
		err = fmt.Errorf("outcomes: release %s: %w", s.dir, lerr)
	}
	s.segs, s.idx, s.buf = nil, nil, nil
	return err
}

// appendRecord frames payload into the buffer, as the next record of the
// last segment, and returns its place.
func (s *FileStore) appendRecord(payload []byte) place {
	seg := s.active()
	pl := place{seg: seg, off: seg.size + int64(len(s.buf)), n: uint32(len(payload))}
	s.buf = appendFrame(s.buf, payload)
	seg.records++
	return pl
}

// flush writes the buffer to the last segment.
func (s *FileStore) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	seg := s.active()
	n, err := seg.f.Write(s.buf)
	seg.size += int64(n)
	s.written++
	if err != nil {
		return fmt.Errorf("write %s: %w", seg.path, err)
	}
	if cap(s.buf) > 4*flushBytes {
		s.buf = nil // a large feedback record's buffer is not kept
	} else {
		s.buf = s.buf[:0]
	}
	return nil
}

// sync writes the buffer to the last segment and flushes the segment to
// stable storage.
func (s *FileStore) sync() error {
	if err := s.flush(); err != nil {
		return err
	}
	if s.synced == s.written {
		return nil
	}
	seg := s.active()
	if err := seg.f.Sync(); err != nil {
		return fmt.Errorf("flush %s: %w", seg.path, err)
	}
	s.synced = s.written
	return nil
}

// rotateIfDue starts a new segment before a record of n bytes when the
// last one is full: it holds its share of the predictions, would grow
// past segmentBytes, or its first prediction is past its share of the
// retention.
func (s *FileStore) rotateIfDue(now time.Time, n int) error {
	seg := s.active()
	if seg.records == 0 {
		return nil
	}
	full := seg.preds >= s.segPreds ||
		seg.size+int64(len(s.buf))+frameHeader+int64(n) > segmentBytes ||
		(seg.preds > 0 && nanos(now)-seg.firstAt >= int64(s.opts.Retention/segmentsPerBound))
	if !full {
		return nil
	}
	// The closed segment is on stable storage before the next exists:
	// only the last segment can be damaged by a crash.
	if err := s.sync(); err != nil {
		return err
	}
	next, err := s.createSegment(s.idx.seq)
	if err != nil {
		return err
	}
	s.segs = append(s.segs, next)
	return nil
}

// reclaim deletes the oldest segments while none of their predictions is
// held. The outcomes they hold of rows the index still holds are first
// written again at the end of the log, and flushed.
func (s *FileStore) reclaim() error {
	for len(s.segs) > 1 {
		old, next := s.segs[0], s.segs[1]
		if s.idx.headSeq() < next.first {
			return nil
		}
		if carried := s.idx.fedIn(old.first, next.first); len(carried) > 0 {
			if err := s.carry(carried); err != nil {
				return err
			}
			if err := s.sync(); err != nil {
				return err
			}
		}
		if err := old.f.Close(); err != nil {
			return fmt.Errorf("close %s: %w", old.path, err)
		}
		s.segs[0] = nil
		s.segs = s.segs[1:]
		if err := s.fs.Remove(old.path); err != nil {
			return fmt.Errorf("delete %s: %w", old.path, err)
		}
		// A deleted segment that comes back after a power loss only
		// holds what the bounds drop again at the next open.
		if err := s.fs.SyncDir(s.dir); err != nil {
			return fmt.Errorf("sync %s: %w", s.dir, err)
		}
	}
	return nil
}

// carry appends a record for the outcomes of each record in feds (in the
// order of their records), so that they outlive the segment that holds
// them.
func (s *FileStore) carry(feds []*heldOutcome[place]) error {
	for i := 0; i < len(feds); {
		j := i + 1
		for j < len(feds) && feds[j].seq == feds[i].seq {
			j++
		}
		outs := make([]Outcome, 0, j-i)
		for _, f := range feds[i:j] {
			outs = append(outs, f.outcome())
		}
		payload, err := encodeFeedback(feds[i].row.ep.ref, outs, feds[i].at, &feds[i].recorded)
		if err != nil {
			return fmt.Errorf("encode outcomes: %w", err)
		}
		s.appendRecord(payload)
		for _, f := range feds[i:j] {
			f.seq = s.idx.seq
		}
		s.idx.seq++
		i = j
	}
	return nil
}

// flusher writes and flushes what Append buffered, syncInterval after the
// first Append since its last flush, until Close.
func (s *FileStore) flusher() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
		}
		t := time.NewTimer(syncInterval)
		select {
		case <-s.stop:
			t.Stop()
			return
		case <-t.C:
		}
		s.syncAppends()
	}
}

// syncAppends writes the buffer and flushes the last segment. The flush
// runs without the lock, so that calls go on meanwhile: a segment closed
// or deleted meanwhile was flushed when it was closed.
func (s *FileStore) syncAppends() {
	s.mu.Lock()
	if s.closed || s.failed != nil {
		s.mu.Unlock()
		return
	}
	if err := s.flush(); err != nil {
		s.fail(err)
		s.mu.Unlock()
		return
	}
	if s.synced == s.written {
		s.mu.Unlock()
		return
	}
	seg, upTo := s.active(), s.written
	s.mu.Unlock()
	err := seg.f.Sync()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil && !errors.Is(err, os.ErrClosed):
		s.fail(fmt.Errorf("flush %s: %w", seg.path, err))
	case err == nil && upTo > s.synced:
		s.synced = upTo
	}
}
