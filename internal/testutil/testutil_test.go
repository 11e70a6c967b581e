package testutil_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/testutil"
)

func TestLockedBufferTakesConcurrentWrites(t *testing.T) {
	var b testutil.LockedBuffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				fmt.Fprintf(&b, "%d", i%2)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := len(b.Bytes()); n != 800 {
		t.Errorf("%d bytes written, want 800", n)
	}
}

func TestDecodeList(t *testing.T) {
	tests := []struct {
		name  string
		raw   string
		items []map[string]any
		page  *testutil.Page
		err   bool
	}{
		{name: "page", raw: `{"content":[{"name":"a"}],"totalElements":3,"totalPages":3,"number":0,"size":1}`,
			items: []map[string]any{{"name": "a"}},
			page:  &testutil.Page{Content: []map[string]any{{"name": "a"}}, TotalElements: 3, TotalPages: 3, Size: 1}},
		{name: "array", raw: ` [{"name":"DEFAULT"}]`, items: []map[string]any{{"name": "DEFAULT"}}},
		{name: "neither", raw: `"x"`, err: true},
		{name: "a page of another shape", raw: `{"content":3}`, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, page, err := testutil.DecodeList([]byte(tt.raw))
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want an error %v", err, tt.err)
			}
			if d := cmp.Diff(tt.items, items); d != "" {
				t.Errorf("items (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.page, page); d != "" {
				t.Errorf("page (-want +got):\n%s", d)
			}
		})
	}
}

func TestClockMovesOnlyWhenAdvanced(t *testing.T) {
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	c := testutil.NewClock(start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now = %v, want %v", got, start)
	}
	if got := c.Advance(time.Minute); !got.Equal(start.Add(time.Minute)) || !c.Now().Equal(got) {
		t.Errorf("Advance = %v and Now = %v, want both %v", got, c.Now(), start.Add(time.Minute))
	}
}
