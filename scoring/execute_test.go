package scoring_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// TestHandlerClientLeavesWhileQueued: a client that disconnects while its
// request waits for a slot leaves the queue at once, counted as cancelled,
// and its process never runs; the endpoint's timeout (an hour) plays no
// part.
func TestHandlerClientLeavesWhileQueued(t *testing.T) {
	b := newBlocker()
	f := newFixture(t, scoring.Config{DefaultTimeout: time.Hour}, process.ProcessInfo{Name: "block", Process: b})
	f.putQueue(t, registry.Queue{Name: "one", MaxConcurrent: 1, MaxWaiting: 4})
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "demo", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "block", Process: "block", Queue: "one"}}})
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	release := sync.OnceFunc(func() { close(b.release) })
	t.Cleanup(release) // first, so that a failing test does not wait for the blocked requests

	first := make(chan int, 1)
	go func() { first <- f.post("block", "", `{"data":[{"a":1}]}`).Code }()
	<-b.started

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/DEFAULT/api/v1/services/demo/block", strings.NewReader(`{"data":[{"a":2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	done := make(chan error, 1)
	go func() {
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	waitFor(t, "the second request to wait", func() bool {
		st, _ := f.h.Queues().Stat("one")
		return st.Waiting == 1
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v", err)
	}
	waitFor(t, "the waiting request to leave the queue", func() bool {
		st, _ := f.h.Queues().Stat("one")
		return st.Waiting == 0 && st.Cancelled == 1
	})
	release()
	if code := <-first; code != http.StatusOK {
		t.Errorf("the running request got %d", code)
	}
	if n := len(b.started); n != 0 {
		t.Errorf("%d more process runs, want none for the request that left", n)
	}
}

// TestHandlerRequestDeadline: a deadline the host put on the request's
// context, earlier than the endpoint's timeout, bounds the execution: the
// process sees it, the client gets 504 and the queue counts a timeout.
func TestHandlerRequestDeadline(t *testing.T) {
	for _, prompt := range []bool{false, true} {
		t.Run(fmt.Sprintf("prompt=%v", prompt), func(t *testing.T) { testRequestDeadline(t, prompt) })
	}
}

func testRequestDeadline(t *testing.T, prompt bool) {
	seen := make(chan time.Time, 1)
	stop := make(chan struct{}) // ends the process should the deadline not
	p := process.ProcessFunc(func(ctx context.Context, _ process.Input) (*process.Table, error) {
		d, _ := ctx.Deadline()
		seen <- d
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-stop:
			return nil, errors.New("stopped by the test")
		}
	})
	f := newFixture(t, scoring.Config{DefaultTimeout: time.Hour}, process.ProcessInfo{Name: "wait", Process: p, Prompt: prompt})
	deadline := time.Now().Add(50 * time.Millisecond)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		defer cancel()
		f.h.ServeHTTP(w, r.WithContext(ctx))
	})
	answer := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		answer <- serve(h, http.MethodPost, "/DEFAULT/api/v1/services/demo/wait", "application/json", `{"data":[{"a":1}]}`)
	}()
	if d := <-seen; !d.Equal(deadline) {
		close(stop)
		<-answer
		t.Fatalf("the process saw the deadline %v, want the request's %v", d, deadline)
	}
	if got := errorOf(t, <-answer); got.Status != http.StatusGatewayTimeout || got.Type != "timeout" {
		t.Errorf("answer %+v, want 504 timeout", got)
	}
	waitFor(t, "the execution to be counted", func() bool {
		st, _ := f.h.Queues().Stat(registry.DefaultQueue)
		return st.TimedOut == 1 && st.Running == 0
	})
}
