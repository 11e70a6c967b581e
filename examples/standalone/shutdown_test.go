package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/registry"
)

// sleeper is a process that sleeps for its macro ms, or until its context
// ends, and says on started each time it begins.
func sleeper(started chan<- struct{}) registry.ProcessInfo {
	return registry.ProcessInfo{Name: "sleep", Process: registry.ProcessFunc(func(ctx context.Context, in registry.Input) (*registry.Table, error) {
		ms, err := strconv.Atoi(in.Macros["ms"])
		if err != nil {
			return nil, err
		}
		started <- struct{}{}
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return registry.NewTable(in.Table.Rows(), registry.NumberColumn("slept", make([]float64, in.Table.Rows()), nil))
	})}
}

// TestShutdownDrainsRequestsAndStopsLongJobs starts the server, sends slow
// scoring requests and two jobs, and stops it: the requests are answered
// 200, the job that fits in the grace period finishes, the one that does
// not is STOPPED, and run returns nil.
func TestShutdownDrainsRequestsAndStopsLongJobs(t *testing.T) {
	dir := t.TempDir()
	started := make(chan struct{}, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	env := map[string]string{"SCOREHUB_ADMIN_PASSWORD": testAdminPassword}
	go func() {
		done <- runWith(ctx, []string{"-addr", "127.0.0.1:0", "-data", dir, "-grace", "3s"},
			func(k string) string { return env[k] }, io.Discard, io.Discard, func(a string) { addr <- a }, []registry.ProcessInfo{sleeper(started)})
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("server stopped before listening: %v", err)
	}
	tok := adminToken(t, base)
	if status, got := api(t, base, tok, "POST", "/api/v1/deployments", "application/json",
		`{"group":"DEFAULT","path":"slow","enabled":true,"endpoints":[{"alias":"sleep","process":"sleep","timeoutMs":600000}]}`); status != 201 {
		t.Fatalf("deploy: %d %v", status, got)
	}

	const requests = 3
	answers := make(chan int, requests)
	for range requests {
		go func() {
			res, err := http.Post(base+"/webapi/DEFAULT/api/v1/services/slow/sleep?ms=300", "application/json", strings.NewReader(`{"data":[{"a":1}]}`))
			if err != nil {
				answers <- 0
				return
			}
			res.Body.Close()
			answers <- res.StatusCode
		}()
	}
	submit := func(ms string) string {
		status, got := api(t, base, tok, "POST", "/executions/jobs", "application/json",
			`{"process":"sleep","macros":{"ms":"`+ms+`"},"data":[{"a":1}]}`)
		id, _ := got["id"].(string)
		if status != 201 || id == "" {
			t.Fatalf("submit: %d %v", status, got)
		}
		return id
	}
	short, long := submit("300"), submit("600000")
	for range requests + 2 {
		<-started // every request and job is running
	}

	cancel()
	for range requests {
		if status := <-answers; status != http.StatusOK {
			t.Errorf("a request in flight at shutdown was answered %d, want 200", status)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("run returned %v, want nil", err)
	}

	store, err := registry.OpenFileJobStore(filepath.Join(dir, "jobs"), registry.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, want := range []struct {
		id    string
		state registry.JobState
	}{{short, registry.JobFinished}, {long, registry.JobStopped}} {
		j, err := store.Job(context.Background(), want.id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != want.state {
			t.Errorf("job %s ended %s (%+v), want %s", want.id, j.State, j.Error, want.state)
		}
	}
}

// A restart ends the jobs the last run did not as ERROR interrupted.
func TestRestartEndsInterruptedJobs(t *testing.T) {
	dir := t.TempDir()
	store, err := registry.OpenFileJobStore(filepath.Join(dir, "jobs"), registry.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateJob(context.Background(), registry.Job{ID: "left-running", State: registry.JobPending, Queue: "DEFAULT", Process: "iris", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	store.Close() // as a crash would leave it: PENDING

	base, stop := startServer(t, dir)
	defer stop()
	status, got := api(t, base, adminToken(t, base), "GET", "/executions/jobs/left-running", "", "")
	jerr, _ := got["error"].(map[string]any)
	if status != 200 || got["state"] != "ERROR" || jerr["type"] != "interrupted" {
		t.Errorf("interrupted job after restart: %d %v", status, got)
	}
}
