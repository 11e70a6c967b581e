package management_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

func TestQueueLifecycle(t *testing.T) {
	f := newFixture(t)
	admin := func(method, path, body string, header map[string]string) response {
		return f.do(t, request{method: method, path: path, token: f.admin, body: body, header: header})
	}

	r := admin("PUT", "/api/v1/queues/batch", `{"maxConcurrent":2,"maxWaiting":5}`, nil)
	r.want(t, 201, "")
	if r.header.Get("ETag") != `"1"` || r.json["maxConcurrent"] != 2.0 || r.json["running"] != 0.0 {
		t.Errorf("created queue: ETag %q, body %s", r.header.Get("ETag"), r.body)
	}

	// Both list routes show the same queues, sorted.
	for _, path := range []string{"/api/v1/queues", "/executions/queues"} {
		r := f.do(t, request{method: "GET", path: path, token: f.reader})
		r.want(t, 200, "")
		var names []string
		for _, q := range r.list {
			names = append(names, q.(map[string]any)["name"].(string))
		}
		if d := cmp.Diff([]string{"DEFAULT", "batch"}, names); d != "" {
			t.Errorf("%s (-want +got):\n%s", path, d)
		}
	}

	// A round trip: what GET shows, figures and all, may go back, its
	// revision a precondition.
	r = admin("GET", "/api/v1/queues/batch", "", nil)
	r.want(t, 200, "")
	admin("PUT", "/api/v1/queues/batch", string(r.body), nil).want(t, 200, "")
	admin("PUT", "/api/v1/queues/batch", string(r.body), nil).want(t, 412, "precondition_failed")

	admin("PUT", "/api/v1/queues/batch", `{"maxConcurrent":3,"maxWaiting":5}`, map[string]string{"If-Match": `"1"`}).want(t, 412, "precondition_failed")
	r = admin("PUT", "/api/v1/queues/batch", `{"maxConcurrent":3,"maxWaiting":5}`, map[string]string{"If-Match": `"2"`})
	r.want(t, 200, "")
	if r.header.Get("ETag") != `"3"` || r.json["maxConcurrent"] != 3.0 {
		t.Errorf("changed queue: ETag %q, body %s", r.header.Get("ETag"), r.body)
	}

	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "d", Endpoints: []registry.Endpoint{{Alias: "a", Process: "double", Queue: "batch"}}})
	for path, msg := range map[string]string{
		"/api/v1/queues/batch":   `queue "batch" is used by endpoint DEFAULT/d/a`,
		"/api/v1/queues/DEFAULT": `queue "DEFAULT" is built in and cannot be deleted`,
	} {
		r := admin("DELETE", path, "", nil)
		r.want(t, 409, "in_use")
		if got := r.errorField("message"); got != msg {
			t.Errorf("DELETE %s: message %q, want %q", path, got, msg)
		}
	}
	admin("DELETE", "/api/v1/deployments/DEFAULT/d", "", nil).want(t, 204, "")
	admin("DELETE", "/api/v1/queues/batch", "", map[string]string{"If-Match": `"2"`}).want(t, 412, "precondition_failed")
	admin("DELETE", "/api/v1/queues/batch", "", map[string]string{"If-Match": `"3"`}).want(t, 204, "")
	admin("GET", "/api/v1/queues/batch", "", nil).want(t, 404, "not_found")
	admin("DELETE", "/api/v1/queues/batch", "", nil).want(t, 404, "not_found")
}

// gate is a process that holds every execution until it is opened,
// telling entered about each one first.
type gate struct {
	entered chan struct{}
	open    chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 16), open: make(chan struct{})} }

func (g *gate) info() process.ProcessInfo {
	return process.ProcessInfo{Name: "gate", Process: process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
		g.entered <- struct{}{}
		select {
		case <-g.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return process.NewTable(in.Table.Rows())
	})}
}

func TestQueueFiguresAreLive(t *testing.T) {
	g := newGate()
	f := newFixture(t, withProcess(g.info()))
	f.putQueue(t, registry.Queue{Name: "one", MaxConcurrent: 1, MaxWaiting: 0})
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "d", Enabled: true, Endpoints: []registry.Endpoint{
		{Alias: "double", Process: "double", Queue: "one"},
		{Alias: "gate", Process: "gate", Queue: "one"},
	}})
	for range 2 {
		f.score(t, "DEFAULT", "d", "double", `{"data":[{"x":1}]}`).want(t, 200, "")
	}

	var wg sync.WaitGroup
	var gated response
	wg.Add(1)
	go func() {
		defer wg.Done()
		gated = f.score(t, "DEFAULT", "d", "gate", `{"data":[{"x":1}]}`)
	}()
	<-g.entered
	f.score(t, "DEFAULT", "d", "double", `{"data":[{"x":1}]}`).want(t, 503, "queue_full")

	figures := func() map[string]any {
		r := f.do(t, request{method: "GET", path: "/api/v1/queues/one", token: f.reader})
		r.want(t, 200, "")
		out := map[string]any{}
		for _, k := range []string{"maxConcurrent", "maxWaiting", "running", "waiting", "completed", "failed", "rejected", "timedOut", "cancelled"} {
			out[k] = r.json[k]
		}
		return out
	}
	want := map[string]any{"maxConcurrent": 1.0, "maxWaiting": 0.0, "running": 1.0, "waiting": 0.0,
		"completed": 2.0, "failed": 0.0, "rejected": 1.0, "timedOut": 0.0, "cancelled": 0.0}
	if d := cmp.Diff(want, figures()); d != "" {
		t.Errorf("while one runs (-want +got):\n%s", d)
	}
	close(g.open)
	wg.Wait()
	gated.want(t, 200, "")
	want["running"], want["completed"] = 0.0, 3.0
	if d := cmp.Diff(want, figures()); d != "" {
		t.Errorf("after it finished (-want +got):\n%s", d)
	}
}
