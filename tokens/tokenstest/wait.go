package tokenstest

import (
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/image/imagetest"
)

// Propagation is how soon a change committed through one handle of a
// shared store must be seen through another: the promise a store of
// several replicas makes.
const Propagation = imagetest.Propagation

// epoch is when the suites' clocks start.
var epoch = time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)

// waitFor polls cond until it holds, failing after Propagation.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Propagation)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", Propagation, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
