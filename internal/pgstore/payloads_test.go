package pgstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry/payloads"
	"github.com/scorehub/scorehub/registry/payloads/payloadstest"
)

func TestPayloadsConformance(t *testing.T) {
	payloadstest.Run(t, func(t *testing.T, opts payloads.Options) payloads.Store {
		s := open(t, pgstore.Config{URL: pgtest.DB(t)}).Payloads(opts)
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func payloadRecord(n int, at time.Time) payloads.Record {
	return payloads.Record{Endpoint: logRef, Model: "churn@3", At: at,
		Row: json.RawMessage(fmt.Sprintf(`{"n":%d,"plan":"gold","prediction(churn)":"yes"}`, n))}
}

// payloadRows pages through logRef's records and returns their row
// numbers.
func payloadRows(t *testing.T, s payloads.Store) []int {
	t.Helper()
	var rows []int
	var after int64
	for {
		rs, more, err := s.Page(context.Background(), logRef, after, payloads.MaxPage)
		if err != nil {
			t.Fatalf("Page: %v", err)
		}
		for _, r := range rs {
			var v struct{ N int }
			if err := json.Unmarshal(r.Row, &v); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, v.N)
			after = r.Seq
		}
		if !more {
			return rows
		}
	}
}

// TestPayloadsShared runs two DBs on one database, as two replicas do:
// both append at once while a reader pages through one of them by its
// cursor, as an export does. The reader misses no record, though records
// of the other replica commit meanwhile: records commit in seq order.
func TestPayloadsShared(t *testing.T) {
	ctx := context.Background()
	url := pgstore.Config{URL: pgtest.DB(t)}
	a := open(t, url).Payloads(payloads.Options{})
	b := open(t, url).Payloads(payloads.Options{})
	const writers, batches, batch = 4, 25, 8
	var wg sync.WaitGroup
	for w := range writers {
		s := []payloads.Store{a, b}[w%2]
		wg.Go(func() {
			for i := range batches {
				var rs []payloads.Record
				for k := range batch {
					rs = append(rs, payloadRecord((w*batches+i)*batch+k, time.Now()))
				}
				if err := s.Append(ctx, rs); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var seen []int
	var after int64
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		rs, more, err := a.Page(ctx, logRef, after, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			var v struct{ N int }
			if err := json.Unmarshal(r.Row, &v); err != nil {
				t.Fatal(err)
			}
			seen = append(seen, v.N)
			after = r.Seq
		}
		// Once the writers are done, a page that says no more ends it.
		if finished && !more {
			break
		}
	}
	slices.Sort(seen)
	want := make([]int, writers*batches*batch)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(seen, want) {
		t.Errorf("the reader paging alongside the writers saw %d records, want each of the %d once", len(seen), len(want))
	}
	if got := payloadRows(t, b); len(got) != writers*batches*batch {
		t.Errorf("the other replica pages %d records, want %d", len(got), writers*batches*batch)
	}
}

// TestPayloadsBulk appends and prunes more than one round trip or
// statement of the store handles at once, and checks the bounds on the
// table itself.
func TestPayloadsBulk(t *testing.T) {
	url := pgtest.DB(t)
	clock := testutil.NewClock(logEpoch)
	const maxBytes = 64 << 10
	s := open(t, pgstore.Config{URL: url}).Payloads(payloads.Options{MaxBytes: maxBytes, Retention: time.Hour, Now: clock.Now})
	rs := make([]payloads.Record, 2500)
	for i := range rs {
		rs[i] = payloadRecord(i, logEpoch)
	}
	// The first Append applies the bounds: the newest 64 KiB stay.
	mustPayloadAppend(t, s, rs...)
	rows := payloadRows(t, s)
	total := query[int64](t, url, "SELECT sum(bytes) FROM payload_records")
	if total > maxBytes || total < maxBytes-200 || len(rows) == 0 || rows[len(rows)-1] != 2499 || rows[0] != 2500-len(rows) {
		t.Errorf("after the prune: %d records, rows %d to %d, of %d bytes; want the newest, of just under %d bytes",
			len(rows), rows[0], rows[len(rows)-1], total, maxBytes)
	}
	// The sizes counted are the lines' the file store writes.
	var lines int64
	var after int64
	for {
		page, more, err := s.Page(context.Background(), logRef, after, payloads.MaxPage)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			l, err := payloads.Prepare([]payloads.Record{r}, payloads.Options{})
			if err != nil {
				t.Fatal(err)
			}
			lines += l[0].Size(r.Seq)
			after = r.Seq
		}
		if !more {
			break
		}
	}
	if lines != total {
		t.Errorf("the rows count %d bytes, their lines take %d", total, lines)
	}

	// Past the retention, they go.
	now := clock.Advance(time.Hour + payloads.PruneInterval)
	mustPayloadAppend(t, s, payloadRecord(9999, now))
	if n := query[int](t, url, "SELECT count(*) FROM payload_records"); n != 1 {
		t.Errorf("%d rows past the retention, want the one appended after", n)
	}
	if got := payloadRows(t, s); !slices.Equal(got, []int{9999}) {
		t.Errorf("rows %v, want 9999", got)
	}
}

func mustPayloadAppend(t *testing.T, s payloads.Store, rs ...payloads.Record) {
	t.Helper()
	if err := s.Append(context.Background(), rs); err != nil {
		t.Fatalf("Append: %v", err)
	}
}
