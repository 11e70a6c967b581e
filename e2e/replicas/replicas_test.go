package replicas

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
)

// TestWritesReachEveryReplica: a write acknowledged by any replica is
// served by the two others within a second. It measures, over 100 writes
// spread over the three, how long after the acknowledgement both others
// served it, and reports the median and the maximum.
func TestWritesReachEveryReplica(t *testing.T) {
	c := startCluster(t, 3)
	const writes = 100
	delays := make([]time.Duration, 0, writes)
	for i := range writes {
		w := c.replicas[i%3]
		name := fmt.Sprintf("q-%03d", i)
		w.must(t, http.StatusCreated, http.MethodPut, "/api/v1/queues/"+name, `{"maxConcurrent":2,"maxWaiting":4}`)
		acked := time.Now()
		var wg sync.WaitGroup
		var worst atomic.Int64
		for j, r := range c.replicas {
			if j == i%3 {
				continue
			}
			wg.Go(func() {
				for time.Since(acked) < 10*time.Second {
					if r.serves("/api/v1/queues/" + name) {
						d := int64(time.Since(acked))
						for {
							old := worst.Load()
							if d <= old || worst.CompareAndSwap(old, d) {
								break
							}
						}
						return
					}
					time.Sleep(2 * time.Millisecond)
				}
				t.Errorf("replica %s never served queue %s", r.Base, name)
			})
		}
		wg.Wait()
		delays = append(delays, time.Duration(worst.Load()))
	}
	slices.Sort(delays)
	median, maxDelay := delays[len(delays)/2], delays[len(delays)-1]
	t.Logf("propagation to both other replicas over %d writes: median %v, max %v", writes, median.Round(time.Millisecond/10), maxDelay.Round(time.Millisecond/10))
	// Every write must arrive (the 10 s wait above). The median is held to
	// the second; the maximum is reported (BENCHMARKS.md has a quiet
	// machine's), not asserted: with the race detector, three servers and
	// PostgreSQL on two cores, one scheduling stall can hold a single write
	// past a second without anything being wrong.
	if median > time.Second {
		t.Errorf("half the writes took over %v to reach every replica, want within 1s", median)
	}
}

// TestJobsAcrossReplicas: a job submitted to one replica is read through
// another and stopped through a third, which the replica running it heeds
// within a second.
func TestJobsAcrossReplicas(t *testing.T) {
	c := startCluster(t, 3)
	a, b, third := c.replicas[0], c.replicas[1], c.replicas[2]
	created := a.must(t, http.StatusCreated, http.MethodPost, "/executions/jobs",
		`{"process":"sleep","data":[{"x":1}],"macros":{"ms":"60000"}}`)
	id, _ := created.json["id"].(string)
	path := "/executions/jobs/" + id
	running := waitState(t, b, path, "RUNNING", 10*time.Second)
	if running.json["replica"] == nil || running.json["replica"] == "" {
		t.Errorf("a running job names no replica: %s", running)
	}

	stop := third.must(t, http.StatusAccepted, http.MethodPost, path+"/stop", "")
	asked := time.Now()
	if stop.json["stopRequested"] != true {
		t.Errorf("the stop through another replica: %s; want stopRequested", stop)
	}
	stopped := waitState(t, b, path, "STOPPED", 10*time.Second)
	took := time.Since(asked)
	t.Logf("a stop through another replica took %v to end the job", took.Round(time.Millisecond))
	// The running replica reads stop requests every second; the rest is
	// ending the job and this test's polling, slow only on a loaded
	// machine, so the bound leaves room for a stall.
	if took > 5*time.Second {
		t.Errorf("the stop took %v, want about a second", took)
	}
	if e, _ := stopped.json["error"].(map[string]any); e["type"] != "stopped" {
		t.Errorf("stopped job: %s", stopped)
	}
	third.must(t, http.StatusConflict, http.MethodPost, path+"/stop", "")
}

// TestKilledReplicaJobsAreInterrupted: the jobs of a replica killed with
// SIGKILL are ended ERROR, type interrupted, by the others once their
// leases lapse.
func TestKilledReplicaJobsAreInterrupted(t *testing.T) {
	c := startCluster(t, 3)
	victim, other := c.replicas[0], c.replicas[1]
	var paths []string
	for range 2 {
		created := victim.must(t, http.StatusCreated, http.MethodPost, "/executions/jobs",
			`{"process":"sleep","data":[{"x":1}],"macros":{"ms":"600000"}}`)
		id, _ := created.json["id"].(string)
		paths = append(paths, "/executions/jobs/"+id)
	}
	for _, p := range paths {
		waitState(t, other, p, "RUNNING", 10*time.Second)
	}
	victim.Kill(t)
	killed := time.Now()
	for _, p := range paths {
		ended := waitState(t, other, p, "ERROR", 4*jobLease)
		if e, _ := ended.json["error"].(map[string]any); e["type"] != "interrupted" {
			t.Errorf("a job of the killed replica: %s; want ERROR interrupted", ended)
		}
	}
	took := time.Since(killed)
	t.Logf("the jobs of the killed replica were ended %v after the kill (lease %v)", took.Round(time.Millisecond), jobLease)
	// A loaded machine may add a few seconds of its own to the lease.
	if took > jobLease+5*time.Second {
		t.Errorf("ending them took %v, want about the lease, %v", took, jobLease)
	}
}

// waitState polls the job at path through r until it is in state want.
func waitState(t *testing.T, r *replica, path, want string, limit time.Duration) answer {
	t.Helper()
	var last answer
	if !testutil.Poll(limit, func() bool {
		a, err := r.do(http.MethodGet, path, "")
		if err != nil || a.status != http.StatusOK {
			return false
		}
		last = a
		return a.json["state"] == want
	}) {
		t.Fatalf("job %s not %s within %v; last seen %s", path, want, limit, last)
	}
	return last
}

// TestTokensAcrossReplicas: the replicas share one signing key set, so an
// idToken one issues is accepted by the others, and all publish the same
// JWKS.
func TestTokensAcrossReplicas(t *testing.T) {
	c := startCluster(t, 3)
	for i, issuer := range c.replicas {
		for j, r := range c.replicas {
			if i == j {
				continue
			}
			req, _ := http.NewRequest(http.MethodGet, r.Base+"/api/v1/queues", nil)
			req.Header.Set("Authorization", "Bearer "+issuer.token)
			res, err := r.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("a token of replica %d on replica %d: %d, want 200", i, j, res.StatusCode)
			}
		}
	}
	jwks := c.replicas[0].Get(t, "/api/rest/jwks.json")
	for j, r := range c.replicas[1:] {
		if got := r.Get(t, "/api/rest/jwks.json"); got != jwks {
			t.Errorf("replica %d publishes another JWKS:\n%s\nwant\n%s", j+1, got, jwks)
		}
	}
}
