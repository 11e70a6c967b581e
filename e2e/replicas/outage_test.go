package replicas

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
)

// TestDatabaseRestart: while PostgreSQL stops and starts again under a
// stream of scoring requests and writes through three replicas, scoring
// answers 200 throughout, a write is either acknowledged or refused with
// 503 store_unavailable and Retry-After, readiness says degraded, no
// acknowledged write is lost, and writes go through again once the
// database is back.
func TestDatabaseRestart(t *testing.T) {
	c := startCluster(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var (
		scored, scoreFailures atomic.Int64
		mu                    sync.Mutex
		acked                 []string // queues whose writes were acknowledged
		refused               int      // writes answered 503 store_unavailable
		afterRestart          atomic.Int64
		restarted             atomic.Bool
		wg                    sync.WaitGroup
	)
	for _, r := range c.replicas {
		wg.Go(func() {
			for ctx.Err() == nil {
				status, err := r.score()
				if err != nil || status != http.StatusOK {
					scoreFailures.Add(1)
					t.Errorf("scoring on %s: %d, %v", r.Base, status, err)
					continue
				}
				scored.Add(1)
			}
		})
	}
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			r := c.replicas[i%3]
			name := fmt.Sprintf("w-%04d", i)
			a, err := r.do(http.MethodPut, "/api/v1/queues/"+name, `{"maxConcurrent":1,"maxWaiting":1}`)
			switch {
			case err != nil:
				t.Errorf("write %s through %s: no answer: %v", name, r.Base, err)
			case a.status == http.StatusCreated:
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
				if restarted.Load() {
					afterRestart.Add(1)
				}
			case a.status == http.StatusServiceUnavailable:
				e, _ := a.json["error"].(map[string]any)
				if e["type"] != "store_unavailable" || a.header.Get("Retry-After") == "" {
					t.Errorf("a refused write: %s, Retry-After %q; want store_unavailable with Retry-After", a, a.header.Get("Retry-After"))
				}
				mu.Lock()
				refused++
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
			default:
				t.Errorf("write %s through %s: %s; want 201 or 503", name, r.Base, a)
			}
		}
	})

	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	began := time.Now()
	// Too few writes are reported below, with the other counts.
	testutil.Poll(30*time.Second, func() bool { return ackedCount() >= 20 })
	before := ackedCount()
	t.Logf("%d writes acknowledged in %v before the database stopped", before, time.Since(began).Round(time.Millisecond))
	c.pg.Stop(t)
	time.Sleep(500 * time.Millisecond)
	for _, r := range c.replicas {
		ready, err := r.do(http.MethodGet, "/health/ready", "")
		if err != nil || ready.status != http.StatusOK || ready.json["status"] != "degraded" {
			t.Errorf("readiness of %s with the database down: %s, %v; want 200 degraded", r.Base, ready, err)
		}
	}
	// Users live in the database too: a new one is refused, not lost.
	user, err := c.replicas[1].do(http.MethodPost, "/api/v1/users", `{"name":"outage-user","password":"a long enough password 1"}`)
	if e, _ := user.json["error"].(map[string]any); err != nil || user.status != http.StatusServiceUnavailable ||
		e["type"] != "store_unavailable" || user.header.Get("Retry-After") == "" {
		t.Errorf("a user created with the database down: %s, %v; want 503 store_unavailable with Retry-After", user, err)
	}
	time.Sleep(2 * time.Second)
	c.pg.Start(t)
	restarted.Store(true)
	testutil.Poll(20*time.Second, func() bool { return afterRestart.Load() >= 30 })
	cancel()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d scoring requests answered 200, %d not; %d writes acknowledged, %d refused while the database was down, %d acknowledged after it came back",
		scored.Load(), scoreFailures.Load(), len(acked), refused, afterRestart.Load())
	if before < 20 {
		t.Errorf("only %d writes went through before the database stopped", before)
	}
	if refused == 0 {
		t.Error("no write was refused: the database was never seen down")
	}
	if afterRestart.Load() < 30 {
		t.Errorf("only %d writes went through after the restart", afterRestart.Load())
	}
	// Every acknowledged write is served by every replica.
	for _, r := range c.replicas {
		deadline := time.Now().Add(5 * time.Second)
		for _, name := range acked {
			var a answer
			var err error
			if !testutil.Poll(time.Until(deadline), func() bool {
				a, err = r.do(http.MethodGet, "/api/v1/queues/"+name, "")
				return err == nil && a.status == http.StatusOK
			}) {
				t.Fatalf("acknowledged queue %s is not served by %s: %s, %v", name, r.Base, a, err)
			}
		}
		ready, err := r.do(http.MethodGet, "/health/ready", "")
		if err != nil || ready.json["status"] != "ready" {
			t.Errorf("readiness of %s after the restart: %s, %v", r.Base, ready, err)
		}
	}
}
