package scoring_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// largeBody is a request of rows rows with numbers, text, booleans, nulls
// and absent keys, and a 20-digit ID that must be echoed as sent.
func largeBody(rows int) string {
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, `{"id":1%019d,"x":%d.25,"city":"Zürich \"%d\"","ok":true}`, i, i, i%13)
		case 1:
			fmt.Fprintf(&b, `{"x":null,"id":%d,"ok":false}`, i)
		case 2:
			fmt.Fprintf(&b, `{"id":%d,"x":%de-3,"city":null}`, i, i)
		default:
			fmt.Fprintf(&b, `{"id":%d,"x":-%d}`, i, i)
		}
	}
	b.WriteString(`]}`)
	return b.String()
}

// rowwise answers, per row: "x" doubled (replacing the input column, null
// where x is missing), the city's length as text, and the size of the
// table it was given, which tells a request scored in parts from one
// scored whole. It counts its calls in calls.
func rowwise(calls *atomic.Int64, tableRows *atomic.Int64) process.ProcessFunc {
	return func(_ context.Context, in process.Input) (*process.Table, error) {
		calls.Add(1)
		tableRows.Store(int64(in.Table.Rows()))
		n := in.Table.Rows()
		x, _ := in.Table.Lookup("x")
		city, _ := in.Table.Lookup("city")
		dbl := make([]float64, n)
		size := make([]string, n)
		miss := make([]bool, n)
		for i := range n {
			dbl[i] = math.NaN()
			if v, ok := x.Number(i); ok {
				dbl[i] = 2 * v
			}
			if s, ok := city.Text(i); ok {
				size[i] = fmt.Sprint(len(s))
			} else {
				miss[i] = true
			}
		}
		return process.NewTable(n, process.NumberColumn("x", dbl, nil), process.TextColumn("len", size, miss))
	}
}

// rowWiseCounts counts the calls of newRowWiseFixture's processes, and the
// rows of the last.
type rowWiseCounts struct {
	partCalls, partRows, wholeCalls, wholeRows atomic.Int64
}

// newRowWiseFixture has two processes of the same work: "parts", which
// says RowWise, and "whole", which does not.
func newRowWiseFixture(t *testing.T) (*fixture, *rowWiseCounts) {
	c := &rowWiseCounts{}
	f := newFixture(t, scoring.Config{},
		process.ProcessInfo{Name: "parts", Process: rowwise(&c.partCalls, &c.partRows), RowWise: true},
		process.ProcessInfo{Name: "whole", Process: rowwise(&c.wholeCalls, &c.wholeRows)})
	return f, c
}

// TestHandlerScoresRowWiseInParts: a large request to a RowWise process is
// scored in parts on every processor and answered byte for byte as the
// same process answers it scored whole; a small one, or one to a process
// that does not say RowWise, is scored whole.
func TestHandlerScoresRowWiseInParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	f, c := newRowWiseFixture(t)
	for _, rows := range []int{1, 100, 2047, 2048, 10_000, 33_333} {
		body := largeBody(rows)
		c.partCalls.Store(0)
		c.wholeCalls.Store(0)
		got, want := f.post("parts", "", body), f.post("whole", "", body)
		if got.Code != http.StatusOK || want.Code != http.StatusOK {
			t.Fatalf("%d rows: status %d and %d", rows, got.Code, want.Code)
		}
		if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
			t.Fatalf("%d rows: scored in parts, the answer differs from the whole's", rows)
		}
		if c.wholeCalls.Load() != 1 || c.wholeRows.Load() != int64(rows) {
			t.Errorf("%d rows: the process without RowWise was called %d times, last with %d rows", rows, c.wholeCalls.Load(), c.wholeRows.Load())
		}
		if inParts := c.partCalls.Load() > 1; inParts != (rows >= 2048) {
			t.Errorf("%d rows: the RowWise process was called %d times", rows, c.partCalls.Load())
		}
	}
}

