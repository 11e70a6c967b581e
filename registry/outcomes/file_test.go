package outcomes_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/outcomes/outcomestest"
	"github.com/scorehub/scorehub/registry/process"
)

var (
	epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	churn = process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "live"}
	bg    = context.Background()
)

func prediction(id, model string, at time.Time) outcomes.Prediction {
	return outcomes.Prediction{Endpoint: churn, RowID: id, Model: model, Role: "champion", Label: "yes",
		Classes: []string{"no", "yes"}, Confidences: []float64{0.4, 0.6}, At: at}
}

func yes(id string) outcomes.Outcome { return outcomes.Outcome{RowID: id, IsLabel: true, Label: "yes"} }

// segments lists the log's segment files in dir, oldest first.
func segments(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "outcomes-*.log"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(paths)
	return paths
}

func size(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// reopening is a FileStore that is closed and opened again before every
// read, so that the conformance suite reads what a restarted process
// would.
type reopening struct {
	t    *testing.T
	dir  string
	opts outcomes.Options

	mu     sync.RWMutex
	s      *outcomes.FileStore
	closed bool
}

func (r *reopening) reopen() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if err := r.s.Close(); err != nil {
		r.t.Errorf("close before reopening: %v", err)
	}
	s, err := outcomes.OpenFileStore(r.dir, r.opts)
	if err != nil {
		r.t.Fatalf("reopen: %v", err)
	}
	r.s = s
}

func (r *reopening) store() (*outcomes.FileStore, func()) {
	r.mu.RLock()
	return r.s, r.mu.RUnlock
}

func (r *reopening) Append(ctx context.Context, ps []outcomes.Prediction) error {
	s, done := r.store()
	defer done()
	return s.Append(ctx, ps)
}

func (r *reopening) Feedback(ctx context.Context, ep process.EndpointRef, outs []outcomes.Outcome, at time.Time) (outcomes.Applied, error) {
	s, done := r.store()
	defer done()
	return s.Feedback(ctx, ep, outs, at)
}

func (r *reopening) Joined(ctx context.Context, ep process.EndpointRef, since time.Time) ([]outcomes.Joined, error) {
	r.reopen()
	s, done := r.store()
	defer done()
	return s.Joined(ctx, ep, since)
}

func (r *reopening) Pending(ctx context.Context, ep process.EndpointRef) (int, error) {
	r.reopen()
	s, done := r.store()
	defer done()
	return s.Pending(ctx, ep)
}

func (r *reopening) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return r.s.Close()
}

