package outcomes

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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

func logPrediction(id, model string, at time.Time) Prediction {
	return Prediction{Endpoint: logRef, RowID: id, Model: model, Role: "champion", Label: "yes",
		Classes: []string{"no", "yes"}, Confidences: []float64{0.4, 0.6}, At: at}
}

func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, segmentPrefix+"*"+segmentSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// unsyncedFS is the real file system with flushes to stable storage left
// out, for tests of what the store reads back rather than of what
// survives a power loss: they close and delete many small segments, each
// a few directory flushes.
type unsyncedFS struct{ atomicfile.OS }

func (unsyncedFS) OpenFile(name string, flag int, perm os.FileMode) (segmentFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return unsyncedFile{f}, nil
}

func (unsyncedFS) SyncDir(string) error { return nil }

type unsyncedFile struct{ *os.File }

func (unsyncedFile) Sync() error { return nil }

// faultFS is the real file system with the next operation of a kind made
// to fail: "create" (a segment), "write" (which writes half of what it is
// given first) or "sync".
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

// TestFileStoreMatchesMemStore drives a file store and a memory store
// with the same random appends, feedback and clock, the file store opened
// again now and then, with bounds small enough that segments are closed,
// deleted and their outcomes carried on all the time: both must answer
// alike at every step, and the log must stay within its bound on disk.
func TestFileStoreMatchesMemStore(t *testing.T) {
	endpoints := []process.EndpointRef{logRef, {Group: "DEFAULT", Path: "churn", Alias: "test"}}
	models := []string{"churn@3", "churn@4", "churn@5"}
	for seed := range uint64(6) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 39))
			clock := testutil.NewClock(logEpoch)
			opts := Options{MaxRecords: 24, Retention: 2 * time.Hour, Now: clock.Now}
			mem := NewMemStore(opts)
			dir := t.TempDir()
			file, err := openFileStore(dir, opts, unsyncedFS{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { file.Close() }()
			maxSegments := 0
			for step := range 800 {
				switch r := rng.IntN(100); {
				case r < 45:
					var ps []Prediction
					for range 1 + rng.IntN(4) {
						p := logPrediction(fmt.Sprintf("r%d", rng.IntN(30)), models[rng.IntN(len(models))],
							clock.Now().Add(-time.Duration(rng.IntN(20))*time.Minute))
						p.Endpoint = endpoints[rng.IntN(len(endpoints))]
						ps = append(ps, p)
					}
					if err := mem.Append(logCtx, ps); err != nil {
						t.Fatal(err)
					}
					if err := file.Append(logCtx, ps); err != nil {
						t.Fatalf("step %d: Append: %v", step, err)
					}
				case r < 75:
					ep := endpoints[rng.IntN(len(endpoints))]
					var outs []Outcome
					for range 1 + rng.IntN(5) {
						outs = append(outs, Outcome{RowID: fmt.Sprintf("r%d", rng.IntN(30)), IsLabel: true, Label: []string{"no", "yes"}[rng.IntN(2)]})
					}
					at := clock.Now().Add(-time.Duration(rng.IntN(3)) * time.Minute)
					want, err := mem.Feedback(logCtx, ep, outs, at)
					if err != nil {
						t.Fatal(err)
					}
					got, err := file.Feedback(logCtx, ep, outs, at)
					if err != nil {
						t.Fatalf("step %d: Feedback: %v", step, err)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("step %d: Applied (-memory +file):\n%s", step, diff)
					}
				case r < 92:
					clock.Advance(time.Duration(rng.IntN(15)) * time.Minute)
				default:
					if err := file.Close(); err != nil {
						t.Fatal(err)
					}
					if file, err = openFileStore(dir, opts, unsyncedFS{}); err != nil {
						t.Fatalf("step %d: reopen: %v", step, err)
					}
				}
				for _, ep := range endpoints {
					want, _ := mem.Pending(logCtx, ep)
					got, err := file.Pending(logCtx, ep)
					if err != nil || got != want {
						t.Fatalf("step %d: Pending = %d, %v; the memory store's is %d", step, got, err, want)
					}
					wantJ, _ := mem.Joined(logCtx, ep, time.Time{})
					gotJ, err := file.Joined(logCtx, ep, time.Time{})
					if err != nil {
						t.Fatal(err)
					}
					if !slices.EqualFunc(wantJ, gotJ, sameJoined) {
						t.Fatalf("step %d: Joined (-memory +file):\n%s", step, cmp.Diff(wantJ, gotJ, cmpopts.EquateEmpty()))
					}
				}
				maxSegments = max(maxSegments, len(segmentFiles(t, dir)))
			}
			// 24 predictions are held in 8 segments of 3, and the
			// retention of 2 h spans 8 of 15 min; with the one being
			// written and the oldest, partly dropped, no more than 18.
			if maxSegments > 18 {
				t.Errorf("the log spanned %d segments, want at most 18", maxSegments)
			}
		})
	}
}

