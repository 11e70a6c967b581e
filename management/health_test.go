package management_test

import (
	"testing"
)

func TestHealth(t *testing.T) {
	f := newFixture(t)
	r := f.do(t, request{method: "GET", path: "/health/live"})
	r.want(t, 200, "")
	if r.json["status"] != "up" {
		t.Errorf("live: %s", r.body)
	}
	r = f.do(t, request{method: "GET", path: "/health/ready"})
	r.want(t, 200, "")
	if r.json["status"] != "ready" {
		t.Errorf("ready: %s", r.body)
	}

	if err := f.store.Close(); err != nil {
		t.Fatal(err)
	}
	f.do(t, request{method: "GET", path: "/health/ready"}).want(t, 503, "unavailable")
	f.do(t, request{method: "GET", path: "/health/live"}).want(t, 200, "")
	// A write to a closed store fails as unavailable too.
	f.do(t, request{method: "PUT", path: "/api/v1/queues/q", token: f.admin, body: `{"maxConcurrent":1,"maxWaiting":1}`}).want(t, 503, "unavailable")
}
