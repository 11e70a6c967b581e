package scoring_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// TestHandlerWorkersOutliveFailures checks that the goroutines executions
// run on are not spoiled by what ran on them before: after a process
// panicked and while another one, stuck past its deadline, still holds a
// worker, requests in a row and at once are answered with their own
// results.
func TestHandlerWorkersOutliveFailures(t *testing.T) {
	release := make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	procs := []process.ProcessInfo{
		{Name: "panics", Process: process.ProcessFunc(func(context.Context, process.Input) (*process.Table, error) {
			panic("boom")
		})},
		{Name: "stuck", Process: process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
			<-release
			return process.NewTable(in.Table.Rows())
		})},
		{Name: "double", Process: process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
			c, _ := in.Table.Lookup("a")
			out := make([]float64, in.Table.Rows())
			for i := range out {
				out[i] = 2 * c.Numbers[i]
			}
			return process.NewTable(len(out), process.NumberColumn("b", out, nil))
		})},
	}
	f := newFixture(t, scoring.Config{DefaultTimeout: 2 * time.Second}, procs...)
	f.putQueue(t, registry.Queue{Name: registry.DefaultQueue, MaxConcurrent: 8, MaxWaiting: 64})
	waitFor(t, "the queue to allow 8 executions", func() bool {
		st, _ := f.h.Queues().Stat(registry.DefaultQueue)
		return st.MaxConcurrent == 8
	})

	if got := errorOf(t, f.post("panics", "", `{"data":[{"a":1}]}`)); got.Status != 500 {
		t.Fatalf("panicking process: %+v, want 500", got)
	}
	stuck := make(chan int, 1)
	go func() { stuck <- f.post("stuck", "", `{"data":[{"a":1}]}`).Code }()
	waitFor(t, "the stuck process to hold its slot", func() bool {
		st, _ := f.h.Queues().Stat(registry.DefaultQueue)
		return st.Running == 1
	})

	check := func(t *testing.T, n int) {
		t.Helper()
		body := `{"data":[{"a":` + strconv.Itoa(n) + `}]}`
		want := `{"data":[{"a":` + strconv.Itoa(n) + `,"b":` + strconv.Itoa(2*n) + `}]}`
		w := f.post("double", "", body)
		if w.Code != 200 || strings.TrimSpace(w.Body.String()) != want {
			t.Errorf("request %d: %d %s, want 200 %s", n, w.Code, w.Body, want)
		}
	}
	for n := range 50 {
		check(t, n)
	}
	var wg sync.WaitGroup
	for n := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			check(t, 100+n)
		}()
	}
	wg.Wait()

	close(release)
	if code := <-stuck; code != 200 {
		t.Errorf("the stuck process, released within its deadline, answered %d", code)
	}
	st, _ := f.h.Queues().Stat(registry.DefaultQueue)
	if st.Completed != 71 || st.Failed != 1 || st.Running != 0 {
		t.Errorf("queue figures %+v, want 71 completed, 1 failed, none running", st)
	}
}
