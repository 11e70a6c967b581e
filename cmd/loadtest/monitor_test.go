package main

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseMonitor: -monitor keeps the large request and takes the
// admin password of a running server.
func TestParseMonitor(t *testing.T) {
	for _, args := range [][]string{
		{"-monitor"},
		{"-monitor", "-rows", "1", "-server-url", "http://b", "-admin-password", "secret"},
	} {
		c, err := parseConfig(args, io.Discard)
		if err != nil || !c.Monitor || c.Challenger != "" || c.Large != 10_000 {
			t.Errorf("parseConfig(%q): -monitor %v, -challenger %q, -large %d, %v; want true, none and 10000", args, c.Monitor, c.Challenger, c.Large, err)
		}
	}
}

// checkMonitored checks what -monitor adds to the report of a run of
// TestRunPaired: the reference the demo's 150 iris rows make, of the
// model's four inputs and its prediction, and a monitor that counted at
// least every row the measured requests to monitored sent, in the
// default window, while unmonitored's counted none (else the run fails).
func checkMonitored(t *testing.T, rep *report) {
	p := rep.Pair
	if p.Challenger != "" || p.ChallengerModel != "" || rep.Ratios[0].Shadow != nil || p.Large.Shadow != nil {
		t.Errorf("challenger %q of %s, shadow %v and %v; want none", p.Challenger, p.ChallengerModel, rep.Ratios[0].Shadow, p.Large.Shadow)
	}
	want := &driftReference{Rows: 150, Features: []string{"sepal_length", "sepal_width", "petal_length", "petal_width"}, Prediction: p.Reference.Prediction}
	if diff := cmp.Diff(want, p.Reference); diff != "" || p.Reference.Prediction == "" {
		t.Errorf("reference (-want +got), with a prediction:\n%s", diff)
	}
	d := p.Drift
	if d == nil {
		t.Fatal("no drift read after the run")
	}
	least := rep.Scenarios[0].Requests + p.Large.Servers[0].Requests*pairLargeRows
	if d.Rows < least || d.Window != "1h" || d.MaxRows != 100_000 || d.Features != 4 || !d.Prediction {
		t.Errorf("drift %+v; want at least %d rows in the default window, 1h and 100000, of 4 inputs and the prediction", d, least)
	}
}