// sameJoined is cmp.Equal for the joined records of
// TestFileStoreMatchesMemStore (no NaN, no empty slices), without its
// reflection, which would take most of the test's time.
func sameJoined(a, b Joined) bool {
	pa, pb := a.Prediction, b.Prediction
	return pa.Endpoint == pb.Endpoint && pa.RowID == pb.RowID && pa.Model == pb.Model && pa.Role == pb.Role &&
		pa.Label == pb.Label && slices.Equal(pa.Classes, pb.Classes) && slices.Equal(pa.Confidences, pb.Confidences) &&
		pa.Value == pb.Value && pa.At.Equal(pb.At) && a.Actual == b.Actual && a.FedAt.Equal(b.FedAt)
}

// TestFileStoreWriteFaults fails the writes of a Feedback and of the
// background flush: the call fails, the store serves nothing more, Close
// reports the failure, and the log opened again holds the batch whole
// when its write reached the file, and none of it otherwise.
func TestFileStoreWriteFaults(t *testing.T) {
	tests := []struct {
		name       string
		maxRecords int // 16 closes a segment after every 2 predictions
		op         string
		background bool // the background flush of an Append fails
		landed     bool // the failed write reached the file
	}{
		{name: "feedback's write fails half way", op: "write"},
		{name: "feedback's flush fails", op: "sync", landed: true},
		{name: "the segment for the feedback cannot be created", maxRecords: 16, op: "create"},
		{name: "the background flush fails", op: "sync", background: true, landed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{MaxRecords: tt.maxRecords, Now: func() time.Time { return logEpoch }}
			ffs := &faultFS{}
			s, err := openFileStore(dir, opts, ffs)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			p1, p2 := logPrediction("p1", "m", logEpoch), logPrediction("p2", "m", logEpoch)
			yes := func(id string) Outcome { return Outcome{RowID: id, IsLabel: true, Label: "yes"} }
			if err := s.Append(logCtx, []Prediction{p1}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Feedback(logCtx, logRef, []Outcome{yes("p1")}, logEpoch); err != nil {
				t.Fatal(err)
			}
			if err := s.Append(logCtx, []Prediction{p2}); err != nil {
				t.Fatal(err)
			}
			// p2 is written to the file now, so that only the failing
			// call's own record is at stake.
			if _, err := s.Joined(logCtx, logRef, time.Time{}); err != nil {
				t.Fatal(err)
			}

			ffs.arm(tt.op)
			if tt.background {
				if err := s.Append(logCtx, []Prediction{logPrediction("p3", "m", logEpoch)}); err != nil {
					t.Fatal(err)
				}
				testutil.Eventually(t, 5*time.Second, "the failed background flush reported", func() bool {
					_, err := s.Pending(logCtx, logRef)
					return errors.Is(err, errFault)
				})
			} else if a, err := s.Feedback(logCtx, logRef, []Outcome{yes("p2")}, logEpoch); !errors.Is(err, errFault) {
				t.Fatalf("Feedback = %+v, %v; want the injected fault", a, err)
			}
			if _, err := s.Joined(logCtx, logRef, time.Time{}); !errors.Is(err, errFault) {
				t.Errorf("Joined after the failure: %v, want the failure", err)
			}
			if err := s.Append(logCtx, []Prediction{logPrediction("p4", "m", logEpoch)}); !errors.Is(err, errFault) {
				t.Errorf("Append after the failure: %v, want the failure", err)
			}
			if err := s.Close(); !errors.Is(err, errFault) {
				t.Errorf("Close after the failure: %v, want the failure", err)
			}

			re, err := OpenFileStore(dir, opts)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			defer re.Close()
			wantFed, wantPending := []string{"p1"}, 1
			switch {
			case tt.background:
				wantPending = 2 // p2 and p3
			case tt.landed:
				wantFed, wantPending = []string{"p1", "p2"}, 0
			}
			joined, err := re.Joined(logCtx, logRef, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			var fed []string
			for _, j := range joined {
				fed = append(fed, j.RowID)
			}
			if diff := cmp.Diff(wantFed, fed); diff != "" {
				t.Errorf("rows with an outcome after reopening (-want +got):\n%s", diff)
			}
			if n, err := re.Pending(logCtx, logRef); err != nil || n != wantPending {
				t.Errorf("Pending after reopening = %d, %v; want %d", n, err, wantPending)
			}
		})
	}
}

func TestNumberJSON(t *testing.T) {
	tests := []struct {
		in   float64
		json string
	}{
		{0, "0"},
		{-0.5, "-0.5"},
		{1e21, "1e+21"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{math.NaN(), `"NaN"`},
		{math.Inf(1), `"+Inf"`},
		{math.Inf(-1), `"-Inf"`},
	}
	for _, tt := range tests {
		b, err := number(tt.in).MarshalJSON()
		if err != nil || string(b) != tt.json {
			t.Errorf("%v encodes as %s (%v), want %s", tt.in, b, err, tt.json)
			continue
		}
		var back number
		if err := back.UnmarshalJSON(b); err != nil {
			t.Errorf("%s does not decode: %v", b, err)
		}
		if got := float64(back); got != tt.in && !(math.IsNaN(got) && math.IsNaN(tt.in)) {
			t.Errorf("%s decodes as %v, want %v", b, got, tt.in)
		}
	}
	var n number
	for _, bad := range []string{`"nan"`, `true`, `"1"`, `{}`} {
		if err := n.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%s decoded as a number", bad)
		}
	}
}

func TestSegmentName(t *testing.T) {
	tests := []struct {
		name  string
		first uint64
		ok    bool
	}{
		{segmentName(0), 0, true},
		{segmentName(0xfedcba9876543210), 0xfedcba9876543210, true},
		{"outcomes-00000000000000ff.log", 255, true},
		{"outcomes-ff.log", 0, false},
		{"outcomes-000000000000000g.log", 0, false},
		{"outcomes-0000000000000000.log.tmp", 0, false},
		{"registry.json", 0, false},
		{"outcomes.lock", 0, false},
	}
	for _, tt := range tests {
		first, ok := parseSegmentName(tt.name)
		if ok != tt.ok || first != tt.first {
			t.Errorf("parseSegmentName(%q) = %d, %v; want %d, %v", tt.name, first, ok, tt.first, tt.ok)
		}
	}
}

// TestFileStoreMemoryPerRecord measures what the file store keeps in
// memory per prediction and per outcome, against what its documentation
// says.
func TestFileStoreMemoryPerRecord(t *testing.T) {
	const rows = 20000
	s, err := openFileStore(t.TempDir(), Options{Now: func() time.Time { return logEpoch }}, unsyncedFS{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	ps := make([]Prediction, rows)
	outs := make([]Outcome, rows)
	for i := range ps {
		ps[i] = logPrediction(fmt.Sprintf("row-%06d", i), "churn@3", logEpoch) // an ID of 10 bytes
		outs[i] = Outcome{RowID: ps[i].RowID, IsLabel: true, Label: "yes"}
	}
	base := heap()
	for i := 0; i < rows; i += 1000 {
		if err := s.Append(logCtx, ps[i:i+1000]); err != nil {
			t.Fatal(err)
		}
	}
	appended := heap()
	for i := 0; i < rows; i += 1000 {
		if _, err := s.Feedback(logCtx, logRef, outs[i:i+1000], logEpoch); err != nil {
			t.Fatal(err)
		}
	}
	fed := heap()
	perPrediction := float64(appended-base) / rows
	perOutcome := float64(fed-appended) / rows
	t.Logf("%.0f bytes per prediction, %.0f per outcome", perPrediction, perOutcome)
	// The documentation's figures: about 200 bytes and the row ID per
	// prediction, about 90 and the label per outcome. The row IDs and
	// labels are the caller's strings, which the test keeps.
	if perPrediction > 240 || perOutcome > 110 {
		t.Errorf("%.0f bytes per prediction and %.0f per outcome, more than documented", perPrediction, perOutcome)
	}
	runtime.KeepAlive(ps)
	runtime.KeepAlive(outs)
}
