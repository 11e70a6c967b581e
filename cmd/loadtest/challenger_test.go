package main

import (
	"io"
	"strings"
	"testing"
)

// TestParseChallenger: -challenger takes "none", the default, and
// "shadow", keeps the large request, and takes the admin password of a
// running server.
func TestParseChallenger(t *testing.T) {
	tests := []struct {
		args           []string
		wantChallenger string
	}{
		{nil, ""},
		{[]string{"-challenger", "none"}, ""},
		{[]string{"-challenger", "shadow"}, challengeShadow},
		{[]string{"-challenger", "shadow", "-server-url", "http://b", "-admin-password", "secret"}, challengeShadow},
	}
	for _, tt := range tests {
		c, err := parseConfig(tt.args, io.Discard)
		if err != nil || c.Challenger != tt.wantChallenger || c.Monitor || c.Large != 10_000 {
			t.Errorf("parseConfig(%q): -challenger %q, -monitor %v, -large %d, %v; want %q, false and 10000", tt.args, c.Challenger, c.Monitor, c.Large, err, tt.wantChallenger)
		}
	}
}

// checkShadowed checks what -challenger shadow adds to the report of a
// run of TestRunPaired: the challenger, a second version of the
// champion's model, offered the rows of every request to shadowed and
// agreeing with the champion, its own file, on every row it compared.
func checkShadowed(t *testing.T, rep *report) {
	p := rep.Pair
	if p.Challenger != challengeShadow || p.ChallengerModel != strings.TrimSuffix(p.Model, "@1")+"@2" || p.Reference != nil || p.Drift != nil {
		t.Errorf("challenger %q of %s, champion %s, reference %v, drift %v; want a shadow of version 2 and no drift", p.Challenger, p.ChallengerModel, p.Model, p.Reference, p.Drift)
	}
	// Every request to shadowed offered the shadow its row: at least the
	// measured ones, warm-up aside.
	if w := rep.Ratios[0].Shadow; w == nil || w.Compared+w.Skipped < uint64(rep.Scenarios[0].Requests) || w.Agreed != w.Compared || w.Errors != 0 {
		t.Errorf("shadow over the 1-row runs: %+v, want the rows of at least %d requests, all agreed", w, rep.Scenarios[0].Requests)
	}
	// Two unmeasured requests and the measured ones each round; the last
	// shadow may still be running when the figures are read.
	offered := uint64(pairRounds * (2 + pairLargeRequests) * pairLargeRows)
	if w := p.Large.Shadow; w == nil || w.Compared+w.Skipped > offered || w.Compared+w.Skipped < offered-pairLargeRows || w.Agreed != w.Compared || w.Errors != 0 {
		t.Errorf("shadow over the large requests: %+v, want %d rows offered, all agreed", w, offered)
	}
}
