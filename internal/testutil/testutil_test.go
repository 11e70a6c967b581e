package testutil_test

import (
	"fmt"
	"strings"
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

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	start := time.Now()
	testutil.Eventually(t, time.Minute, "third call", func() bool {
		calls++
		return calls == 3
	})
	if calls != 3 {
		t.Errorf("cond called %d times, want 3", calls)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v for a condition that held on the third look", took)
	}
}

// fatalTB records a Fatalf instead of ending the test, so that the test of
// Eventually can watch it fail.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) { f.msg = fmt.Sprintf(format, args...) }

func TestEventuallyFailsNamingWhatNeverHeld(t *testing.T) {
	fake := &fatalTB{TB: t}
	calls := 0
	testutil.Eventually(fake, 30*time.Millisecond, "the moon is blue", func() bool {
		calls++
		return false
	})
	if !strings.Contains(fake.msg, "the moon is blue") {
		t.Errorf("failure %q does not name what was waited for", fake.msg)
	}
	if calls < 2 {
		t.Errorf("cond called %d times, want it looked at again before giving up", calls)
	}
	if testutil.Poll(0, func() bool { return false }) {
		t.Error("Poll reported a condition that never held")
	}
	if !testutil.Poll(0, func() bool { return true }) {
		t.Error("Poll missed a condition that held at once")
	}
}
