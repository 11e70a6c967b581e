package payloads_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/payloads"
	"github.com/scorehub/scorehub/registry/process"
)

var (
	epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	churn = process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "live"}
	bg    = context.Background()
)

// record is row number n of churn, scored at at.
func record(n int, at time.Time) payloads.Record {
	return payloads.Record{Endpoint: churn, Model: "churn@3", At: at,
		Row: json.RawMessage(fmt.Sprintf(`{"n":%d,"plan":"gold","prediction(churn)":"yes"}`, n))}
}

func mustAppend(t *testing.T, s payloads.Store, rs ...payloads.Record) {
	t.Helper()
	if err := s.Append(bg, rs); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

func mustFlush(t *testing.T, s *payloads.FileStore) {
	t.Helper()
	if err := s.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// held pages through churn's records and returns their row numbers and
// seqs.
func held(t *testing.T, s payloads.Store) (rows []int, seqs []int64) {
	t.Helper()
	var after int64
	for {
		rs, more, err := s.Page(bg, churn, after, 100)
		if err != nil {
			t.Fatalf("Page: %v", err)
		}
		for _, r := range rs {
			var v struct{ N int }
			if err := json.Unmarshal(r.Row, &v); err != nil {
				t.Fatal(err)
			}
			rows, seqs = append(rows, v.N), append(seqs, r.Seq)
			after = r.Seq
		}
		if !more {
			return rows, seqs
		}
	}
}

func count(from, to int) []int {
	var ns []int
	for n := from; n < to; n++ {
		ns = append(ns, n)
	}
	return ns
}

// logFiles lists the log's files in dir, oldest first.
func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "payloads-*.jsonl"))
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

// checkFiles checks the log's files as any JSON Lines reader sees them:
// every line a whole record, seqs without gaps from the one each file is
// named by, each file following the one before. It returns the records.
func checkFiles(t *testing.T, dir string) []payloads.Record {
	t.Helper()
	var all []payloads.Record
	for i, path := range logFiles(t, dir) {
		first, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "payloads-"), ".jsonl"), 16, 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if i > 0 && first != all[len(all)-1].Seq+1 {
			t.Errorf("%s follows a file that ends with record %d", filepath.Base(path), all[len(all)-1].Seq)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Errorf("%s does not end with a whole line", filepath.Base(path))
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 2<<20)
		for want := first; sc.Scan(); want++ {
			var r payloads.Record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: a line is not a record: %v\n%s", filepath.Base(path), err, sc.Bytes())
			}
			if r.Seq != want {
				t.Fatalf("%s: record %d where %d was due", filepath.Base(path), r.Seq, want)
			}
			all = append(all, r)
		}
	}
	return all
}