// TestFileStoreAcrossReopens runs the conformance suite on a file store
// that every read opens afresh from its directory.
func TestFileStoreAcrossReopens(t *testing.T) {
	outcomestest.Run(t, func(t *testing.T, opts outcomes.Options) outcomes.Store {
		dir := t.TempDir()
		s, err := outcomes.OpenFileStore(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		r := &reopening{t: t, dir: dir, opts: opts, s: s}
		t.Cleanup(func() { r.Close() })
		return r
	})
}

func TestFileStoreLocked(t *testing.T) {
	dir := t.TempDir()
	s := openFile(t, dir, outcomes.Options{})
	if _, err := outcomes.OpenFileStore(dir, outcomes.Options{}); !errors.Is(err, registry.ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if err := s.Append(bg, []outcomes.Prediction{prediction("a", "m", time.Now())}); err != nil {
		t.Fatalf("the first store stopped working: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	re := openFile(t, dir, outcomes.Options{})
	if n, err := re.Pending(bg, churn); err != nil || n != 1 {
		t.Errorf("after the first store closed: Pending = %d, %v; want its row", n, err)
	}
}

// TestFileStoreFlushesAppends checks that appended predictions reach the
// segment file without a Feedback or a Close.
func TestFileStoreFlushesAppends(t *testing.T) {
	dir := t.TempDir()
	s := openFile(t, dir, outcomes.Options{})
	seg := segments(t, dir)[0]
	empty := size(t, seg)
	if err := s.Append(bg, []outcomes.Prediction{prediction("a", "m", time.Now())}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 2*time.Second, "the appended prediction written to its segment", func() bool {
		fi, err := os.Stat(seg)
		return err == nil && fi.Size() > empty
	})
}

// TestFileStoreTornTail damages the end of the log as a crash would, and
// in ways only a damaged disk would, at every byte of its last record:
// the store opens, holds every record before the damaged one, and writes
// after them, so that what it writes next survives the next open.
func TestFileStoreTornTail(t *testing.T) {
	opts := outcomes.Options{Now: func() time.Time { return epoch }}
	// build writes a log with rows a and b and a's outcome, and the
	// outcome of b as its last record; it returns the segment and where
	// that record starts and ends.
	build := func(t *testing.T, dir string) (seg string, start, end int64) {
		s := openFile(t, dir, opts)
		if err := s.Append(bg, []outcomes.Prediction{prediction("a", "m", epoch), prediction("b", "m", epoch)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Feedback(bg, churn, []outcomes.Outcome{yes("a")}, epoch); err != nil {
			t.Fatal(err)
		}
		seg = segments(t, dir)[0]
		start = size(t, seg)
		if _, err := s.Feedback(bg, churn, []outcomes.Outcome{yes("b")}, epoch); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return seg, start, size(t, seg)
	}
	type damage struct {
		name string
		do   func(t *testing.T, seg string, start, end int64)
		kept bool // the last record survives it
	}
	var damages []damage
	_, start, end := build(t, t.TempDir())
	for cut := start; cut < end; cut++ {
		damages = append(damages, damage{name: fmt.Sprintf("cut at byte %d of the last record", cut-start),
			do: func(t *testing.T, seg string, start, _ int64) {
				if err := os.Truncate(seg, start+(cut-start)); err != nil {
					t.Fatal(err)
				}
			}})
	}
	appendBytes := func(b []byte) func(*testing.T, string, int64, int64) {
		return func(t *testing.T, seg string, _, _ int64) {
			f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	flip := func(at func(start, end int64) int64) func(*testing.T, string, int64, int64) {
		return func(t *testing.T, seg string, start, end int64) {
			b, err := os.ReadFile(seg)
			if err != nil {
				t.Fatal(err)
			}
			b[at(start, end)] ^= 0x10
			if err := os.WriteFile(seg, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	damages = append(damages,
		damage{name: "zeros after the last record", do: appendBytes(make([]byte, 4096)), kept: true},
		damage{name: "garbage after the last record", do: appendBytes([]byte("\x05\x00\x00\x00garbage, not a record")), kept: true},
		damage{name: "a frame header cut short after the last record", do: appendBytes([]byte{9, 0}), kept: true},
		damage{name: "a bit flipped in the last record's payload", do: flip(func(_, end int64) int64 { return end - 3 })},
		damage{name: "a bit flipped in the last record's checksum", do: flip(func(start, _ int64) int64 { return start + 5 })},
		damage{name: "a bit flipped in the last record's length", do: flip(func(start, _ int64) int64 { return start + 3 })},
	)
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			seg, start, end := build(t, dir)
			d.do(t, seg, start, end)
			s, err := outcomes.OpenFileStore(dir, opts)
			if err != nil {
				t.Fatalf("open after the damage: %v", err)
			}
			wantSize, wantPending, wantFed := start, 1, []string{"a"}
			if d.kept {
				wantSize, wantPending, wantFed = end, 0, []string{"a", "b"}
			}
			if got := size(t, seg); got != wantSize {
				t.Errorf("segment of %d bytes after open, want it cut to %d", got, wantSize)
			}
			checkHolds(t, s, wantPending, wantFed...)
			// A record written now is whole at the next open.
			if err := s.Append(bg, []outcomes.Prediction{prediction("c", "m", epoch)}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Feedback(bg, churn, []outcomes.Outcome{yes("c")}, epoch); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			re := openFile(t, dir, opts)
			checkHolds(t, re, wantPending, append(wantFed, "c")...)
		})
	}
}

// checkHolds checks that s has pending rows and the outcomes of the rows
// fed, in that order.
func checkHolds(t *testing.T, s outcomes.Store, pending int, fed ...string) {
	t.Helper()
	if n, err := s.Pending(bg, churn); err != nil || n != pending {
		t.Errorf("Pending = %d, %v; want %d", n, err, pending)
	}
	joined, err := s.Joined(bg, churn, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range joined {
		got = append(got, j.RowID)
	}
	if diff := cmp.Diff(fed, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("rows with an outcome (-want +got):\n%s", diff)
	}
}

// TestFileStoreTornNewSegment leaves the segment a crash interrupted the
// creation of, after a closed one: the store opens, holds every record of
// the closed segment, and writes the new one afresh.
func TestFileStoreTornNewSegment(t *testing.T) {
	// One prediction a segment: the two appends close the first.
	opts := outcomes.Options{MaxRecords: 8, Now: func() time.Time { return epoch }}
	tests := []struct {
		name    string
		content []byte
	}{
		{"empty", nil},
		{"part of its header", []byte("scorehub outco")},
		{"zeros where its header was to be", make([]byte, 24)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openFile(t, dir, opts)
			for _, id := range []string{"a", "b"} {
				if err := s.Append(bg, []outcomes.Prediction{prediction(id, "m", epoch)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// Records 0 and 1 are in the two segments; the next is 2.
			torn := filepath.Join(dir, "outcomes-0000000000000002.log")
			if err := os.WriteFile(torn, tt.content, 0o600); err != nil {
				t.Fatal(err)
			}
			re, err := outcomes.OpenFileStore(dir, opts)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			checkHolds(t, re, 2)
			if err := re.Append(bg, []outcomes.Prediction{prediction("c", "m", epoch)}); err != nil {
				t.Fatal(err)
			}
			if err := re.Close(); err != nil {
				t.Fatal(err)
			}
			checkHolds(t, openFile(t, dir, opts), 3)
		})
	}
}

// TestFileStoreRefusesDamage checks that damage a crash cannot cause, to a
// segment before the last, is an error naming the file, and that the
// store changes nothing on disk then.
func TestFileStoreRefusesDamage(t *testing.T) {
	// Eight predictions in segments of one.
	opts := outcomes.Options{MaxRecords: 8, Now: func() time.Time { return epoch }}
	build := func(t *testing.T) (string, []string) {
		dir := t.TempDir()
		s := openFile(t, dir, opts)
		for i := range 5 {
			if err := s.Append(bg, []outcomes.Prediction{prediction(fmt.Sprint(i), "m", epoch)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		segs := segments(t, dir)
		if len(segs) != 5 {
			t.Fatalf("%d segments, want 5", len(segs))
		}
		return dir, segs
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, segs []string)
		names  int // the index of the segment the error names
	}{
		{"a bit flipped in a closed segment", func(t *testing.T, segs []string) {
			b, _ := os.ReadFile(segs[1])
			b[len(b)-2] ^= 1
			os.WriteFile(segs[1], b, 0o600)
		}, 1},
		{"a closed segment cut short", func(t *testing.T, segs []string) { os.Truncate(segs[2], size(t, segs[2])-1) }, 2},
		{"a segment missing between two others", func(t *testing.T, segs []string) { os.Remove(segs[2]) }, 3},
		{"a closed segment of another format", func(t *testing.T, segs []string) {
			b, _ := os.ReadFile(segs[0])
			b[0] = 'S'
			os.WriteFile(segs[0], b, 0o600)
		}, 0},
		{"the last segment's header overwritten", func(t *testing.T, segs []string) {
			b, _ := os.ReadFile(segs[4])
			copy(b, "not a log of this kind!")
			os.WriteFile(segs[4], b, 0o600)
		}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, segs := build(t)
			tt.damage(t, segs)
			var before []int64
			for _, seg := range segments(t, dir) {
				before = append(before, size(t, seg))
			}
			s, err := outcomes.OpenFileStore(dir, opts)
			if err == nil {
				s.Close()
				t.Fatal("the damaged log opened")
			}
			if !strings.Contains(err.Error(), filepath.Base(segs[tt.names])) {
				t.Errorf("error %q does not name %s", err, filepath.Base(segs[tt.names]))
			}
			var after []int64
			for _, seg := range segments(t, dir) {
				after = append(after, size(t, seg))
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("segment sizes changed by the refused open (-before +after):\n%s", diff)
			}
			// The directory is not left locked.
			if _, err := outcomes.OpenFileStore(dir, opts); errors.Is(err, registry.ErrLocked) {
				t.Error("the refused open left the directory locked")
			}
		})
	}
}

// TestFileStoreReclaimsSpace appends far more than the bounds hold: whole
// segments are deleted as their predictions leave, so the log spans no
// more than the eight segments of a bound, the oldest partly dropped and
// the one written to, and it holds exactly what the bounds keep.
func TestFileStoreReclaimsSpace(t *testing.T) {
	tests := []struct {
		name    string
		opts    outcomes.Options
		step    time.Duration // the clock's step between appends
		after   time.Duration // how far the clock moves on after the appends
		held    int           // the predictions held at the end
		maxSegs int
	}{
		{"by count", outcomes.Options{MaxRecords: 80}, time.Second, 0, 80, 10},
		{"by age", outcomes.Options{Retention: 8 * time.Hour}, 10 * time.Minute, 0, 48, 10},
		{"all past the retention", outcomes.Options{Retention: 8 * time.Hour}, 10 * time.Minute, 8 * time.Hour, 0, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			clock := testutil.NewClock(epoch)
			tt.opts.Now = clock.Now
			s := openFile(t, dir, tt.opts)
			most := 0
			for i := range 1000 {
				if err := s.Append(bg, []outcomes.Prediction{prediction(fmt.Sprint(i), "m", clock.Now())}); err != nil {
					t.Fatal(err)
				}
				if i%7 == 0 {
					if _, err := s.Feedback(bg, churn, []outcomes.Outcome{yes(fmt.Sprint(i))}, clock.Now()); err != nil {
						t.Fatal(err)
					}
				}
				most = max(most, len(segments(t, dir)))
				clock.Advance(tt.step)
			}
			if most > tt.maxSegs {
				t.Errorf("the log spanned up to %d segments, want at most %d", most, tt.maxSegs)
			}
			if tt.after > 0 {
				clock.Advance(tt.after)
				// Any write deletes what the bounds left nothing in.
				if _, err := s.Feedback(bg, churn, []outcomes.Outcome{yes("0")}, clock.Now()); err != nil {
					t.Fatal(err)
				}
				if n := len(segments(t, dir)); n != 1 {
					t.Errorf("%d segments once every prediction is past the retention, want the one written to", n)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			re := openFile(t, dir, tt.opts)
			pending, err := re.Pending(bg, churn)
			if err != nil {
				t.Fatal(err)
			}
			joined, err := re.Joined(bg, churn, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if got := pending + len(joined); got != tt.held {
				t.Errorf("%d predictions held after reopening, want %d", got, tt.held)
			}
		})
	}
}

const writerEnv = "SCOREHUB_OUTCOMES_WRITER_DIR"

// writerOpts are the bounds of the crash test's log: it holds all it is
// given, in segments of 250 predictions.
var writerOpts = outcomes.Options{MaxRecords: 2000}

// TestFileStoreWriterProcess is not a test of its own: run by
// TestFileStoreSurvivesKill as a separate process, it appends to the log
// in $SCOREHUB_OUTCOMES_WRITER_DIR and feeds outcomes back in a loop, and
// prints the number of each batch of outcomes it has been told is
// stored, until it is killed.
func TestFileStoreWriterProcess(t *testing.T) {
	dir := os.Getenv(writerEnv)
	if dir == "" {
		t.Skip("runs only as the writer process of TestFileStoreSurvivesKill")
	}
	s, err := outcomes.OpenFileStore(dir, writerOpts)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	now := time.Now()
	for i := range 100000 {
		a, b := fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
		ps := []outcomes.Prediction{prediction(a, "champion", now), prediction(a, "shadow", now),
			prediction(b, "champion", now), prediction(b, "shadow", now)}
		for j := range 6 {
			ps = append(ps, prediction(fmt.Sprintf("unfed%d-%d", i, j), "champion", now))
		}
		if err := s.Append(bg, ps); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		applied, err := s.Feedback(bg, churn, []outcomes.Outcome{yes(a), yes(b)}, now)
		if err != nil || applied.Matched != 2 {
			fmt.Println("error", applied, err)
			os.Exit(1)
		}
		if _, err := fmt.Println("fed", i); err != nil {
			os.Exit(1) // the parent is gone
		}
	}
	os.Exit(0)
}

// TestFileStoreSurvivesKill kills a process (SIGKILL) in the middle of
// its appends and feedback, and checks that the log it leaves opens,
// holds every outcome it acknowledged with the predictions they matched,
// no batch in part, and takes new records after.
func TestFileStoreSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	child := testutil.StartChild(t, "TestFileStoreWriterProcess", writerEnv+"="+dir)
	const acks = 150 // 1,500 predictions: six segments
	acked := -1
	lines := child.Lines
	for acked < acks-1 && lines.Scan() {
		n, ok := strings.CutPrefix(lines.Text(), "fed ")
		if !ok {
			t.Fatalf("writer process: %s", lines.Text())
		}
		var err error
		if acked, err = strconv.Atoi(n); err != nil {
			t.Fatal(err)
		}
	}
	if acked < acks-1 {
		t.Fatalf("writer process stopped after %d batches: %v", acked+1, lines.Err())
	}
	child.Kill(t)

	s := openFile(t, dir, writerOpts)
	joined, err := s.Joined(bg, churn, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	models := map[string][]string{}
	for _, j := range joined {
		models[j.RowID] = append(models[j.RowID], j.Model)
	}
	for i := 0; ; i++ {
		a, b := fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
		if i > acked && models[a] == nil && models[b] == nil {
			break // the first batch the crash lost: none after it was stored
		}
		for _, id := range []string{a, b} {
			if diff := cmp.Diff([]string{"champion", "shadow"}, models[id]); diff != "" {
				t.Errorf("batch %d (acknowledged: %v): models joined with row %s (-want +got):\n%s", i, i <= acked, id, diff)
			}
		}
	}
	if len(segments(t, dir)) < 6 {
		t.Errorf("the log has %d segments, want 6 or more: the test did not cross segments", len(segments(t, dir)))
	}
	// A record written after the recovery survives the next open.
	if err := s.Append(bg, []outcomes.Prediction{prediction("after", "champion", time.Now())}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Feedback(bg, churn, []outcomes.Outcome{yes("after")}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	re := openFile(t, dir, writerOpts)
	if joined, err := re.Joined(bg, churn, time.Now().Add(-time.Hour)); err != nil || len(joined) == 0 || joined[len(joined)-1].RowID != "after" {
		t.Errorf("the outcome fed after recovery is not the last joined after reopening (%v)", err)
	}
}
