// Package payloadstest is the conformance suite of [payloads.Store]: the
// memory, file and PostgreSQL stores pass the same tests, so that the
// payload route pages through the same records whichever keeps them.
package payloadstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry/payloads"
	"github.com/scorehub/scorehub/registry/process"
)

// Opener returns a new, empty store bounded by opts. Closing it at the end
// of the test (t.Cleanup) is the opener's to arrange; a test may close it
// first.
type Opener = func(t *testing.T, opts payloads.Options) payloads.Store

// epoch is the suite's clock at the start of each test: whole seconds,
// which every store keeps exactly.
var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

var (
	churn = process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "live"}
	other = process.EndpointRef{Group: "DEFAULT", Path: "churn", Alias: "test"}
)

// Run runs the conformance suite on the stores open returns. A durable
// store's test runs it as well on a store that every Page opens afresh,
// so that what a store returns is what it would after a restart.
func Run(t *testing.T, open Opener) {
	ctx := context.Background()
	// start opens a store on a clock of its own, at epoch.
	start := func(t *testing.T, opts payloads.Options) (payloads.Store, *testutil.Clock) {
		t.Helper()
		clock := testutil.NewClock(epoch)
		opts.Now = clock.Now
		return open(t, opts), clock
	}

	t.Run("records come back as they were given, numbered in order", func(t *testing.T) {
		s, _ := start(t, payloads.Options{})
		given := []payloads.Record{
			{Endpoint: churn, Model: "churn@3", At: epoch.Add(-time.Minute), Row: json.RawMessage(` { "id" : 12345678901234567890, "age": 1.50, "plan": "<gold> & \"more\"", "prediction(churn)": "yes" } `)},
			{Endpoint: other, At: epoch, Row: json.RawMessage(`{"z":null,"a":[1,{"b":true}],"é":"\u00e9\u0000"}`)},
			{Seq: 9999, Endpoint: churn, Model: "churn@4", At: epoch.In(time.FixedZone("CET", 3600)), Row: json.RawMessage(`{}`)},
		}
		mustAppend(t, s, given...)
		gotChurn := pageAll(t, s, churn, 2)
		gotOther := pageAll(t, s, other, 2)
		if len(gotChurn) != 2 || len(gotOther) != 1 {
			t.Fatalf("%d records of churn and %d of other, want 2 and 1", len(gotChurn), len(gotOther))
		}
		seqs := []int64{gotChurn[0].Seq, gotOther[0].Seq, gotChurn[1].Seq}
		if seqs[0] < 1 || !slices.IsSorted(seqs) || seqs[0] == seqs[1] || seqs[1] == seqs[2] || seqs[2] == 9999 {
			t.Errorf("seqs %v in append order, want them positive and ascending, the given one ignored", seqs)
		}
		want := []payloads.Record{
			{Seq: seqs[0], Endpoint: churn, Model: "churn@3", At: epoch.Add(-time.Minute), Row: json.RawMessage(`{"id":12345678901234567890,"age":1.50,"plan":"<gold> & \"more\"","prediction(churn)":"yes"}`)},
			{Seq: seqs[2], Endpoint: churn, Model: "churn@4", At: epoch, Row: json.RawMessage(`{}`)},
		}
		checkRecords(t, gotChurn, want)
		checkRecords(t, gotOther, []payloads.Record{
			{Seq: seqs[1], Endpoint: other, At: epoch, Row: json.RawMessage(`{"z":null,"a":[1,{"b":true}],"é":"\u00e9\u0000"}`)},
		})
		// A later batch numbers on after the first.
		mustAppend(t, s, row(churn, epoch, 4))
		if got := pageAll(t, s, churn, 10); len(got) != 3 || got[2].Seq <= seqs[2] {
			t.Errorf("a later append got seq %v, want one after %d", seqOf(got), seqs[2])
		}
	})

	t.Run("pages follow the cursor, oldest first, with the more flag", func(t *testing.T) {
		s, _ := start(t, payloads.Options{})
		for i := range 25 {
			mustAppend(t, s, row(churn, epoch, i))
		}
		var after int64
		for _, want := range []struct {
			n    int
			more bool
		}{{10, true}, {10, true}, {5, false}} {
			got, more := mustPage(t, s, churn, after, 10)
			if len(got) != want.n || more != want.more {
				t.Fatalf("page after %d: %d records, more %v; want %d, %v", after, len(got), more, want.n, want.more)
			}
			for i, r := range got {
				if r.Seq <= after || (i > 0 && r.Seq <= got[i-1].Seq) {
					t.Fatalf("page after %d: seqs %v, want them ascending after the cursor", after, seqOf(got))
				}
			}
			after = got[len(got)-1].Seq
		}
		if got, more := mustPage(t, s, churn, after, 10); len(got) != 0 || more {
			t.Errorf("page after the last record: %d records, more %v; want none", len(got), more)
		}
		all := pageAll(t, s, churn, payloads.MaxPage)
		for i, r := range all {
			if n := rowNumber(t, r); n != i {
				t.Fatalf("record %d holds row %d, want the rows in append order", i, n)
			}
		}
		// A page a full page long says no more follow.
		if got, more := mustPage(t, s, churn, all[4].Seq, 20); len(got) != 20 || more {
			t.Errorf("page of the last 20 with limit 20: %d records, more %v; want 20, false", len(got), more)
		}
		if got, more := mustPage(t, s, churn, all[4].Seq, 1); len(got) != 1 || got[0].Seq != all[5].Seq || !more {
			t.Errorf("page of 1 after the fifth: %v, more %v; want the sixth, more", seqOf(got), more)
		}
		for _, limit := range []int{0, -1, payloads.MaxPage + 1} {
			if _, _, err := s.Page(ctx, churn, 0, limit); !errors.Is(err, payloads.ErrInvalid) {
				t.Errorf("Page with limit %d: %v, want ErrInvalid", limit, err)
			}
		}
	})

	t.Run("endpoints are paged apart", func(t *testing.T) {
		s, _ := start(t, payloads.Options{})
		for i := range 12 {
			ep := churn
			if i%3 == 0 {
				ep = other
			}
			mustAppend(t, s, row(ep, epoch, i))
		}
		var churnRows, otherRows []int
		for _, r := range pageAll(t, s, churn, 3) {
			churnRows = append(churnRows, rowNumber(t, r))
		}
		for _, r := range pageAll(t, s, other, 3) {
			otherRows = append(otherRows, rowNumber(t, r))
		}
		if diff := cmp.Diff([]int{1, 2, 4, 5, 7, 8, 10, 11}, churnRows); diff != "" {
			t.Errorf("churn's rows (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int{0, 3, 6, 9}, otherRows); diff != "" {
			t.Errorf("other's rows (-want +got):\n%s", diff)
		}
		never := process.EndpointRef{Group: "DEFAULT", Path: "never", Alias: "scored"}
		if got, more := mustPage(t, s, never, 0, 10); len(got) != 0 || more {
			t.Errorf("an endpoint never appended to: %d records, more %v", len(got), more)
		}
	})

	t.Run("a batch with a record no store keeps is refused whole", func(t *testing.T) {
		good := row(churn, epoch, 1)
		bad := map[string]payloads.Record{
			"no endpoint":           {At: epoch, Row: json.RawMessage(`{"a":1}`)},
			"no alias":              {Endpoint: process.EndpointRef{Group: "DEFAULT", Path: "churn"}, At: epoch, Row: json.RawMessage(`{"a":1}`)},
			"no row":                {Endpoint: churn, At: epoch},
			"an array":              {Endpoint: churn, At: epoch, Row: json.RawMessage(`[{"a":1}]`)},
			"a string":              {Endpoint: churn, At: epoch, Row: json.RawMessage(`"a"`)},
			"null":                  {Endpoint: churn, At: epoch, Row: json.RawMessage(`null`)},
			"two objects":           {Endpoint: churn, At: epoch, Row: json.RawMessage(`{"a":1}{"b":2}`)},
			"trailing garbage":      {Endpoint: churn, At: epoch, Row: json.RawMessage(`{"a":1} x`)},
			"a trailing comma":      {Endpoint: churn, At: epoch, Row: json.RawMessage(`{"a":1,}`)},
			"NaN":                   {Endpoint: churn, At: epoch, Row: json.RawMessage(`{"a":NaN}`)},
			"a name twice":          {Endpoint: churn, At: epoch, Row: json.RawMessage(`{"a":1,"a":2}`)},
			"invalid UTF-8":         {Endpoint: churn, At: epoch, Row: json.RawMessage("{\"a\":\"\xff\"}")},
			"a lone surrogate":      {Endpoint: churn, At: epoch, Row: json.RawMessage(`{"a":"\ud800"}`)},
			"a NUL byte in a model": {Endpoint: churn, Model: "churn\x00", At: epoch, Row: json.RawMessage(`{"a":1}`)},
			"a time past year 9999": {Endpoint: churn, At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Row: json.RawMessage(`{"a":1}`)},
			"more than MaxBytes":    {Endpoint: churn, At: epoch, Row: json.RawMessage(`{"a":"` + strings.Repeat("a", 600) + `"}`)},
		}
		for name, r := range bad {
			t.Run(name, func(t *testing.T) {
				s, _ := start(t, payloads.Options{MaxBytes: 512})
				if err := s.Append(ctx, []payloads.Record{good, r}); !errors.Is(err, payloads.ErrInvalid) {
					t.Fatalf("Append: %v, want ErrInvalid", err)
				}
				if got := pageAll(t, s, churn, 10); len(got) != 0 {
					t.Errorf("the refused batch stored %d records", len(got))
				}
				mustAppend(t, s, good)
				if got := pageAll(t, s, churn, 10); len(got) != 1 {
					t.Errorf("the good record alone: %d records stored, want 1", len(got))
				}
			})
		}
	})

	t.Run("a record longer than MaxRecordBytes is refused", func(t *testing.T) {
		s, _ := start(t, payloads.Options{})
		long := payloads.Record{Endpoint: churn, At: epoch, Row: json.RawMessage(`{"a":"` + strings.Repeat("a", payloads.MaxRecordBytes) + `"}`)}
		if err := s.Append(ctx, []payloads.Record{long}); !errors.Is(err, payloads.ErrInvalid) {
			t.Errorf("Append: %v, want ErrInvalid", err)
		}
		if got := pageAll(t, s, churn, 10); len(got) != 0 {
			t.Errorf("the refused record was stored")
		}
	})

	t.Run("an empty batch changes nothing", func(t *testing.T) {
		s, _ := start(t, payloads.Options{})
		if err := s.Append(ctx, nil); err != nil {
			t.Errorf("Append of no records: %v", err)
		}
		if err := s.Append(ctx, []payloads.Record{}); err != nil {
			t.Errorf("Append of an empty slice: %v", err)
		}
		if got := pageAll(t, s, churn, 10); len(got) != 0 {
			t.Errorf("%d records after empty appends", len(got))
		}
	})

	t.Run("a canceled call changes nothing", func(t *testing.T) {
		s, _ := start(t, payloads.Options{})
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.Append(canceled, []payloads.Record{row(churn, epoch, 0)}); !errors.Is(err, context.Canceled) {
			t.Errorf("Append with a canceled context: %v, want context.Canceled", err)
		}
		if _, _, err := s.Page(canceled, churn, 0, 10); !errors.Is(err, context.Canceled) {
			t.Errorf("Page with a canceled context: %v, want context.Canceled", err)
		}
		if got := pageAll(t, s, churn, 10); len(got) != 0 {
			t.Errorf("%d records after a canceled Append", len(got))
		}
	})

	t.Run("a store keeps its own copy", func(t *testing.T) {
		s, _ := start(t, payloads.Options{})
		r := row(churn, epoch, 7)
		given := slices.Clone(r.Row)
		r.Row = given
		mustAppend(t, s, r)
		given[2] = 'X'
		got := pageAll(t, s, churn, 10)
		if len(got) != 1 || rowNumber(t, got[0]) != 7 {
			t.Fatalf("changing the appended row changed the stored one: %v", got)
		}
		got[0].Row[2] = 'Y'
		if again := pageAll(t, s, churn, 10); len(again) != 1 || rowNumber(t, again[0]) != 7 {
			t.Errorf("changing a returned row changed the stored one: %v", again)
		}
	})

	t.Run("retention hides and drops records past it", func(t *testing.T) {
		s, clock := start(t, payloads.Options{Retention: time.Hour})
		mustAppend(t, s, row(churn, epoch, 0), row(other, epoch, 1))
		mid := clock.Advance(30 * time.Minute)
		mustAppend(t, s, row(churn, mid, 2))
		// Scored long ago: past the retention as it is appended.
		mustAppend(t, s, row(churn, epoch.Add(-2*time.Hour), 3))
		checkRows(t, s, churn, 0, 2)

		// Past the retention of the first two, not of the third. A
		// store that prunes in bulk does on an Append a PruneInterval on.
		now := clock.Advance(30*time.Minute + payloads.PruneInterval)
		checkRows(t, s, churn, 2)
		checkRows(t, s, other)
		mustAppend(t, s, row(churn, now, 4))
		checkRows(t, s, churn, 2, 4)
		checkRows(t, s, other)
		// The cursor of a record that left still pages on.
		if got, more := mustPage(t, s, churn, 0, 1); len(got) != 1 || rowNumber(t, got[0]) != 2 || !more {
			t.Errorf("first page of one: %v, more %v; want row 2, more", got, more)
		}

		now = clock.Advance(time.Hour + payloads.PruneInterval)
		mustAppend(t, s, row(other, now, 5))
		checkRows(t, s, churn)
		checkRows(t, s, other, 5)
	})

	t.Run("the byte bound drops the oldest first", func(t *testing.T) {
		const maxBytes = 4096
		s, clock := start(t, payloads.Options{MaxBytes: maxBytes})
		const n = 300
		for i := range n {
			ep := churn
			if i%4 == 0 {
				ep = other
			}
			mustAppend(t, s, row(ep, clock.Now(), i))
			clock.Advance(time.Second)
		}
		// A store that prunes in bulk does on an Append a PruneInterval on.
		clock.Advance(payloads.PruneInterval)
		mustAppend(t, s, row(churn, clock.Now(), n))
		held := append(pageAll(t, s, churn, 7), pageAll(t, s, other, 7)...)
		slices.SortFunc(held, func(a, b payloads.Record) int { return int(a.Seq - b.Seq) })
		var bytes int
		for i, r := range held {
			if want := n + 1 - len(held) + i; rowNumber(t, r) != want {
				t.Fatalf("held rows %v…, want the newest %d in order", rowNumbers(t, held), len(held))
			}
			bytes += lineSize(t, r)
		}
		// The PostgreSQL store counts a record's seq as the digits it
		// expects; the others exactly.
		if bytes > maxBytes+len(held)*20 || bytes < maxBytes/2 {
			t.Errorf("the store holds %d records of %d bytes, want at most %d and at least half of it", len(held), bytes, maxBytes)
		}
	})

	t.Run("concurrent appends and pages", func(t *testing.T) {
		s, _ := start(t, payloads.Options{})
		const writers, batches = 6, 30
		var wg sync.WaitGroup
		stop := make(chan struct{})
		var readers sync.WaitGroup
		for range 2 {
			readers.Go(func() {
				var after int64
				for {
					select {
					case <-stop:
						return
					default:
					}
					got, _, err := s.Page(ctx, churn, after, 50)
					if err != nil {
						t.Error(err)
						return
					}
					for _, r := range got {
						if r.Seq <= after {
							t.Errorf("a page after %d returned seq %d", after, r.Seq)
							return
						}
						after = r.Seq
					}
				}
			})
		}
		for w := range writers {
			wg.Go(func() {
				for b := range batches {
					i := (w*batches + b) * 2
					if err := s.Append(ctx, []payloads.Record{row(churn, epoch, i), row(churn, epoch, i+1)}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		readers.Wait()
		held := pageAll(t, s, churn, payloads.MaxPage)
		if len(held) != writers*batches*2 {
			t.Fatalf("%d records held, want %d", len(held), writers*batches*2)
		}
		// Each writer's rows are in the order it appended them.
		last := map[int]int{}
		for _, r := range held {
			i := rowNumber(t, r)
			w := i / (batches * 2)
			if prev, ok := last[w]; ok && i <= prev {
				t.Fatalf("writer %d's row %d follows its row %d", w, i, prev)
			}
			last[w] = i
		}
	})

	t.Run("a closed store fails with ErrClosed", func(t *testing.T) {
		s, _ := start(t, payloads.Options{})
		mustAppend(t, s, row(churn, epoch, 0))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, []payloads.Record{row(churn, epoch, 1)}); !errors.Is(err, payloads.ErrClosed) {
			t.Errorf("Append after Close: %v, want ErrClosed", err)
		}
		if _, _, err := s.Page(ctx, churn, 0, 10); !errors.Is(err, payloads.ErrClosed) {
			t.Errorf("Page after Close: %v, want ErrClosed", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// row is the record of row number i of ep, scored at at.
func row(ep process.EndpointRef, at time.Time, i int) payloads.Record {
	return payloads.Record{Endpoint: ep, Model: "churn@3", At: at,
		Row: json.RawMessage(fmt.Sprintf(`{"n":%d,"plan":"gold","prediction(churn)":"yes","confidence(yes)":0.75}`, i))}
}

// rowNumber is the number of the row r holds.
func rowNumber(t *testing.T, r payloads.Record) int {
	t.Helper()
	var v struct{ N *int }
	if err := json.Unmarshal(r.Row, &v); err != nil || v.N == nil {
		t.Fatalf("record %d holds %s, not a row of this suite", r.Seq, r.Row)
	}
	return *v.N
}

func rowNumbers(t *testing.T, rs []payloads.Record) []int {
	t.Helper()
	ns := make([]int, len(rs))
	for i, r := range rs {
		ns[i] = rowNumber(t, r)
	}
	return ns
}

func seqOf(rs []payloads.Record) []int64 {
	seqs := make([]int64, len(rs))
	for i, r := range rs {
		seqs[i] = r.Seq
	}
	return seqs
}

// lineSize is the length of r's JSON line, as the bounds count it.
func lineSize(t *testing.T, r payloads.Record) int {
	t.Helper()
	lines, err := payloads.Prepare([]payloads.Record{r}, payloads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return int(lines[0].Size(r.Seq))
}

func mustAppend(t *testing.T, s payloads.Store, rs ...payloads.Record) {
	t.Helper()
	if err := s.Append(context.Background(), rs); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

func mustPage(t *testing.T, s payloads.Store, ep process.EndpointRef, after int64, limit int) ([]payloads.Record, bool) {
	t.Helper()
	got, more, err := s.Page(context.Background(), ep, after, limit)
	if err != nil {
		t.Fatalf("Page(%s, after %d, limit %d): %v", ep.Alias, after, limit, err)
	}
	if len(got) > limit {
		t.Fatalf("Page(%s, after %d, limit %d) returned %d records", ep.Alias, after, limit, len(got))
	}
	return got, more
}

// pageAll pages through ep's records, limit at a time, as an export does.
func pageAll(t *testing.T, s payloads.Store, ep process.EndpointRef, limit int) []payloads.Record {
	t.Helper()
	var all []payloads.Record
	var after int64
	for {
		got, more := mustPage(t, s, ep, after, limit)
		all = append(all, got...)
		if !more {
			return all
		}
		if len(got) == 0 {
			t.Fatalf("Page(%s, after %d) returned no records and more", ep.Alias, after)
		}
		after = got[len(got)-1].Seq
	}
}

// checkRows checks that ep's records hold the rows numbered want, in order.
func checkRows(t *testing.T, s payloads.Store, ep process.EndpointRef, want ...int) {
	t.Helper()
	got := rowNumbers(t, pageAll(t, s, ep, 10))
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("rows of %s (-want +got):\n%s", ep.Alias, diff)
	}
}

func checkRecords(t *testing.T, got, want []payloads.Record) {
	t.Helper()
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}