func TestFileStoreLocked(t *testing.T) {
	dir := t.TempDir()
	s := openFile(t, dir, payloads.Options{})
	if _, err := payloads.OpenFileStore(dir, payloads.Options{}); !errors.Is(err, registry.ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	mustAppend(t, s, record(0, time.Now()))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	re := openFile(t, dir, payloads.Options{})
	if rows, _ := held(t, re); len(rows) != 1 {
		t.Errorf("after the first store closed: %d records, want its one", len(rows))
	}
}

// TestFileStoreWritesWithinASecond checks that an appended record reaches
// its file without a Flush, a Page or a Close.
func TestFileStoreWritesWithinASecond(t *testing.T) {
	dir := t.TempDir()
	s := openFile(t, dir, payloads.Options{})
	file := logFiles(t, dir)[0]
	mustAppend(t, s, record(0, time.Now()))
	testutil.Eventually(t, 2*time.Second, "the appended record written to its file", func() bool {
		return size(t, file) > 0
	})
}

// TestFileStoreRotatesAndReclaims appends far more than the bounds hold:
// files are started at an eighth of the bounds and deleted whole, so that
// the log never holds more than MaxBytes, nor records in files past the
// retention, and what it holds is the newest records, in files any JSON
// Lines reader reads.
func TestFileStoreRotatesAndReclaims(t *testing.T) {
	tests := []struct {
		name     string
		opts     payloads.Options
		step     time.Duration // the clock's step between appends
		maxFiles int
	}{
		{"by size", payloads.Options{MaxBytes: 8 << 10}, time.Second, 9},
		{"by age", payloads.Options{Retention: 8 * time.Hour}, 10 * time.Minute, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			clock := testutil.NewClock(epoch)
			tt.opts.Now = clock.Now
			s := openFile(t, dir, tt.opts)
			const n = 600
			for i := range n {
				mustAppend(t, s, record(i, clock.Now()))
				if i%20 == 19 {
					mustFlush(t, s)
					files := logFiles(t, dir)
					var total int64
					for _, f := range files {
						total += size(t, f)
						if tt.opts.MaxBytes > 0 && size(t, f) > tt.opts.MaxBytes/8 {
							t.Fatalf("%s holds %d bytes, more than an eighth of MaxBytes", filepath.Base(f), size(t, f))
						}
					}
					if len(files) > tt.maxFiles {
						t.Fatalf("after %d records: %d files, want at most %d", i+1, len(files), tt.maxFiles)
					}
					if tt.opts.MaxBytes > 0 && total > tt.opts.MaxBytes {
						t.Fatalf("after %d records: the files hold %d bytes, more than MaxBytes", i+1, total)
					}
				}
				clock.Advance(tt.step)
			}
			mustFlush(t, s)
			onDisk := checkFiles(t, dir)
			rows, seqs := held(t, s)
			if len(rows) == 0 || rows[len(rows)-1] != n-1 {
				t.Fatalf("held rows end at %v, want the newest", rows[max(0, len(rows)-3):])
			}
			if diff := cmp.Diff(count(n-len(rows), n), rows); diff != "" {
				t.Errorf("held rows are not the newest, in order (-want +got):\n%s", diff)
			}
			if tt.opts.Retention > 0 {
				// The records of the retention and those of the newest
				// file past it, no more.
				if kept := int(tt.opts.Retention / tt.step); len(rows) != kept {
					t.Errorf("%d records returned, want the %d of the retention", len(rows), kept)
				}
				if len(onDisk) > len(rows)+int(tt.opts.Retention/8/tt.step) {
					t.Errorf("the files hold %d records, more than an eighth of the retention past the %d returned", len(onDisk), len(rows))
				}
			} else {
				var total int64
				for _, f := range logFiles(t, dir) {
					total += size(t, f)
				}
				if total < tt.opts.MaxBytes*3/4 {
					t.Errorf("the files hold %d bytes, want more than three quarters of MaxBytes once the log filled", total)
				}
				if len(onDisk) != len(rows) || onDisk[0].Seq != seqs[0] {
					t.Errorf("the files hold %d records from seq %d, Page returned %d from %d", len(onDisk), onDisk[0].Seq, len(rows), seqs[0])
				}
			}
		})
	}
}

// TestFileStoreDropsFilesPastRetention checks that once every record is
// past the retention, the next Append leaves one file, the one it wrote
// to, and the seqs number on.
func TestFileStoreDropsFilesPastRetention(t *testing.T) {
	dir := t.TempDir()
	clock := testutil.NewClock(epoch)
	opts := payloads.Options{Retention: 8 * time.Hour, Now: clock.Now}
	s := openFile(t, dir, opts)
	for i := range 30 {
		mustAppend(t, s, record(i, clock.Now()))
		clock.Advance(20 * time.Minute)
	}
	mustFlush(t, s)
	if n := len(logFiles(t, dir)); n < 5 {
		t.Fatalf("%d files, want the records spread over more", n)
	}
	clock.Advance(9 * time.Hour)
	if rows, _ := held(t, s); len(rows) != 0 {
		t.Errorf("rows %v returned past the retention", rows)
	}
	mustAppend(t, s, record(30, clock.Now()))
	mustFlush(t, s)
	files := logFiles(t, dir)
	if len(files) != 1 {
		t.Errorf("files %v once every earlier record is past the retention, want the one written to", files)
	}
	if rows, seqs := held(t, s); !slices.Equal(rows, []int{30}) || !slices.Equal(seqs, []int64{31}) {
		t.Errorf("rows %v, seqs %v; want row 30 as seq 31", rows, seqs)
	}
}