// TestHandlerRowWisePartFails: a part that fails, panics or answers other
// columns than the others fails the request as the process failing whole
// would, with a 500 that says no more, and the slot is freed.
func TestHandlerRowWisePartFails(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	firstRowIs := func(in process.Input, v float64) bool {
		x, _ := in.Table.Lookup("x")
		got, _ := x.Number(0)
		return got == v
	}
	procs := map[string]process.ProcessFunc{
		"fails": func(_ context.Context, in process.Input) (*process.Table, error) {
			if !firstRowIs(in, 0.25) {
				return nil, fmt.Errorf("disk on fire")
			}
			return process.NewTable(in.Table.Rows())
		},
		"panics": func(_ context.Context, in process.Input) (*process.Table, error) {
			if !firstRowIs(in, 0.25) {
				panic("out of range")
			}
			return process.NewTable(in.Table.Rows())
		},
		"renames": func(_ context.Context, in process.Input) (*process.Table, error) {
			name := "a"
			if !firstRowIs(in, 0.25) {
				name = "b"
			}
			return process.NewTable(in.Table.Rows(), process.NumberColumn(name, make([]float64, in.Table.Rows()), nil))
		},
		"short": func(_ context.Context, in process.Input) (*process.Table, error) {
			n := in.Table.Rows()
			if !firstRowIs(in, 0.25) {
				n--
			}
			return process.NewTable(n)
		},
	}
	var infos []process.ProcessInfo
	for name, p := range procs {
		infos = append(infos, process.ProcessInfo{Name: name, Process: p, RowWise: true})
	}
	f := newFixture(t, scoring.Config{}, infos...)
	body := largeBody(10_000)
	for name := range procs {
		w := f.post(name, "", body)
		if e := errorOf(t, w); e.Status != http.StatusInternalServerError || e.Message != "internal error" {
			t.Errorf("%s: %+v, want 500 internal error", name, e)
		}
	}
	for _, s := range f.h.Queues().Stats() {
		if s.Running != 0 || s.Failed != uint64(len(procs)) {
			t.Errorf("queue %s: %+v; want nothing running and every request failed", s.Name, s)
		}
	}
}

// TestJobRowWiseInParts: a job of a large input to a RowWise process is
// scored in parts, and stores the answer the scoring handler gives and
// the process gives scored whole.
func TestJobRowWiseInParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	f, c := newRowWiseFixture(t)
	store := jobs.NewMemStore(registry.StoreOptions{})
	js, err := scoring.NewJobs(scoring.JobsConfig{Registry: f.reg, Queues: f.h.Queues(), Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		js.Close()
		store.Close()
	})
	ctx := context.Background()
	body := largeBody(10_000)
	result := func(process string) []byte {
		req, err := scoring.Decode(strings.NewReader(body), js.Limits())
		if err != nil {
			t.Fatal(err)
		}
		j, err := js.Submit(ctx, scoring.JobSpec{Caller: asAdmin, Process: process, Input: req})
		if err != nil {
			t.Fatal(err)
		}
		testutil.Poll(15*time.Second, func() bool {
			j, err = js.Job(ctx, asAdmin, j.ID)
			return err != nil || j.State.Final()
		})
		if err != nil || j.State != jobs.StateFinished {
			t.Fatalf("%s: job %+v, %v; want it FINISHED", process, j, err)
		}
		res, err := js.Result(ctx, asAdmin, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	parts, whole := result("parts"), result("whole")
	if c.partCalls.Load() < 2 {
		t.Errorf("the RowWise process was called %d times for 10,000 rows", c.partCalls.Load())
	}
	if !bytes.Equal(parts, whole) {
		t.Error("scored in parts, the job's result differs from the whole's")
	}
	if w := f.post("parts", "", body); !bytes.Equal(parts, w.Body.Bytes()) {
		t.Error("the job's result differs from the handler's answer")
	}
}