// TestFileStorePagesAcrossFiles pages through an endpoint whose records
// are spread over many files among another endpoint's.
func TestFileStorePagesAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	s := openFile(t, dir, payloads.Options{MaxBytes: 1 << 20, Now: func() time.Time { return epoch }})
	other := process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "test"}
	for i := range 3000 {
		r := record(i, epoch)
		if i%3 == 0 {
			r.Endpoint = other
		}
		mustAppend(t, s, r)
	}
	mustFlush(t, s)
	if n := len(logFiles(t, dir)); n < 3 {
		t.Fatalf("%d files, want several", n)
	}
	rows, _ := held(t, s)
	var want []int
	for i := range 3000 {
		if i%3 != 0 {
			want = append(want, i)
		}
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("churn's rows (-want +got):\n%s", diff)
	}
}

// TestFileStoreTornTail damages the end of the newest file as a crash
// would: the store opens, holds every record before the damage, and
// numbers on after the last of them, so that what it writes next survives
// the next open.
func TestFileStoreTornTail(t *testing.T) {
	opts := payloads.Options{Now: func() time.Time { return epoch }}
	// build writes rows 0 to 2; it returns the file and where the last
	// line starts and ends.
	build := func(t *testing.T, dir string) (file string, start, end int64) {
		s := openFile(t, dir, opts)
		mustAppend(t, s, record(0, epoch), record(1, epoch))
		mustFlush(t, s)
		file = logFiles(t, dir)[0]
		start = size(t, file)
		mustAppend(t, s, record(2, epoch))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return file, start, size(t, file)
	}
	type damage struct {
		name string
		do   func(t *testing.T, file string, start, end int64)
		kept bool // the last record survives it
	}
	var damages []damage
	_, start, end := build(t, t.TempDir())
	for cut := start; cut < end; cut++ {
		damages = append(damages, damage{name: fmt.Sprintf("cut at byte %d of the last line", cut-start),
			do: func(t *testing.T, file string, start, _ int64) {
				if err := os.Truncate(file, start+(cut-start)); err != nil {
					t.Fatal(err)
				}
			}})
	}
	appendBytes := func(b string) func(*testing.T, string, int64, int64) {
		return func(t *testing.T, file string, _, _ int64) {
			f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	line := func(seq int64) string {
		r := record(9, epoch)
		r.Seq = seq
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	damages = append(damages,
		damage{name: "zeros after the last line", do: appendBytes(string(make([]byte, 4096))), kept: true},
		damage{name: "garbage after the last line", do: appendBytes("garbage, not a record\n"), kept: true},
		damage{name: "part of a line after the last", do: appendBytes(line(4)[:30]), kept: true},
		damage{name: "a record out of sequence after the last", do: appendBytes(line(7)), kept: true},
		damage{name: "a line of JSON that is no record after the last", do: appendBytes(`{"seq":4}` + "\n"), kept: true},
		damage{name: "the last line's JSON broken", do: func(t *testing.T, file string, start, _ int64) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			b[start+1] = 'x' // the quote of "seq"
			if err := os.WriteFile(file, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	)
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			file, start, end := build(t, dir)
			d.do(t, file, start, end)
			s, err := payloads.OpenFileStore(dir, opts)
			if err != nil {
				t.Fatalf("open after the damage: %v", err)
			}
			wantSize, wantRows := start, []int{0, 1}
			if d.kept {
				wantSize, wantRows = end, []int{0, 1, 2}
			}
			if got := size(t, file); got != wantSize {
				t.Errorf("file of %d bytes after open, want it cut to %d", got, wantSize)
			}
			rows, _ := held(t, s)
			if diff := cmp.Diff(wantRows, rows); diff != "" {
				t.Errorf("rows after open (-want +got):\n%s", diff)
			}
			// A record written now follows the last whole one, and is
			// whole at the next open.
			mustAppend(t, s, record(9, epoch))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			re := openFile(t, dir, opts)
			rows, seqs := held(t, re)
			wantRows = append(wantRows, 9)
			if diff := cmp.Diff(wantRows, rows); diff != "" {
				t.Errorf("rows after reopening (-want +got):\n%s", diff)
			}
			if want := int64(len(wantRows)); seqs[len(seqs)-1] != want {
				t.Errorf("the record appended after the repair is seq %d, want %d", seqs[len(seqs)-1], want)
			}
			checkFiles(t, dir)
		})
	}
}

// TestFileStoreRefusesDamage checks that damage a crash cannot cause, to a
// file before the newest, is an error naming the file, and that the store
// changes nothing on disk then.
func TestFileStoreRefusesDamage(t *testing.T) {
	// One record a file: a record takes some 130 bytes.
	opts := payloads.Options{MaxBytes: 8 * 150, Now: func() time.Time { return epoch }}
	build := func(t *testing.T) (string, []string) {
		dir := t.TempDir()
		s := openFile(t, dir, opts)
		for i := range 5 {
			mustAppend(t, s, record(i, epoch))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		files := logFiles(t, dir)
		if len(files) != 5 {
			t.Fatalf("%d files, want 5", len(files))
		}
		return dir, files
	}
	rewrite := func(t *testing.T, file string, change func([]byte) []byte) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, change(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, files []string)
		names  int // the index of the file the error names
	}{
		{"an older file's JSON broken", func(t *testing.T, files []string) {
			rewrite(t, files[1], func(b []byte) []byte { b[1] = 'x'; return b })
		}, 1},
		{"an older file cut short", func(t *testing.T, files []string) {
			rewrite(t, files[2], func(b []byte) []byte { return b[:len(b)-1] })
		}, 2},
		{"an older file's record out of sequence", func(t *testing.T, files []string) {
			rewrite(t, files[1], func(b []byte) []byte { return bytes.Replace(b, []byte(`{"seq":2,`), []byte(`{"seq":3,`), 1) })
		}, 1},
		{"a file missing between two others", func(t *testing.T, files []string) {
			if err := os.Remove(files[2]); err != nil {
				t.Fatal(err)
			}
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, files := build(t)
			tt.damage(t, files)
			var before []int64
			for _, f := range logFiles(t, dir) {
				before = append(before, size(t, f))
			}
			s, err := payloads.OpenFileStore(dir, opts)
			if err == nil {
				s.Close()
				t.Fatal("the damaged log opened")
			}
			if !strings.Contains(err.Error(), filepath.Base(files[tt.names])) {
				t.Errorf("error %q does not name %s", err, filepath.Base(files[tt.names]))
			}
			var after []int64
			for _, f := range logFiles(t, dir) {
				after = append(after, size(t, f))
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("file sizes changed by the refused open (-before +after):\n%s", diff)
			}
			if _, err := payloads.OpenFileStore(dir, opts); errors.Is(err, registry.ErrLocked) {
				t.Error("the refused open left the directory locked")
			}
		})
	}
}

const writerEnv = "SCOREHUB_PAYLOADS_WRITER_DIR"

// writerOpts are the bounds of the crash test's log: it holds all it is
// given, in files of 1 MiB.
var writerOpts = payloads.Options{MaxBytes: 8 << 20}

// writerBatch is how many records the writer appends at once,
// writerAhead how many rows past the last flush it may append, and
// writerRows how many it appends in all, some 5 MiB, so that the log
// holds them all however late the test kills it.
const writerBatch, writerAhead, writerRows = 50, 2000, 20000

// TestFileStoreWriterProcess is not a test of its own: run by
// TestFileStoreSurvivesKill as a separate process, it appends to the log
// in $SCOREHUB_PAYLOADS_WRITER_DIR in a loop, row n as the n-th record,
// up to writerRows, while another goroutine flushes in a loop and prints
// the number of the last row each Flush covered, until it is killed.
func TestFileStoreWriterProcess(t *testing.T) {
	dir := os.Getenv(writerEnv)
	if dir == "" {
		t.Skip("runs only as the writer process of TestFileStoreSurvivesKill")
	}
	s, err := payloads.OpenFileStore(dir, writerOpts)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	// The rows appended, and those a Flush covered. The appender keeps
	// within writerAhead rows of the flushes, so that the log stays
	// within its bounds however slow the flushes are.
	var appended, flushed atomic.Int64
	go func() {
		for {
			upTo := appended.Load()
			if upTo == flushed.Load() {
				time.Sleep(time.Millisecond)
				continue
			}
			if err := s.Flush(); err != nil {
				fmt.Println("error", err)
				os.Exit(1)
			}
			flushed.Store(upTo)
			if _, err := fmt.Println("flushed", upTo-1); err != nil {
				os.Exit(1) // the parent is gone
			}
		}
	}()
	pad := strings.Repeat("x", 150)
	now := time.Now()
	for b := 0; b < writerRows/writerBatch; b++ {
		rs := make([]payloads.Record, writerBatch)
		for i := range rs {
			n := b*writerBatch + i
			rs[i] = payloads.Record{Endpoint: churn, At: now, Row: json.RawMessage(fmt.Sprintf(`{"n":%d,"pad":%q}`, n, pad))}
		}
		err := s.Append(bg, rs)
		for errors.Is(err, payloads.ErrBacklog) {
			time.Sleep(time.Millisecond)
			err = s.Append(bg, rs)
		}
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		appended.Store(int64(b+1) * writerBatch)
		for appended.Load()-flushed.Load() > writerAhead {
			time.Sleep(100 * time.Microsecond)
		}
	}
	select {} // until killed
}

// TestFileStoreSurvivesKill kills a process (SIGKILL) in the middle of its
// appends, and checks that the log it leaves opens, that every line of its
// files is then a whole record, numbered without gaps, that it holds
// every record a Flush acknowledged, and that it numbers on after them.
func TestFileStoreSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	child := testutil.StartChild(t, "TestFileStoreWriterProcess", writerEnv+"="+dir)
	const acks = 12000 // some 3 MiB: three files or more
	acked := -1
	lines := child.Lines
	for acked < acks && lines.Scan() {
		n, ok := strings.CutPrefix(lines.Text(), "flushed ")
		if !ok {
			t.Fatalf("writer process: %s", lines.Text())
		}
		var err error
		if acked, err = strconv.Atoi(n); err != nil {
			t.Fatal(err)
		}
	}
	if acked < acks {
		t.Fatalf("writer process stopped after row %d: %v", acked, lines.Err())
	}
	// At any point of the writer's appends and flushes.
	time.Sleep(time.Duration(rand.IntN(10_000)) * time.Microsecond)
	child.Kill(t)

	files := logFiles(t, dir)
	newest, left := files[len(files)-1], size(t, files[len(files)-1])
	s := openFile(t, dir, writerOpts)
	onDisk := checkFiles(t, dir)
	t.Logf("the crash left %d records past the last acknowledged; the open cut %d bytes off the newest file",
		len(onDisk)-acked-1, left-size(t, newest))
	if n := len(logFiles(t, dir)); n < 3 {
		t.Errorf("the log has %d files, want 3 or more: the test did not cross files", n)
	}
	rows, seqs := held(t, s)
	if len(rows) <= acked || len(onDisk) != len(rows) {
		t.Fatalf("%d records held, %d in the files; want every one of the %d acknowledged, and the same", len(rows), len(onDisk), acked+1)
	}
	for i, n := range rows {
		if n != i || seqs[i] != int64(i+1) {
			t.Fatalf("record %d is row %d, seq %d; want row %d as seq %d", i, n, seqs[i], i, i+1)
		}
	}
	// A record written after the recovery numbers on and survives the
	// next open.
	mustAppend(t, s, record(len(rows), time.Now()))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	re := openFile(t, dir, writerOpts)
	rs, more, err := re.Page(bg, churn, seqs[len(seqs)-1], 10)
	if err != nil || len(rs) != 1 || more || rs[0].Seq != seqs[len(seqs)-1]+1 {
		t.Errorf("after the recovery: %d records after the last, more %v, %v; want the one appended as seq %d", len(rs), more, err, seqs[len(seqs)-1]+1)
	}
	checkFiles(t, dir)
}
